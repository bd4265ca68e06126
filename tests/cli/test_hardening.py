"""Issue 20's attack, class by class, one table per class: files written or removed where they
must not be, damaged runs read as shorter ones, numbers that are wrong without a word,
tracebacks from bad files and policies, and unbounded resources. Each refusal is one line on
stderr with exit status 2 from the CLI (a typed exception from Python) and leaves every file
as it was."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, ROOT, interruptible

import psro
import psro.reports
from psro.cli import main


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A finished exact Kuhn run with a report in its report/ folder, and a PPO run."""
    root = tmp_path_factory.mktemp("made")
    psro.PSRO("kuhn_poker", "exact", out=root / "run").run(iterations=6)
    psro.reports.write_report([root / "run"], root / "run" / "report")
    shutil.copytree(DATA / "format2_ppo", root / "ppo")
    psro.PSRO.resume(root / "ppo").writer.release()  # converted to records
    return root


@pytest.fixture
def sandbox(tmp_path, made, monkeypatch) -> Path:
    for name in ("run", "ppo"):
        shutil.copytree(made / name, tmp_path / name, symlinks=True)
    (tmp_path / "outside.txt").write_text("someone's file\n")
    policy = psro.exploitability("kuhn_poker", _uniform_kuhn()).best_response_mapping(0)
    (tmp_path / "policy.json").write_text(json.dumps([policy, _uniform_kuhn()[1]]))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _uniform_kuhn() -> list[dict]:
    tree = psro.game_tree("kuhn_poker")
    return [{key: {str(a): 1 / len(legal) for a in legal}
             for key, legal in zip(tree.players[p].keys, tree.players[p].legal, strict=True)}
            for p in range(2)]


def _snapshot(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.name == ".lock":
            continue
        rel = str(path.relative_to(root))
        if path.is_symlink():
            out[rel] = f"link:{os.readlink(path)}"
        elif path.is_file():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            out[rel] = "dir"
    return out


def _refused(argv, match, capsys) -> None:
    rc = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2, err
    assert len(err) == 1 and "Traceback" not in err[0], err
    assert match in err[0], err


# -- files written or removed where they must not be ---------------------------------------
def _plant(rel: str, content: str = "mine\n"):
    def plant(root: Path) -> None:
        (root / rel).write_text(content)
    return plant


def _link(rel: str, target: str):
    def plant(root: Path) -> None:
        path = root / rel
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        path.symlink_to(root / target)
    return plant


FILE_CASES = [
    ("user file in report/", _plant("run/report/notes.txt"),
     ["run", "--game", "rps", "--out", "run", "--overwrite"], "report/notes.txt"),
    ("user file in iterations/", _plant("run/iterations/notes.txt"),
     ["run", "--game", "rps", "--out", "run", "--overwrite"], "iterations/notes.txt"),
    ("user file in networks/", _plant("ppo/networks/player9_member9.txt"),
     ["run", "--game", "rps", "--out", "ppo", "--overwrite"], "networks/player9_member9.txt"),
    ("networks/ a link", _link("ppo/networks", "outside.txt"),
     ["run", "--game", "rps", "--out", "ppo", "--overwrite"], "holds files a run does not"),
    ("link at report.md", _link("run/report/report.md", "outside.txt"),
     ["report", "run"], "it holds report.md, which the toolkit did not write there"),
    ("foreign file in --out", lambda r: None, ["report", "run", "--out", "ppo"],
     "which the toolkit did not write there"),
    ("best responses onto a device", lambda r: None,
     ["exploitability", "--game", "kuhn_poker", "--policy", "policy.json",
      "--save-best-responses", "/dev/null"], "/dev/null is not a regular file"),
    ("best responses onto the input", lambda r: None,
     ["exploitability", "--game", "kuhn_poker", "--policy", "policy.json",
      "--save-best-responses", "policy.json", "--overwrite"], "is also an input"),
    ("best responses onto a file", lambda r: None,
     ["exploitability", "--game", "kuhn_poker", "--policy", "policy.json",
      "--save-best-responses", "outside.txt"], "already exists (--overwrite replaces it)"),
    # --overwrite replaced the run's own config.json, and the run could no longer be read
    ("best responses onto a run's config", lambda r: None,
     ["exploitability", "--run", "run", "--save-best-responses", "run/config.json",
      "--overwrite"], "is among the files of the run directory run"),
    ("best responses into a run's networks/", lambda r: None,
     ["exploitability", "--game", "kuhn_poker", "--policy", "policy.json",
      "--save-best-responses", "ppo/networks/br.json"], "the run directory ppo"),
    ("best responses through a link", _link("br.json", "outside.txt"),
     ["exploitability", "--game", "kuhn_poker", "--policy", "policy.json",
      "--save-best-responses", "br.json", "--overwrite"], "is a symbolic link"),
    ("iterations/ a link on resume", _link("run/iterations", "ppo/iterations"),
     ["run", "--resume", "--out", "run", "--iterations", "8"], "is a symbolic link"),
    ("a log replaced by a link", _link("run/metrics.csv", "outside.txt"),
     ["run", "--resume", "--out", "run", "--iterations", "8"], "not a regular file"),
]


@pytest.mark.parametrize("case,plant,argv,match", FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_writers_never_replace_what_the_toolkit_did_not_write(case, plant, argv, match,
                                                              sandbox, capsys):
    plant(sandbox)
    before = _snapshot(sandbox)
    _refused(argv, match, capsys)
    assert _snapshot(sandbox) == before


def test_what_the_toolkit_wrote_is_replaced_and_said(sandbox, capsys):
    assert main(["run", "--game", "rps", "--iterations", "1", "--out", "run", "--overwrite",
                 "--quiet"]) == 0
    said = capsys.readouterr().out
    assert "--overwrite removed the earlier run in run: config.json" in said
    assert "iterations/ (7 files)" in said and "report/ (" in said
    assert psro.load_run("run").config.game == "rps"
    assert main(["exploitability", "--game", "kuhn_poker", "--policy", "policy.json",
                 "--save-best-responses", "br.json"]) == 0
    assert main(["exploitability", "--game", "kuhn_poker", "--policy", "policy.json",
                 "--save-best-responses", "br.json", "--overwrite"]) == 0
    assert len(json.loads(Path("br.json").read_text())) == 2


def test_a_report_replaces_its_own_files_only_and_is_locked(sandbox, capsys):
    from psro.storage.lock import DirectoryLock

    out = sandbox / "rep"
    psro.reports.write_report(["run", "ppo"], out)
    assert (out / "run1_mixtures.png").is_file()
    psro.reports.write_report(["run"], out)  # a smaller report: the other run's files go
    assert not (out / "run1_mixtures.png").exists() and (out / "run0_mixtures.png").is_file()
    held = DirectoryLock(out, holder="report")
    held.acquire()
    before = _snapshot(sandbox)
    _refused(["report", "run", "--out", "rep"], "rep is in use by another report", capsys)
    assert _snapshot(sandbox) == before
    held.release()


# -- a damaged run is never read as a shorter one ------------------------------------------
def _remove(rel: str):
    return lambda root: (root / rel).unlink()


def _cut(rel: str, keep: int):
    def cut(root: Path) -> None:
        data = (root / rel).read_bytes()
        (root / rel).write_bytes(data[:keep])
    return cut


DAMAGE = [
    ("a record missing in the middle", _remove("run/iterations/000003.npz"),
     "has records up to iteration 6 but not those of iteration(s) 3"),
    ("metrics.jsonl cut", _cut("run/metrics.jsonl", 100),
     "metrics.jsonl holds 100 bytes where the records vouch for"),
    ("mixtures.jsonl cut", _cut("run/mixtures.jsonl", 10), "mixtures.jsonl holds 10 bytes"),
]


@pytest.mark.parametrize("case,damage,match", DAMAGE, ids=[c[0] for c in DAMAGE])
def test_a_damaged_run_is_refused_by_every_reader(case, damage, match, sandbox, capsys):
    damage(sandbox)
    before = _snapshot(sandbox)
    with pytest.raises(psro.RunDirectoryError, match=re.escape(match)):
        psro.load_run("run")
    _refused(["report", "run", "--out", "rep"], match, capsys)
    assert _snapshot(sandbox) == before
    if "record" in case:  # a resume may only repair what the records vouch for
        _refused(["run", "--resume", "--out", "run", "--iterations", "8"], match, capsys)
        assert _snapshot(sandbox) == before
    else:  # the records vouch for the logs: a resume rebuilds them
        assert main(["run", "--resume", "--out", "run", "--iterations", "7", "--quiet"]) == 0
        assert len(psro.load_run("run").metrics) == 8
        rows = (sandbox / "run" / "metrics.jsonl").read_text().splitlines()
        assert [json.loads(r)["iteration"] for r in rows] == list(range(8))


@pytest.mark.parametrize("damage", [_remove("run/metrics.csv"), _cut("run/metrics.csv", 300)],
                         ids=["removed", "cut"])
def test_metrics_csv_a_table_of_the_records_is_rebuilt_by_readers(damage, sandbox):
    whole = (sandbox / "run" / "metrics.csv").read_bytes()
    damage(sandbox)
    assert len(psro.load_run("run").metrics) == 7
    assert (sandbox / "run" / "metrics.csv").read_bytes() == whole


def test_an_interrupted_conversion_leaves_the_old_run_as_it_was(tmp_path, monkeypatch):
    import psro.storage.checkpoint.writer as writer

    run = tmp_path / "legacy"
    shutil.copytree(DATA / "format2_ppo", run)
    logs = {name: (run / name).read_bytes() for name in ("metrics.jsonl", "metrics.csv")}
    real = writer.atomic_write_text

    def killed(path, text):
        if Path(path).name == "run.json":
            raise KeyboardInterrupt  # the kill arrives just before the conversion ends
        real(path, text)

    monkeypatch.setattr(writer, "atomic_write_text", killed)
    with pytest.raises(KeyboardInterrupt):
        psro.PSRO.resume(run)
    monkeypatch.setattr(writer, "atomic_write_text", real)
    assert {name: (run / name).read_bytes() for name in logs} == logs
    loaded = psro.load_run(run)
    assert len(loaded.metrics) == len(logs["metrics.jsonl"].splitlines())


def test_a_full_disk_leaves_no_row_without_its_record(sandbox, monkeypatch, capsys):
    import psro.storage.checkpoint.writer as writer

    def no_space(path, write):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer, "atomic_write_bytes", no_space)
    assert main(["run", "--resume", "--out", "run", "--iterations", "8", "--quiet"]) == 2
    capsys.readouterr()
    csv_rows = (sandbox / "run" / "metrics.csv").read_text().splitlines()
    assert len(csv_rows) == 1 + 7  # header and iterations 0-6: none for the failed 7
    assert psro.load_run("run").iteration == 6


# -- numbers that would be wrong without a word --------------------------------------------
def test_a_network_plays_only_the_seat_it_was_trained_for(sandbox, capsys):
    networks = sandbox / "ppo" / "networks"
    p0, p1 = str(networks / "player0_member1.pt"), str(networks / "player1_member1.pt")
    _refused(["exploitability", "--game", "kuhn_poker", "--policy", p1, "--policy", p0],
             "the toolkit network given for player 0 was trained as player 1", capsys)
    _refused(["exploitability", "--game", "kuhn_poker", "--policy", p0],
             "the toolkit network given for player 1 was trained as player 0", capsys)
    meta = json.loads((networks / "player1_member1.json").read_text())
    (networks / "player1_member1.json").write_text(json.dumps({**meta, "player": 7}))
    _refused(["exploitability", "--game", "kuhn_poker", "--policy", p0, "--policy", p1],
             "trained as player 7, which this 2-player game does not have", capsys)
    (networks / "player1_member1.json").write_text(json.dumps(meta))
    _refused(["exploitability", "--game", "leduc_poker", "--policy", p0, "--policy", p1],
             "takes observations of size 11", capsys)
    assert main(["exploitability", "--game", "kuhn_poker", "--policy", p0,
                 "--policy", str(networks / "player1_member2.pt")]) == 0


def test_run_returns_rows_that_later_calls_do_not_change():
    run = psro.PSRO("kuhn_poker", "exact")
    rows = run.run(iterations=2)
    first = json.dumps(rows)
    run.run(iterations=4)
    assert json.dumps(rows) == first and len(rows) == 3


@pytest.mark.parametrize("game", ["rps", "goofspiel(num_cards=4,imp_info=True)",
                                  "blotto(coins=4,fields=2)"])
def test_openspiel_exploitability_reads_a_meta_policy_of_a_simultaneous_game(game, tmp_path):
    import pyspiel
    from open_spiel.python.algorithms import exploitability

    import games

    rows = psro.PSRO(game, "exact", out=tmp_path / "r").run(iterations=1)
    policy = psro.load_run(tmp_path / "r").meta_policy()
    turn_based = pyspiel.convert_to_turn_based(games.load(game).pyspiel_game)
    assert exploitability.nash_conv(turn_based, policy) == pytest.approx(rows[-1]["nash_conv"],
                                                                        abs=1e-12)


def test_psro_solve_reads_payoff_files_as_they_are_and_prints_in_full(tmp_path, capsys):
    np.savez(tmp_path / "one.npz", x=np.array([1.0, 2.0]))
    _refused(["solve", str(tmp_path / "one.npz")], "must be a 2-D matrix", capsys)
    np.savez(tmp_path / "two.npz", a=np.ones(2), b=np.ones(2))
    _refused(["solve", str(tmp_path / "two.npz")], "each must have 2 axes", capsys)
    np.save(tmp_path / "wide.npy", np.zeros((1, 1200)))
    assert main(["solve", str(tmp_path / "wide.npy")]) == 0
    printed = capsys.readouterr().out
    mixture = printed.split("player 1 mixture: ")[1].split("]")[0]
    assert "..." not in printed and mixture.count(",") == 1199
    (tmp_path / "big.csv").write_text("0\n" * 2001)
    _refused(["solve", str(tmp_path / "big.csv")], "2,001 x 1 matrix is larger than psro "
                                                   "solve takes (at most 2,000", capsys)


# -- tracebacks: bad files, bad policies, the file system ----------------------------------
DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "9" * 5000


def _write(rel: str, text: str):
    def write(root: Path) -> None:
        (root / rel).write_text(text)
    return write


def _meta(rel: str, key: str, value: str):
    def write(root: Path) -> None:
        meta = json.loads((root / rel).read_text())
        text = json.dumps({**meta, key: "@@"}).replace('"@@"', value)
        (root / rel).write_text(text)
    return write


READERS = [
    ("policy nested deeply", _write("p.json", DEEP),
     ["exploitability", "--game", "kuhn_poker", "--policy", "p.json"], "nested too deeply"),
    ("policy huge integer", _write("p.json", HUGE),
     ["exploitability", "--game", "kuhn_poker", "--policy", "p.json"], "4300"),
    ("policy a folder", lambda r: (r / "p.json").mkdir(),
     ["exploitability", "--game", "kuhn_poker", "--policy", "p.json"], "it is a directory"),
    ("config.json nested deeply", _write("run/config.json", DEEP),
     ["report", "run", "--out", "rep"], "nested too deeply"),
    ("config.json huge integer", _write("run/config.json", f'{{"seed": {HUGE}}}'),
     ["run", "--resume", "--out", "run"], "4300"),
    ("config.json enormous seed", _write("run/config.json", '{"seed": ' + "9" * 40 + "}"),
     ["run", "--resume", "--out", "run"], "seed must be an integer from 0 to"),
    ("run.json nested deeply", _write("run/run.json", DEEP), ["report", "run", "--out", "rep"],
     "nested too deeply"),
    ("--config nested deeply", _write("c.toml", "a = " + "[" * 5000 + "]" * 5000),
     ["run", "--config", "c.toml", "--out", "X"], "nested too deeply"),
    ("--config huge integer", _write("c.toml", f"seed = {HUGE}"),
     ["run", "--config", "c.toml", "--out", "X"], "4300"),
    ("network metadata nested deeply", _write("ppo/networks/player0_member1.json", DEEP),
     ["exploitability", "--game", "kuhn_poker", "--policy",
      "ppo/networks/player0_member1.pt"], "nested too deeply"),
    ("network metadata huge obs_shape",
     _meta("ppo/networks/player0_member1.json", "obs_shape", "[100000, 100000, 100000]"),
     ["exploitability", "--game", "kuhn_poker", "--policy",
      "ppo/networks/player0_member1.pt"], "does not describe the weights"),
    ("network metadata huge num_actions",
     _meta("ppo/networks/player0_member1.json", "num_actions", "10000000000"),
     ["exploitability", "--game", "kuhn_poker", "--policy",
      "ppo/networks/player0_member1.pt"], "does not describe the weights"),
    ("network metadata huge integer",
     _meta("ppo/networks/player0_member1.json", "num_actions", HUGE),
     ["exploitability", "--game", "kuhn_poker", "--policy",
      "ppo/networks/player0_member1.pt"], "4300"),
    ("probability true", _write("p.json", '{"0": {"0": true, "1": 0}}'),
     ["exploitability", "--game", "kuhn_poker", "--policy", "p.json"],
     "is not action id: probability"),
    ("probability as text", _write("p.json", '{"0": {"0": "0.5", "1": "0.5"}}'),
     ["exploitability", "--game", "kuhn_poker", "--policy", "p.json"],
     "is not action id: probability"),
    ("three policies for two players", _write("p.json", "[{}, {}, {}]"),
     ["exploitability", "--game", "kuhn_poker", "--policy", "p.json"],
     "3 policies were given for a game of 2 players"),
    ("--max-nodes negative", lambda r: None,
     ["exploitability", "--game", "kuhn_poker", "--policy", "policy.json", "--max-nodes",
      "-5"], "--max-nodes must be a positive integer; got -5"),
    ("--save-best-responses on a game too large", lambda r: None,
     ["exploitability", "--game", "leduc_poker", "--policy", "policy.json", "--max-nodes",
      "100", "--save-best-responses", "b.json"], "--save-best-responses needs the walked tree"),
    ("a name the system refuses", lambda r: None,
     ["run", "--game", "kuhn_poker", "--out", "x" * 300], "File name too long"),
    ("a report name the system refuses", lambda r: None,
     ["report", "run", "--out", "y" * 300], "File name too long"),
    ("best responses under a file", lambda r: None,
     ["exploitability", "--game", "kuhn_poker", "--policy", "policy.json",
      "--save-best-responses", "outside.txt/b.json"], "Not a directory"),
]


@pytest.mark.parametrize("case,damage,argv,match", READERS, ids=[c[0] for c in READERS])
def test_bad_files_and_inputs_are_one_line_everywhere(case, damage, argv, match, sandbox,
                                                      capsys):
    damage(sandbox)
    before = _snapshot(sandbox)
    _refused(argv, match, capsys)
    assert _snapshot(sandbox) == before


@pytest.mark.parametrize("writer,argv", [
    ("psro.storage.checkpoint.writer.atomic_write_bytes", ["run", "--resume", "--out", "run",
                                                   "--iterations", "8", "--quiet"]),
    ("psro.reports.atomic_write_text", ["report", "run", "--out", "rep"]),
    ("psro.evaluation.exploitability.atomic_write_text",
     ["exploitability", "--game", "kuhn_poker", "--policy", "policy.json",
      "--save-best-responses", "b.json"]),
])
@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC, errno.EISDIR])
def test_file_system_errors_of_every_writer_are_one_line(writer, argv, code, sandbox,
                                                         monkeypatch, capsys):
    module, name = writer.rsplit(".", 1)

    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(sys.modules[module] if module in sys.modules else
                        __import__(module, fromlist=[name]), name, refuse)
    _refused(argv, os.strerror(code), capsys)


def test_policies_that_do_not_fit_the_game_are_one_line():
    import torch

    class Pair(torch.nn.Module):
        def forward(self, obs):
            return obs[:, :3], obs[:, :3]

    with pytest.raises(psro.PolicyError, match="returned tuple; expected a tensor"):
        psro.exploitability("kuhn_poker", Pair())
    wrong = torch.nn.Linear(5, 2)  # Kuhn's information-state tensors have 11 numbers
    with pytest.raises(psro.PolicyError) as info:
        psro.exploitability("kuhn_poker", wrong)
    assert "\n" not in str(info.value) and "failed on a batch of shape (6, 11)" in str(info.value)
    with pytest.raises(psro.PolicyError, match="policies were given for a game of 2"):
        psro.exploitability("kuhn_poker", [wrong])
    with pytest.raises(psro.PolicyError, match="cannot read a policy from int"):
        psro.exploitability("kuhn_poker", 5)


# -- resources -----------------------------------------------------------------------------
def test_worker_counts_are_bounded(capsys):
    _refused(["run", "--game", "kuhn_poker", "--backend", "processes", "--workers", "100000",
              "--out", "X"], "workers must be at most", capsys)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_workers_end_with_their_driver_however_it_ends(how, tmp_path):
    """Best responses of 2M env steps (minutes each): a driver stopped while they train ends
    at once (it waited for them, 13 s with 200,000 steps), with its workers, and keeps its
    run directory."""
    driver = subprocess.Popen(
        [sys.executable, "-m", "psro.cli", "run", "--game", "kuhn_poker", "--oracle", "ppo",
         "--backend", "processes", "--workers", "2", "--ppo", "env_steps=2000000",
         "--out", str(tmp_path / "r")], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
    deadline = time.time() + 120
    workers = []
    while time.time() < deadline and len(workers) < 2:
        time.sleep(0.5)
        workers = [p for p in _children(driver.pid)
                   if "spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes().decode()]
    assert len(workers) >= 2, "the worker processes did not start"
    # iteration 0 is written before the first best responses are handed to the workers: once
    # its record exists (however busy the machine), training is under way
    record = tmp_path / "r" / "iterations" / "000000.npz"
    while time.time() < deadline and not record.is_file() and driver.poll() is None:
        time.sleep(0.1)
    assert record.is_file(), "iteration 0 was not written"
    driver.send_signal(how)
    try:
        driver.wait(timeout=30)
    finally:
        if driver.poll() is None:  # it did not end: end it, not leave it training for minutes
            driver.kill()
    deadline = time.time() + 15
    while time.time() < deadline and any(Path(f"/proc/{p}").exists() for p in workers):
        time.sleep(0.25)
    alive = [p for p in workers if Path(f"/proc/{p}").exists()
             and "Z" not in (Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0])]
    assert not alive, f"workers {alive} outlived their driver"
    assert (tmp_path / "r" / "config.json").is_file()
    said = driver.stderr.read()
    if how == signal.SIGTERM:
        assert driver.returncode == 128 + signal.SIGTERM
        assert "stopped by SIGTERM; the last checkpoint is kept" in said
    if how == signal.SIGINT:
        assert driver.returncode == 130
        assert "interrupted; the last checkpoint is kept" in said
    if how != signal.SIGKILL:
        assert "Traceback" not in said

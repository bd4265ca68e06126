"""The loop's parts: a user-registered oracle by name (Python and TOML), one-way imports, no
hidden global state, run directories of earlier formats, the README's extension examples."""

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import psro
import solvers
from psro.backends import Task
from psro.cli import main
from psro.extensive_form.policies import TabularPolicy
from psro.oracles import Response

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
TIMING = {"wall_time_s", "oracle_s", "evaluation_s", "meta_solver_s", "exploitability_s",
          "write_s"}


def _numbers(rows):
    """The numbers of rows, without timings and without the responses' gains (a column that
    runs of formats 1 and 2 predate)."""
    return [{k: v for k, v in row.items() if k not in TIMING
             and not k.startswith("response_gain_p")} for row in rows]


# -- an oracle defined outside the package --------------------------------------------------
def _best_response(tree, player, plans):
    return tree.best_response(player, plans)


class RecentAverageResponse:
    """Best response to the uniform average of the opponents' ``recent`` newest members (all of
    them when 0): fictitious play's oracle. With ``recent = 0`` and the ``uniform`` meta-solver
    it answers what the built-in exact oracle answers, by another route."""

    name = "recent_average"

    def __init__(self, context):
        options = dict(context.config.oracle_options)
        self.recent = options.pop("recent", 0)
        if options or not isinstance(self.recent, int) or self.recent < 0:
            raise psro.ConfigError(f"recent_average takes recent (an integer >= 0); got "
                                   f"{context.config.oracle_options}")
        self.tree = context.require_tree("recent_average")

    def tasks(self, iteration, populations, mixtures):
        plans = []
        for pop in populations:
            members = pop[-self.recent:] if self.recent else pop
            plans.append(np.mean([m.realization_plan(self.tree) for m in members], axis=0))
        return [Task(_best_response, (self.tree, p, plans)) for p in range(len(populations))]

    def responses(self, iteration, results):
        return [Response(TabularPolicy(p, probs, name=f"avg_p{p}_it{iteration}",
                                       metadata={"iteration": iteration}))
                for p, (probs, _) in enumerate(results)]


if "recent_average" not in psro.oracles.names():
    psro.oracles.register("recent_average", RecentAverageResponse)


def test_registered_oracle_runs_by_name_from_python_and_toml(tmp_path):
    ours = psro.PSRO("leduc_poker", "recent_average", "uniform").run(iterations=6)
    builtin = psro.PSRO("leduc_poker", "exact", "uniform").run(iterations=6)
    assert _numbers(ours) == _numbers(builtin)  # two routes to fictitious play agree
    config = tmp_path / "run.toml"
    config.write_text('game = "leduc_poker"\noracle = "recent_average"\nmeta_solver = "nash"\n'
                      'iterations = 5\n[oracle_options]\nrecent = 2\n')
    assert main(["run", "--config", str(config), "--out", str(tmp_path / "r"), "--quiet"]) == 0
    loaded = psro.load_run(tmp_path / "r")
    api = psro.PSRO(config=psro.RunConfig.from_toml(config)).run()
    assert _numbers(loaded.metrics) == _numbers(api)
    assert loaded.population[1][-1].name == "avg_p1_it5"
    resumed = psro.PSRO.resume(tmp_path / "r")
    assert _numbers(resumed.run(iterations=7)[:6]) == _numbers(api)


def test_registry_errors():
    with pytest.raises(psro.ConfigError, match="unknown oracle 'dqn'; accepted: exact, ppo"):
        psro.PSRO("kuhn_poker", "dqn")
    with pytest.raises(psro.ConfigError, match="recent_average takes recent"):
        psro.PSRO("kuhn_poker", "recent_average", oracle_options={"recnt": 1})
    with pytest.raises(psro.ConfigError, match="already registered"):
        psro.oracles.register("exact", RecentAverageResponse)
    with pytest.raises(psro.ConfigError, match="takes no options"):
        psro.PSRO("kuhn_poker", "exact", oracle_options={"x": 1})


# -- one configuration surface --------------------------------------------------------------
def test_python_toml_and_flags_merge_option_tables_the_same_way(tmp_path, capsys):
    config = tmp_path / "c.toml"
    config.write_text('game = "biased_rps"\nmeta_solver = "prd"\niterations = 2\n'
                      '[meta_solver_options]\niterations = 300\nstep = 0.1\n')
    base = psro.RunConfig.from_toml(config)
    merged = base.merged({"meta_solver_options": {"step": 0.2}, "seed": 3})
    assert merged.meta_solver_options == {"iterations": 300, "step": 0.2} and merged.seed == 3
    run = psro.PSRO(config=base, meta_solver_options={"step": 0.2}, seed=3)
    in_full = {**solvers.options("prd"), "iterations": 300, "step": 0.2}  # defaults written
    assert run.config.meta_solver_options == in_full
    assert main(["run", "--config", str(config), "--meta-solver-option", "step=0.2",
                 "--seed", "3", "--out", str(tmp_path / "r"), "--quiet"]) == 0
    saved = psro.load_run(tmp_path / "r").config
    assert saved.meta_solver_options == in_full and saved.seed == 3
    with pytest.raises(psro.ConfigError, match="unknown setting"):
        psro.PSRO("kuhn_poker", iteratons=3)


# -- errors ---------------------------------------------------------------------------------
def test_toolkit_errors_share_one_base_and_bugs_keep_their_traceback(tmp_path, capsys,
                                                                     monkeypatch):
    import games
    import solvers

    for error in (psro.ConfigError, psro.RunDirectoryError, psro.MetaSolverError,
                  psro.GameTooLargeError, games.GameError, solvers.PayoffError,
                  solvers.SolverError, solvers.OptionError):
        assert issubclass(error, psro.ToolkitError)
    assert not issubclass(psro.MetaSolverError, psro.ConfigError)

    def bug(*args, **kwargs):
        raise ValueError("a bug, not an input")

    monkeypatch.setattr(psro.loop.PSRO, "run", bug)
    with pytest.raises(ValueError, match="a bug"):
        main(["run", "--game", "kuhn_poker", "--out", str(tmp_path / "x")])


def test_meta_solver_failure_is_a_meta_solver_error(monkeypatch):
    import solvers

    run = psro.PSRO("kuhn_poker", "exact", "nash")
    run.run(iterations=1)

    def failing(payoffs):
        raise solvers.SolverError("HiGHS could not solve the zero-sum LP")

    run.parts.algorithm.meta_solver = failing  # the algorithm calls the meta-solver
    with pytest.raises(psro.MetaSolverError, match="failed at iteration 2: HiGHS"):
        run.step()


def test_solve_reports_a_solver_failure_in_one_line(tmp_path, capsys, monkeypatch):
    import solvers

    def failing(payoffs, method="auto"):
        raise solvers.SolverError("Lemke-Howson did not finish within 5 pivots")

    monkeypatch.setattr(solvers.registry, "nash", failing)
    (tmp_path / "g.csv").write_text("1,0\n0,1\n")
    assert main(["solve", str(tmp_path / "g.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did not finish within 5 pivots" in err[0]


# -- no hidden global state -----------------------------------------------------------------
def test_training_leaves_torch_threads_and_random_state_as_they_were():
    threads = torch.get_num_threads()
    torch.manual_seed(1234)
    expected = torch.rand(3)
    torch.manual_seed(1234)
    config = psro.RunConfig(game="kuhn_poker", oracle="ppo",
                            ppo={"env_steps": 600, "num_envs": 8, "steps_per_update": 128})
    psro.PSRO(config=config).run(iterations=1)
    assert torch.get_num_threads() == threads
    assert torch.equal(torch.rand(3), expected)


def test_recursion_limit_restored_and_report_import_keeps_the_plotting_backend():
    limit = sys.getrecursionlimit()
    psro.SequenceFormGame(psro.PSRO("kuhn_poker").tree.game)
    assert sys.getrecursionlimit() == limit
    code = ("import matplotlib; matplotlib.use('svg'); import psro.reports; "
            "print(matplotlib.get_backend())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "svg", out.stderr


# -- one-way imports ------------------------------------------------------------------------
LAYERS = ["games", "psro.evaluation", "psro.oracles", "psro.loop", "psro.cli"]


def _imports(package: str, lazy: bool = True) -> dict[str, set[str]]:
    """Module -> the toolkit modules it imports (at module level, and inside functions when
    ``lazy``)."""
    graph = {}
    for file in (ROOT / package).rglob("*.py"):
        module = ".".join(file.relative_to(ROOT).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        found = set()
        tree = ast.parse(file.read_text())
        for node in ast.walk(tree) if lazy else tree.body:
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
                found |= {f"{node.module}.{a.name}" for a in node.names}
        graph[module] = {m for m in found if m.split(".")[0] in ("psro", "games", "solvers")}
    return graph


def test_imports_go_one_way():
    graph = {**_imports("psro"), **_imports("games"), **_imports("solvers")}
    known = set(graph)
    graph = {m: {d for d in deps if d in known and d != m} for m, deps in graph.items()}

    def rank(module):  # position in games -> evaluation -> oracles -> loop -> cli
        for i, layer in reversed(list(enumerate(LAYERS))):
            if module == layer or module.startswith(layer + "."):
                return i
        return None

    for module, deps in graph.items():
        if module.startswith("solvers"):
            assert all(d.startswith("solvers") for d in deps), (module, deps)
        if module.startswith("games"):
            assert all(not d.startswith("psro") for d in deps), (module, deps)
        for dep in deps:
            if rank(module) is not None and rank(dep) is not None:
                assert rank(dep) <= rank(module), f"{module} imports {dep}"
    # no cycles at import time (packages' __init__ files only re-export; imports inside
    # functions load a registry's built-in parts when they are first used)
    inits = {"psro", "games", "solvers"}
    eager = {**_imports("psro", lazy=False), **_imports("games", lazy=False),
             **_imports("solvers", lazy=False)}
    inner = {m: {d for d in deps if d in known and d not in inits and d != m}
             for m, deps in eager.items() if m not in inits}
    state: dict[str, int] = {}

    def visit(module, path):
        state[module] = 1
        for dep in inner.get(module, ()):
            assert state.get(dep) != 1, " -> ".join(path + [dep])
            if dep not in state:
                visit(dep, path + [dep])
        state[module] = 2

    for module in inner:
        if module not in state:
            visit(module, [module])


def test_small_modules_and_functions():
    for file in (ROOT / "psro").rglob("*.py"):
        lines = file.read_text().splitlines()
        assert len(lines) <= 320, f"{file.name}: {len(lines)} lines"
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.FunctionDef):
                length = node.end_lineno - node.lineno + 1
                assert length <= 62, f"{file.name}:{node.name} has {length} lines"


# -- earlier run-directory formats ------------------------------------------------------------
@pytest.mark.parametrize("name", ["format2_exact", "format2_ppo", "format1_ppo"])
def test_runs_of_formats_1_and_2_load_report_and_resume(name, tmp_path):
    from psro.reports import write_report

    directory = tmp_path / name
    shutil.copytree(DATA / name, directory)
    loaded = psro.load_run(directory)
    with open(DATA / name / "metrics.jsonl") as handle:
        assert len(loaded.metrics) == sum(1 for _ in handle)
    assert loaded.meta_policy() is not None
    md, _ = write_report([directory], tmp_path / "report")
    assert f"| {loaded.metrics[-1]['iteration']} |" in md.read_text()
    resumed = psro.PSRO.resume(directory)
    rows = resumed.run(iterations=len(loaded.metrics) + 1)
    assert len(rows) == len(loaded.metrics) + 2
    assert _numbers(rows[:len(loaded.metrics)]) == _numbers(loaded.metrics)
    again = psro.load_run(directory)  # converted to records: read back the same
    assert _numbers(again.metrics) == _numbers(rows)
    assert not (directory / "checkpoint.npz").exists()
    if name == "format2_exact":  # exact numbers are the same as a fresh run's
        fresh = psro.PSRO("kuhn_poker", "exact", "nash").run(iterations=len(rows) - 1)
        assert _numbers(fresh) == _numbers(rows)


# -- the README's examples of extending the toolkit -------------------------------------------
def _readme_examples() -> list[str]:
    text = (ROOT / "README.md").read_text()
    examples = []
    for heading in ("## Quick start", "### Exploitability of any policy",
                    "### Extending the toolkit: how it fits together"):
        section = re.split(r"\n##+ ", text.split(heading + "\n", 1)[1], maxsplit=1)[0]
        examples += re.findall(r"```python\n(.*?)```", section, re.S)
    return examples


def test_readme_extension_examples_run(tmp_path, monkeypatch):
    examples = _readme_examples()
    assert len(examples) >= 6
    monkeypatch.chdir(tmp_path)
    for code in examples:
        exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})

"""The self-rewarding judge in the debate game: a judge retrained during a PSRO run from the
debates it judged, with its own verdicts as labels (a Self-Rewarding model's loop), or with a
fraction of them replaced by true labels (the external anchor), beside the fixed judge.

Run: ``python experiments/debate.py --judges [--reveals 4] [--anchors 0.1 0.3] [--seeds 5]
[--iterations 15] [--ppo-steps 20000] [--judge-debates 2048] [--jobs 2]
[--out runs/debate-judges] [--quick]``.

One PSRO run per (judge, seed) on ``debate(reveals=K,images=400)`` (the honest protocol; the
Nash meta-solver, PPO best responses), run in memory. At every iteration t, from 0 (uniformly
random debaters) to the last:

1. the run's meta-policies play ``--judge-debates`` debates before the current judge J_t;
2. measured: J_t's ten-way accuracy from K random nonzero pixels of each *held-out* debate
   image (the debate images past the first 400: no debate is held over them, so no judge
   trains on them; the same pixels for every judge and iteration of a seed); J_t's agreement
   with the true label in those debates (the honest debater's win rate before J_t); and the
   honest win rate in the same debates as the fixed judge J_0 would judge them;
3. the judge learns (not the fixed one): J_{t+1} is J_t trained further
   (:func:`games.judge.retrain`) on the debates' revealed pixels, labelled with its own
   verdicts (the claim it sided with), except that with an anchor fraction f each debate's
   label is, with probability f, the true label; the run then continues before J_{t+1}
   (:meth:`psro.PSRO.change_game`: every payoff entry measured again);
4. PSRO's next iteration trains the new best responses before J_{t+1}.

Every (judge, seed) writes ``out/runs/<judge>-seed<s>.json`` when it ends (a killed one is
run again from its start) and its judges to ``out/judges/<judge>-seed<s>/``; the summary is
``results.json``, ``results.md`` and ``judges.png``: means over seeds with 95% Student-t
intervals.
"""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import numpy as np

import psro
from games import judge as judges
from games.debate import debate_images
from psro.evaluation import monte_carlo
from psro.reports.figures import new_figure, save_figure
from psro.reports.groups import interval
from psro.seeds import derive_seed

DEBATE_IMAGES = 400
"""Debates are held over the first 400 debate images; the rest are the judges' held-out
test images."""
PAYOFFS = {"tolerance": 0.1, "max_episodes": 512}
"""The payoff entries' Monte Carlo options (a 95% half-width of 0.1 on returns in [-1, 1]):
a learning judge's table is measured again every iteration."""
MEASURES = ("accuracy", "agreement", "fixed judge")
TITLES = {"accuracy": "judge's 10-way accuracy, K random pixels (held-out images)",
          "agreement": "judge agrees with the true label (its debates)",
          "fixed judge": "honest win rate, judged by the fixed judge"}


@dataclass(frozen=True)
class Setting:
    """One experiment's settings (what every (judge, seed) of it shares)."""

    reveals: int = 4
    size: int = 8
    images: int = DEBATE_IMAGES
    iterations: int = 15
    ppo_steps: int = 20_000
    debates: int = 2048
    out: str = "runs/debate-judges"
    walked: bool = False
    """The game is small enough to walk (exact payoffs; no Monte Carlo options)."""

    def spec(self, judge_file: str | None = None) -> str:
        """The debate game's string, before the judge in ``judge_file`` (None: the fixed
        judge, ``judge_seed`` 0)."""
        extra = f",judge_file={judge_file}" if judge_file else ""
        return f"debate(reveals={self.reveals},size={self.size},images={self.images}{extra})"


@dataclass(frozen=True)
class Judged:
    """Debates as the judge saw them: ``values`` (n, P) each image's pixels, ``revealed``
    (n, P) the pixels shown, ``claims`` (n, 2) each seat's label, ``labels`` (n,) the true
    label, ``verdicts`` (n,) the seat the judge sided with."""

    values: np.ndarray
    revealed: np.ndarray
    claims: np.ndarray
    labels: np.ndarray
    verdicts: np.ndarray

    @classmethod
    def of(cls, states: list) -> Judged:
        """From finished debate states (:class:`games.debate.DebateState`)."""
        return cls(np.array([s.debate.images[s.image] for s in states]),
                   np.array([s.revealed_mask() for s in states]),
                   np.array([s.claims for s in states], np.int64),
                   np.array([s.label for s in states], np.int64),
                   np.array([0 if s.returns()[0] > 0 else 1 for s in states], np.int64))

    @property
    def chosen(self) -> np.ndarray:
        """The label the judge chose in each debate."""
        return self.claims[np.arange(len(self.claims)), self.verdicts]


def play_debates(run: psro.PSRO, episodes: int, seed: int) -> Judged:
    """``episodes`` debates of the run's meta-policies before its game's current judge."""
    seats = [[m.actor(run.tree) for m in pop] for pop in run.population]
    mixtures = [np.asarray(m, float) for m in run.mixtures]
    states: list = []
    monte_carlo.simulate(run.parts.context.play_game, seats, mixtures, episodes, seed,
                         ended=states.extend)
    return Judged.of(states)


def training_labels(judged: Judged, anchor: float, seed: int) -> np.ndarray:
    """The self-rewarding judge's labels: its own verdicts, each replaced by the true label
    with probability ``anchor`` (independently, drawn with ``seed``)."""
    true = np.random.default_rng(seed).random(len(judged.labels)) < anchor
    return np.where(true, judged.labels, judged.chosen)


def held_out(setting: Setting) -> tuple[np.ndarray, np.ndarray]:
    """The debate images no debate is held over (past the first ``images`` that qualify)."""
    pictures, labels = debate_images(setting.size, setting.reveals, 0)  # all that qualify
    return pictures[setting.images:], labels[setting.images:]


def measure(judge: judges.Judge, fixed: judges.Judge, judged: Judged, test: tuple,
            reveals: int, seed: int) -> dict:
    """The three figures of one iteration (module docstring, step 2)."""
    images, labels = test
    mask = judges.random_reveals(images, reveals, np.random.default_rng(seed))
    scores = fixed.logits(judged.revealed, judged.values)
    rows = np.arange(len(scores))
    honest_by_fixed = scores[rows, judged.claims[:, 0]] > scores[rows, judged.claims[:, 1]]
    return {"accuracy": float(np.mean(judge.classify(mask, images) == labels)),
            "agreement": float(np.mean(judged.chosen == judged.labels)),
            "fixed judge": float(np.mean(honest_by_fixed)),
            "judge_sha256": judge.checksum}


def run_judge(setting: Setting, name: str, anchor: float | None, seed: int) -> list[dict]:
    """One PSRO run with one judge (``anchor`` None: fixed; 0: its own verdicts only);
    returns one row per iteration and writes them to ``out/runs/<name>-seed<seed>.json``."""
    path = Path(setting.out) / "runs" / f"{name}-seed{seed}.json"
    if path.exists():
        return json.loads(path.read_text())["rows"]
    fixed = judges.judge(setting.size, setting.reveals, 0)
    judge, test = fixed, held_out(setting)
    run = psro.PSRO(setting.spec(), oracle="ppo", meta_solver="nash", seed=seed,
                    ppo={"env_steps": setting.ppo_steps},
                    **({} if setting.walked else {"monte_carlo": PAYOFFS}))
    run.initialize()
    rows = []
    for t in range(setting.iterations + 1):
        if t:
            run.step()
        judged = play_debates(run, setting.debates, derive_seed(seed, 1000 + t))
        rows.append({"iteration": t, "env_steps": run.state.env_steps,
                     **measure(judge, fixed, judged, test, setting.reveals,
                               derive_seed(seed, 4000))})
        if anchor is None or t == setting.iterations:
            continue
        labels = training_labels(judged, anchor, derive_seed(seed, 3000 + t))
        judge = judges.retrain(judge, judged.revealed, judged.values, labels,
                               derive_seed(seed, 2000 + t))
        file = judges.save(judge, Path(setting.out) / "judges" / f"{name}-seed{seed}"
                           / f"judge-{t + 1}.npz")
        run.change_game(setting.spec(str(file)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"judge": name, "anchor": anchor, "seed": seed,
                                "rows": rows}, indent=1))
    return rows


def judges_of(anchors: list[float]) -> dict[str, float | None]:
    """The judges compared: fixed, self-judging, and self-judging with each anchor."""
    return {"fixed": None, "self": 0.0, **{f"anchor {a:g}": a for a in anchors}}


def _job(args: tuple) -> tuple[str, int, list[dict]]:
    import torch

    torch.set_num_threads(1)
    setting, name, anchor, seed = args
    return name, seed, run_judge(setting, name, anchor, seed)


def run_all(setting: Setting, anchors: list[float], seeds: list[int], jobs: int
            ) -> dict[str, list[list[dict]]]:
    """Every (judge, seed), ``jobs`` at a time; returns judge -> the rows of each seed."""
    work = [(setting, name, anchor, seed) for name, anchor in judges_of(anchors).items()
            for seed in seeds]
    found: dict[tuple[str, int], list[dict]] = {}
    with ExitStack() as stack:  # the pool, where there is one, shuts down on any exit
        if jobs == 1:
            results = map(_job, work)
        else:
            pool = stack.enter_context(ProcessPoolExecutor(jobs, mp_context=get_context("spawn")))
            results = pool.map(_job, work)
        for name, seed, rows in results:
            found[name, seed] = rows
            last = rows[-1]
            print(f"{name:12s} seed {seed}: accuracy {rows[0]['accuracy']:.3f} -> "
                  f"{last['accuracy']:.3f}, agreement {last['agreement']:.3f}, fixed judge "
                  f"{last['fixed judge']:.3f}", flush=True)
    return {name: [found[name, s] for s in seeds] for name in judges_of(anchors)}


def summary(results: dict[str, list[list[dict]]]) -> dict:
    """Per judge and measure: iterations, means over seeds and 95% half-widths."""
    out = {}
    for name, runs in results.items():
        out[name] = {}
        for key in MEASURES:
            values = np.array([[row[key] for row in rows] for rows in runs])
            curve = interval(np.arange(values.shape[1]), values)
            half = (np.zeros(values.shape[1]) if curve.n < 2
                    else np.asarray(curve.high) - np.asarray(curve.mean))
            out[name][key] = {"mean": np.asarray(curve.mean).tolist(), "half": half.tolist()}
        out[name]["seeds"] = len(runs)
    return out


def table(stats: dict, iterations: int) -> list[str]:
    """Markdown: one table per measure, a row per judge, columns at every other iteration
    (and the last)."""
    shown = sorted({*range(0, iterations + 1, 2), iterations})
    lines = []
    for key in MEASURES:
        lines += [f"**{TITLES[key]}**", "",
                  "| judge | " + " | ".join(f"iteration {t}" for t in shown) + " |",
                  "| --- |" + " --- |" * len(shown)]
        for name, by_key in stats.items():
            cells = [f"{by_key[key]['mean'][t]:.3f} +- {by_key[key]['half'][t]:.3f}"
                     for t in shown]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def figure(stats: dict, path: Path, reveals: int) -> None:
    """One panel per measure: each judge's mean over iterations with its 95% band."""
    fig, axes = new_figure(12.6, 3.6, 1, len(MEASURES))
    for ax, key in zip(axes, MEASURES, strict=True):
        for name, by_key in stats.items():
            mean, half = np.array(by_key[key]["mean"]), np.array(by_key[key]["half"])
            x = np.arange(len(mean))
            line, = ax.plot(x, mean, marker=".", label=name)
            ax.fill_between(x, np.clip(mean - half, 0, 1), np.clip(mean + half, 0, 1),
                            color=line.get_color(), alpha=0.15, linewidth=0)
        ax.set_title(TITLES[key], fontsize=8)
        ax.set_xlabel("PSRO iteration")
        ax.set_ylim(0, 1)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(alpha=0.3)
    axes[0].axhline(0.1, color="grey", linestyle=":", linewidth=1, label="chance (10 labels)")
    axes[1].axhline(0.5, color="grey", linestyle=":", linewidth=1)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Self-rewarding judges in debate (K = {reveals})", fontsize=10)
    save_figure(fig, path)


def main(setting: Setting, anchors: list[float], seeds: list[int], jobs: int) -> dict:
    """Run the comparison and write its summary (module docstring)."""
    out = Path(setting.out)
    results = run_all(setting, anchors, seeds, jobs)
    stats = summary(results)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(
        {"setting": setting.__dict__, "anchors": anchors, "seeds": seeds, "summary": stats},
        indent=1))
    (out / "results.md").write_text("\n".join(table(stats, setting.iterations)))
    figure(stats, out / "judges.png", setting.reveals)
    print(f"figure: {out / 'judges.png'}; table: {out / 'results.md'}")
    return stats


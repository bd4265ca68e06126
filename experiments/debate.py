"""The debate experiment of Irving, Christiano and Amodei (2018, "AI safety via debate"), on
the shipped 8x8 digits: how often the judge is right from K random pixels, against K pixels
chosen by debaters trained with this toolkit.

Run: ``python experiments/debate.py [--reveals 4 6] [--seeds 5] [--env-steps 400000]
[--ppo-steps 20000] [--backend local] [--out runs/debate] [--quick]``.

For each K, on ``debate(reveals=K)`` (:mod:`games.debate`; the honest protocol: player 0
claims the true label, player 1 a wrong one of its choice), in one run:

- *judge alone*: the judge's ten-way accuracy from K random nonzero pixels of each debate
  image (the paper's baseline: 59.4% from 6 pixels, 48.2% from 4), one draw of pixels per
  seed;
- *random reveals*: the honest debater's win rate when both debaters play uniformly at random
  (a random wrong claim, random pixels), Monte Carlo per seed;
- *PSRO* (Nash meta-solver, PPO best responses, payoff entries to a half-width of 0.05) and
  *self-play* (the suite's PPO self-play: one stochastic network trained against its latest
  self), each given the same env-step budget:
  the honest win rate of the run's final meta-policies playing each other (Monte Carlo, half
  width 0.01), and of each trained side against a uniformly random other side (what each
  debater learned on its own).

Every figure is the mean over seeds with its 95% Student-t interval. Writes one run directory
per (K, method, seed) (resumable), ``results.json``, ``results.md`` and ``debate.png``.

``--judges`` runs the judge comparison instead (:mod:`debate_judges`): the fixed judge
against judges retrained during the run on their own verdicts, with and without anchors of
true labels (``--anchors``), over ``--iterations`` PSRO iterations, ``--jobs`` at a time.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import debate_judges
import numpy as np
from common import run_all

import psro
from games import judge as judges
from games.debate import debate_images
from psro.bench.evaluation import play_game
from psro.bench.suites import STOCHASTIC
from psro.evaluation import monte_carlo
from psro.extensive_form.members import UniformMember
from psro.reports.figures import new_figure, save_figure
from psro.reports.groups import interval
from psro.seeds import derive_seed

PAPER = {4: (0.482, 0.852), 6: (0.594, 0.889)}
"""Irving et al.'s MNIST figures: (judge from K random pixels, honest win rate in debate)."""
EVALUATION = {"tolerance": 0.01, "min_episodes": 2048, "max_episodes": 16384}
PAYOFFS = {"tolerance": 0.05, "max_episodes": 1024}
"""PSRO's Monte Carlo payoff entries: a 95% half-width of 0.05 on returns in [-1, 1], at most
1,024 episodes an entry (the default 0.02 costs 8,192 debates an entry, most of a run)."""
QUICK_EVALUATION = {"tolerance": 0.03, "min_episodes": 512, "max_episodes": 2048}


def mean_interval(values: list[float]) -> tuple[float, float]:
    """Mean and 95% Student-t half-width (0 for one value), by the reports' interval."""
    curve = interval(np.zeros(1), np.asarray(values, float)[:, None])
    return float(curve.mean[0]), 0.0 if curve.n < 2 else float(curve.high[0] - curve.mean[0])


def honest_win_rate(spec: str, seats: list[list], mixtures: list[np.ndarray], seed: int,
                    evaluation: dict) -> float:
    """The honest debater's (player 0's) win rate with these seats: (1 + value) / 2, by
    Monte Carlo with ``evaluation``'s options."""
    estimate = monte_carlo.estimate(play_game(spec), seats, mixtures, seed, **evaluation)
    return float((1 + estimate.mean[0]) / 2)


def methods(ppo_steps: int) -> dict[str, dict]:
    """The two trained methods' RunConfig settings (the lower bound each run measures when it
    stops, which this experiment does not read, at one response's budget)."""
    bound = {"env_steps": ppo_steps}
    return {"psro": {"oracle": "ppo", "algorithm": "psro", "meta_solver": "nash",
                     "ppo": {"env_steps": ppo_steps}, "monte_carlo": PAYOFFS,
                     "lower_bound": bound},
            "self-play": {"oracle": "ppo", "algorithm": "psro", "meta_solver": "latest",
                          "ppo": {**STOCHASTIC, "env_steps": ppo_steps}, "lower_bound": bound}}


def measure(spec: str, reveals: int, size: int, seeds: list[int], configs: dict, out: Path,
            backend: str, evaluation: dict) -> dict:
    """Every figure of one K (module docstring)."""
    judge = judges.judge(size, reveals, 0)
    alone = [judges.accuracy(judge, reveals, seed=s)[0] for s in seeds]
    uniform = [[UniformMember(0)], [UniformMember(1)]]
    weights = [np.ones(1), np.ones(1)]
    random = [honest_win_rate(spec, uniform, weights, derive_seed(s, 77), evaluation)
              for s in seeds]
    result = {"judge alone": mean_interval(alone), "random reveals": mean_interval(random)}
    for name, settings in configs.items():
        runs = {f"{name}-seed{s}": psro.RunConfig(**settings, game=spec, seed=s,
                                                  backend=backend)
                for s in seeds}
        rows = run_all(runs, out)
        rates, honest_only, liar_only = [], [], []
        for run_name in runs:
            saved = psro.PSRO.resume(out / run_name)
            tree = saved.parts.context.tree  # tabular members (a walked game) play on it
            seats = [[m.actor(tree) for m in pop] for pop in saved.population]
            mixtures = [np.asarray(m, float) for m in saved.mixtures]
            seed = saved.config.seed
            rates.append(honest_win_rate(spec, seats, mixtures, derive_seed(seed, 78),
                                         evaluation))
            honest_only.append(honest_win_rate(spec, [seats[0], uniform[1]],
                                               [mixtures[0], weights[1]],
                                               derive_seed(seed, 79), evaluation))
            liar_only.append(honest_win_rate(spec, [uniform[0], seats[1]],
                                             [weights[0], mixtures[1]],
                                             derive_seed(seed, 80), evaluation))
        steps = [rows[r][-1]["env_steps"] for r in runs]
        result[name] = mean_interval(rates)
        result[f"{name}: trained honest, random liar"] = mean_interval(honest_only)
        result[f"{name}: random honest, trained liar"] = mean_interval(liar_only)
        result[f"{name} env steps"] = float(np.mean(steps))
        result[f"{name} iterations"] = float(np.mean([rows[r][-1]["iteration"] for r in runs]))
    result["images"] = len(debate_images(size, reveals, 0)[1])
    result["judge checksum"] = judge.checksum
    return result


def figure(results: dict[int, dict], path: Path) -> None:
    """Grouped bars per K with 95% intervals, and the paper's two figures as markers."""
    bars = ["judge alone", "random reveals", "psro", "self-play"]
    fig, axes = new_figure(6.4, 3.8)
    ks = sorted(results)
    width = 0.8 / len(bars)
    for i, bar in enumerate(bars):
        means = [results[k][bar][0] for k in ks]
        halves = [results[k][bar][1] for k in ks]
        axes.bar(np.arange(len(ks)) + (i - 1.5) * width, means, width, yerr=halves,
                 capsize=3, label=bar)
    for j, k in enumerate(ks):
        if k in PAPER:
            axes.plot([j - 0.4, j - 0.4 + width], [PAPER[k][0]] * 2, color="k", linewidth=2)
            axes.plot([j + 0.4 - width, j + 0.4], [PAPER[k][1]] * 2, color="k", linewidth=2,
                      linestyle=":")
    axes.plot([], [], color="k", linewidth=2, label="paper: judge from random pixels (MNIST)")
    axes.plot([], [], color="k", linewidth=2, linestyle=":", label="paper: debate (MNIST)")
    axes.set_xticks(np.arange(len(ks)), [f"K = {k} pixels" for k in ks])
    axes.set_ylabel("judge right / honest debater wins")
    axes.set_ylim(0, 1.4)
    axes.set_yticks(np.linspace(0, 1, 6))
    axes.legend(fontsize=7, loc="upper left", ncol=2)
    axes.set_title("Debate on 8x8 digits: the judge's accuracy", fontsize=10)
    save_figure(fig, path)


CROSS = ("trained honest, random liar", "random honest, trained liar")


def table(results: dict[int, dict]) -> list[str]:
    """The results as Markdown: the main figures, then each method's cross-play."""
    lines = ["| K | judge alone (10-way, random pixels) | random reveals (honest win rate) | "
             "psro (honest win rate) | self-play (honest win rate) | env steps (psro, "
             "self-play) | paper (random pixels, debate) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for k, r in sorted(results.items()):
        cells = [f"{r[b][0]:.3f} +- {r[b][1]:.3f}" for b in
                 ("judge alone", "random reveals", "psro", "self-play")]
        paper = PAPER.get(k)
        lines.append(f"| {k} | {' | '.join(cells)} | {r['psro env steps']:,.0f}, "
                     f"{r['self-play env steps']:,.0f} | "
                     f"{f'{paper[0]:.3f}, {paper[1]:.3f}' if paper else '-'} |")
    lines += ["", "| K | method | " + " | ".join(f"honest win rate, {c}" for c in CROSS) + " |",
              "| --- | --- | --- | --- |"]
    for k, r in sorted(results.items()):
        for name in ("psro", "self-play"):
            cells = [f"{r[f'{name}: {c}'][0]:.3f} +- {r[f'{name}: {c}'][1]:.3f}"
                     for c in CROSS]
            lines.append(f"| {k} | {name} | {' | '.join(cells)} |")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reveals", type=int, nargs="+", default=[4, 6])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--env-steps", type=int, default=400_000,
                        help="env-step budget of every trained run")
    parser.add_argument("--ppo-steps", type=int, default=20_000,
                        help="env steps of each PPO best response")
    parser.add_argument("--backend", default="local")
    parser.add_argument("--out", default="runs/debate")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 4x4 images, 10 of them, K = 2, two seeds")
    judging = parser.add_argument_group("the judge comparison (--judges)")
    judging.add_argument("--judges", action="store_true",
                         help="compare the fixed judge with self-rewarding judges (K: the "
                              "first --reveals; default out runs/debate-judges)")
    judging.add_argument("--anchors", type=float, nargs="+", default=[0.1, 0.3],
                         help="fractions of true labels among a learning judge's labels")
    judging.add_argument("--iterations", type=int, default=15, help="PSRO iterations a run")
    judging.add_argument("--judge-debates", type=int, default=2048,
                         help="debates played before the judge each iteration")
    judging.add_argument("--jobs", type=int, default=1, help="runs at a time (processes)")
    args = parser.parse_args(argv)
    if args.judges:
        judge_comparison(parser, args)
        return
    out = Path(args.out)
    size, images = (4, 10) if args.quick else (8, 0)
    reveals = [2] if args.quick else args.reveals
    seeds = list(range(2 if args.quick else args.seeds))
    env_steps = 3000 if args.quick else args.env_steps
    configs = {name: {**settings, "env_step_budget": env_steps}
               for name, settings in methods(1000 if args.quick else args.ppo_steps).items()}
    if args.quick:  # the quick game is walked: its payoffs and exploitability are exact
        configs = {name: {k: v for k, v in c.items() if k not in ("monte_carlo", "lower_bound")}
                   for name, c in configs.items()}
    results = {}
    for k in reveals:
        spec = f"debate(reveals={k},size={size},images={images})"
        results[k] = measure(spec, k, size, seeds, configs, out / f"k{k}", args.backend,
                             QUICK_EVALUATION if args.quick else EVALUATION)
        print(f"K={k}: " + ", ".join(f"{b} {results[k][b][0]:.3f} +- {results[k][b][1]:.3f}"
                                     for b in ("judge alone", "random reveals", "psro",
                                               "self-play")), flush=True)
    (out / "results.json").write_text(json.dumps({str(k): v for k, v in results.items()},
                                                 indent=1))
    (out / "results.md").write_text("\n".join(table(results)) + "\n")
    figure(results, out / "debate.png")
    print(f"figure: {out / 'debate.png'}; table: {out / 'results.md'}")


def judge_comparison(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--judges``: the judge comparison (:mod:`debate_judges`), its settings checked."""
    if not all(0 < a <= 1 for a in args.anchors):
        parser.error(f"--anchors must be fractions in (0, 1]; got {args.anchors}")
    for flag, value in (("--iterations", args.iterations), ("--judge-debates",
                        args.judge_debates), ("--jobs", args.jobs), ("--seeds", args.seeds),
                        ("--ppo-steps", args.ppo_steps)):
        if value < 1:
            parser.error(f"{flag} must be positive; got {value}")
    out = args.out if args.out != "runs/debate" else "runs/debate-judges"
    if args.quick:
        setting = debate_judges.Setting(reveals=2, size=4, images=10, iterations=2,
                                        ppo_steps=1000, debates=256, out=out,
                                        walked=True)
    else:
        setting = debate_judges.Setting(reveals=args.reveals[0], iterations=args.iterations,
                                        ppo_steps=args.ppo_steps, debates=args.judge_debates,
                                        out=out)
    seeds = list(range(2 if args.quick else args.seeds))
    debate_judges.main(setting, args.anchors, seeds, args.jobs)


if __name__ == "__main__":
    main()

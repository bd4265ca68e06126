"""``psro run``: a new run, or ``--resume``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from psro.cli.common import CliError, options
from psro.rl.config import PPOConfig


def _exploitability_text(row: dict) -> str:
    kind = row.get("exploitability_kind", "exact")
    if row.get("exploitability") is None:
        return "n/a (sampled payoffs; measured when the run stops)"
    half = row.get("exploitability_half_width")
    suffix = (" (approximate lower bound" + (f", +- {half:.2g} at 95%" if half is not None
                                             else "") + ")") \
        if kind == "approximate_lower_bound" else ""
    gap = f"  {row['gap_kind']} gap {row['gap']:.6g}" if "gap" in row else ""
    return f"{row['exploitability']:.6g}{suffix}{gap}"


NOT_CONVERGED = {
    "no_new_actions": "note: the trained best responses added no action to the restricted game, "
                      "so the run stopped; approximate responses can miss the action that "
                      "would, so this is not convergence (the exploitability above says how "
                      "far it is): more env steps per response (--ppo env_steps=N) or the "
                      "exact oracle go further"}
"""Stop reasons that end a run without showing it converged, and what to tell the user."""


def _overrides(args) -> dict:
    """The run settings given as flags, as RunConfig fields (None where not given)."""
    return {
        "game": args.game, "algorithm": args.algorithm, "oracle": args.oracle,
        "pipeline_width": args.pipeline_width, "anytime_rounds": args.anytime_rounds,
        "anytime_episodes": args.anytime_episodes,
        "xdo_solver": args.xdo_solver, "xdo_expansion": args.xdo_expansion,
        "diversity": args.diversity,
        "meta_solver": args.meta_solver,
        "meta_solver_options": options(args.meta_solver_option, "--meta-solver-option"),
        "oracle_options": options(args.oracle_option, "--oracle-option"),
        "ppo": options(args.ppo, "--ppo"), "iterations": args.iterations, "seed": args.seed,
        "time_budget_s": args.time_budget, "target_exploitability": args.target_exploitability,
        "env_step_budget": args.env_step_budget,
        "backend": args.backend, "workers": args.workers, "ray_address": args.ray_address,
        "tensorboard": True if args.tensorboard else None,
    }


def _note_spent(args, run) -> None:
    """On a resume, say so where a limit given is one the run has reached already (each counts
    every call's iterations, time or steps, the resumed ones included), so it runs nothing."""
    spent = [("--iterations", args.iterations, run.iteration, "iteration {:,}", "{:,}",
              "every iteration", "makes {:,} more"),
             ("--time-budget", args.time_budget, run.state.wall_time_s, "{:.1f} s", "{:g}",
              "the time of every call", "gives {:g} s more"),
             ("--env-step-budget", args.env_step_budget, run.state.env_steps,
              "{:,} env steps", "{:,}", "the steps of every call", "gives {:,} more")]
    for flag, limit, used, at, amount, counts, more in spent:
        if limit is not None and limit <= used:
            total = used + limit if isinstance(limit, int) else round(used + limit, 1)
            print(f"note: the run is at {at.format(used)} already, so {flag} "
                  f"{amount.format(limit)} runs nothing: {flag} counts {counts}, resumed ones "
                  f"included ({flag} {amount.format(total)} {more.format(limit)})", flush=True)


def cmd_run(args) -> int:
    """``psro run``: a new run, or ``--resume``."""
    from psro.build import check_limits
    from psro.cli.progress import ProgressLine, announce
    from psro.config import RunConfig, run_limits
    from psro.loop import PSRO

    callbacks = () if args.quiet else (ProgressLine(),)
    limits = (args.iterations, args.time_budget, args.target_exploitability,
              args.env_step_budget)
    if args.resume:
        if args.out is None:
            raise CliError("--resume needs --out DIR, the run directory to continue")
        fixed = {"--game": args.game, "--algorithm": args.algorithm, "--oracle": args.oracle,
                 "--pipeline-width": args.pipeline_width,
                 "--anytime-rounds": args.anytime_rounds,
                 "--anytime-episodes": args.anytime_episodes, "--xdo-solver": args.xdo_solver,
                 "--xdo-expansion": args.xdo_expansion,
                 "--diversity": args.diversity, "--meta-solver": args.meta_solver,
                 "--meta-solver-option": args.meta_solver_option,
                 "--oracle-option": args.oracle_option, "--ppo": args.ppo, "--seed": args.seed,
                 "--config": args.config, "--tensorboard": args.tensorboard or None,
                 "--overwrite": args.overwrite or None}
        given = [flag for flag, value in fixed.items() if value is not None]
        if given:
            raise CliError(f"{', '.join(given)} cannot change when a run is resumed (the run "
                           f"keeps its config); --resume takes --iterations, --time-budget, "
                           f"--target-exploitability, --env-step-budget, --backend, --workers "
                           f"and --ray-address")
        run = PSRO.resume(args.out, callbacks=callbacks)
        if args.backend is not None or args.workers is not None or args.ray_address:
            run.use_backend(args.backend or run.config.backend, args.workers, args.ray_address)
        print(f"resuming {args.out} at iteration {run.iteration}", flush=True)
        run.limits = check_limits(run.parts, run_limits(run.config, *limits))
        announce(run, args.quiet)
        _note_spent(args, run)
        run.run(*limits)
    else:
        if args.out is None:
            raise CliError("--out DIR is required: the run directory to write")
        config = RunConfig.from_toml(args.config) if args.config else RunConfig()
        config = config.merged(_overrides(args))
        if Path(args.out, "config.json").exists() and not args.overwrite:
            raise CliError(f"{args.out} already holds a run; use --resume to continue it, "
                           f"--overwrite to replace it, or choose another --out")
        if not args.out.strip():
            raise CliError("--out needs a directory name (it was empty)")
        run = PSRO(config=config, out=args.out, callbacks=callbacks, overwrite=args.overwrite)
        if run.writer.removed:
            print(f"--overwrite removed the earlier run in {args.out}: "
                  f"{', '.join(run.writer.removed)}", flush=True)
        announce(run, args.quiet)
        run.run()
    last = run.metrics[-1]
    print(f"done ({run.stop_reason}): iteration {last['iteration']}, exploitability "
          f"{_exploitability_text(last)}, run directory {args.out}")
    if run.stop_reason in NOT_CONVERGED:
        print(NOT_CONVERGED[run.stop_reason])
    return 0


def check_positive(flag: str, value) -> None:
    """A flag's integer must be positive where given."""
    if value is not None and value < 1:
        raise CliError(f"{flag} must be a positive integer; got {value}")


def _variant_arguments(run) -> None:
    """``psro run``'s flags that pick the PSRO variant."""
    run.add_argument("--algorithm", help="PSRO variant: psro (default), anytime, rectified, "
                                         "xdo, jpsro, pipeline, diverse")
    run.add_argument("--pipeline-width", type=int, help="--algorithm pipeline: active "
                                                        "learners per player (default 2)")
    run.add_argument("--anytime-rounds", type=int, help="--algorithm anytime with a trained "
                     "oracle: regret-matching rounds per iteration (default: exact LP where the "
                     "game is walked, 10 where it is too large)")
    run.add_argument("--anytime-episodes", type=int, help="--algorithm anytime with a trained "
                     "oracle: episodes per member in each regret-matching round (default: each "
                     "estimated to the monte_carlo tolerance)")
    from psro.config import XDO_EXPANSIONS, XDO_SOLVERS

    run.add_argument("--xdo-solver", choices=XDO_SOLVERS, help="--algorithm xdo: the "
                     "restricted game's solver, lp (sequence-form LP), cfr (warm-started CFR+), "
                     "pcfr (predictive CFR+) or dcfr (discounted CFR); default: the fastest "
                     "measured for the game and target (docs/variants/xdo.md)")
    run.add_argument("--xdo-expansion", choices=XDO_EXPANSIONS, help="--algorithm xdo: how "
                     "the restricted game grows, responses (every action of the new best "
                     "responses) or improving (the actions of positive counterfactual regret "
                     "against its equilibrium; with --xdo-solver lp); default: improving with "
                     "the LP and the exact oracle on games of 1,000 or more information sets "
                     "of a player, responses elsewhere")
    run.add_argument("--diversity", type=float, metavar="WEIGHT", help="--algorithm diverse: "
                     "weight of the population-diversity term in each best response's "
                     "objective (default 1.0)")


def add_parser(sub) -> None:
    """The ``run`` subcommand's arguments."""
    import solvers

    run = sub.add_parser("run", help="run PSRO (or --resume a run)")
    run.add_argument("--game", help="OpenSpiel game string or catalogue name")
    _variant_arguments(run)
    run.add_argument("--oracle", help="exact (tabular best response), ppo, grpo (critic-free, "
                                      "group-relative: docs/guide/grpo.md), or a registered "
                                      "oracle")
    run.add_argument("--oracle-option", action="append", metavar="KEY=VALUE",
                     help="option of the grpo oracle (group_size, kl_coef) or of a registered "
                          "oracle, repeatable")
    run.add_argument("--meta-solver", help=f"one of: {', '.join(solvers.names())} (default "
                                           f"nash; cce with --algorithm jpsro)")
    run.add_argument("--meta-solver-option", action="append", metavar="KEY=VALUE",
                     help="meta-solver option, repeatable (e.g. p=0.8)")
    run.add_argument("--ppo", action="append", metavar="KEY=VALUE",
                     help=f"PPO (and GRPO) oracle option, repeatable (e.g. env_steps=60000): "
                          f"{', '.join(f.name for f in dataclasses.fields(PPOConfig))}; each "
                          f"with its default and range in docs/guide/ppo.md")
    run.add_argument("--iterations", type=int,
                     help="stop at this iteration (counting resumed ones); without it, a run "
                          "with --time-budget, --target-exploitability or --env-step-budget runs "
                          "until that, and "
                          "one with no limit makes 20 iterations; the first limit reached ends "
                          "the run")
    run.add_argument("--seed", type=int, help="seed of every random source (default 0)")
    run.add_argument("--out", help="run directory to write (or resume)")
    run.add_argument("--backend", help="where tasks run: local (default), processes or ray; "
                                       "same numbers")
    run.add_argument("--workers", type=int, help="workers of --backend processes or ray")
    run.add_argument("--ray-address", help="--backend ray: auto (the cluster `ray start` made) "
                                           "or HOST:PORT (default: a private local Ray)")
    run.add_argument("--time-budget", type=float, metavar="SECONDS",
                     help="stop after this much run time (summed over resumes)")
    run.add_argument("--target-exploitability", type=float,
                     help="stop once the meta-policy's exploitability is at or below this")
    run.add_argument("--env-step-budget", type=int, metavar="STEPS",
                     help="stop once the best responses have taken this many environment steps "
                          "(trained oracles; summed over resumes)")
    run.add_argument("--config", help="TOML file with RunConfig fields; flags override it")
    run.add_argument("--resume", action="store_true", help="continue the run in --out")
    run.add_argument("--overwrite", action="store_true",
                     help="replace an earlier run in --out (a directory holding anything "
                          "else is still refused)")
    run.add_argument("--quiet", action="store_true",
                     help="no progress lines (the run directory records everything)")
    run.add_argument("--tensorboard", action="store_true",
                     help="also write TensorBoard scalars under OUT/tensorboard")
    run.set_defaults(func=cmd_run)

"""Sampled evaluation for games too large to walk: Monte Carlo payoff entries with standard
errors, and an approximate exploitability (a lower bound) measured when the run stops, and
during it where ``lower_bound`` asks (every K iterations or T seconds).

Two ``monte_carlo`` options make the entries cheaper:

- ``iteration_episodes = N`` caps the episodes an iteration spends on its payoff entries:
  the new entries share ``N`` (each gets at most ``N // entries``, and ``min_episodes`` is
  lowered to that where it is larger), and refinements spend what they leave;
- ``refine = "support"`` samples every new entry with ``min_episodes`` only, then, after each
  meta-solve, refines to the usual tolerance (or ``max_episodes``) the entries the
  meta-strategy depends on (:mod:`psro.evaluation.refinement`), and solves again, at most
  ``REFINE_ROUNDS`` times an iteration. ``refine = "all"`` (the default) estimates every new
  entry to the tolerance at once.
"""

from __future__ import annotations

import itertools

import numpy as np

import solvers
from psro.backends import Backend, Task
from psro.context import GameContext
from psro.evaluation import monte_carlo
from psro.evaluation.kernel_rows import exact_row
from psro.evaluation.refinement import entries_to_refine
from psro.extensive_form.members import UniformMember
from psro.kernels.progress import run_progress
from psro.metrics_row import MEASURED_COLUMNS, per_player
from psro.payoffs import PayoffTable
from psro.rl.config import PPOConfig, response_config
from psro.seeds import derive_seed
from psro.state import RunState

REFINE_ROUNDS = 4
"""Most refinement rounds (each followed by a meta-solve) in one iteration."""


class SampledEvaluator:
    """Payoff entries estimated by simulation (``config.monte_carlo`` options) on the backend,
    one task per profile with its own seed. Each iteration's row has the meta-policy's values
    and its NashConv within the population (``meta_game_nash_conv``); exploitability is
    measured by :meth:`finish`."""

    name = "sampled"
    measures_exploitability = False
    """Exploitability is a lower bound measured when the run stops or every so often, never
    every iteration: no target exploitability can end the run."""
    exact_entries = False

    def __init__(self, context: GameContext):
        self.game = context.play_game
        self.seed = context.config.seed
        table_options = dict(context.config.monte_carlo)
        self.refine_mode = table_options.get("refine", "all")
        """``"all"`` or ``"support"`` (see the module docstring)."""
        self.iteration_episodes = table_options.get("iteration_episodes")
        """The cap on an iteration's payoff episodes (None: no cap)."""
        self.options = monte_carlo.estimate_options(table_options)
        """:func:`monte_carlo.estimate`'s options, for the entries and the lower bound."""
        self.full = {**monte_carlo.ESTIMATE_DEFAULTS, **self.options}
        self._spent = 0
        self._rounds = 0
        schedule = dict(context.config.lower_bound)
        self.every, self.every_s = schedule.get("every"), schedule.get("every_s")
        self.final = schedule.get("final", True)
        """Whether the bound is measured when the run stops (``lower_bound.final``)."""
        budget = {"env_steps": schedule["env_steps"]} if "env_steps" in schedule else {}
        self.ppo = response_config({**schedule.get("ppo", {}), **budget})
        """The PPO options of the lower bound's best responses (never the oracle's)."""
        self.num_players = context.num_players
        from psro.kernels import kernel_for

        self.kernel_game = context.game.pyspiel_game \
            if kernel_for(context.game.pyspiel_game) is not None else None
        """The game, where a compiled kernel measures exploitability exactly (then every
        measurement the lower bound would make is exact instead); None elsewhere."""
        self.progress_folder = None
        """Where an exact evaluation keeps its progress (:meth:`keep_progress_in`)."""
        self.fill = True
        """Whether the payoff entries are estimated (set off where no part reads them: the
        table then holds NaN with counts of 0, and the rows no values)."""

    def keep_progress_in(self, folder) -> None:
        """Keep an exact evaluation's progress in ``folder`` (the run directory), so that one
        stopped part way resumes there (:func:`psro.kernels.progress.run_progress`)."""
        self.progress_folder = folder

    def initial_members(self) -> list[UniformMember]:
        """One uniform member per player (no tree to tabulate on)."""
        return [UniformMember(p) for p in range(self.num_players)]

    def extend(self, table: PayoffTable, populations: list[list], backend: Backend) -> int:
        """Estimate the new payoff entries by Monte Carlo, one seeded task per profile."""
        old, new = table.shape, tuple(len(pop) for pop in populations)
        blocks = PayoffTable.new_blocks(old, new)
        if not self.fill:
            shapes = [tuple(s.stop - s.start for s in block) for block in blocks]
            table.grow(new, blocks, [np.full((len(new),) + s, np.nan) for s in shapes],
                       [np.zeros(s, dtype=int) for s in shapes],
                       [np.full((len(new),) + s, np.nan) for s in shapes])
            return 0
        self._spent, self._rounds = 0, 0
        profiles_of = [list(itertools.product(*(range(s.start, s.stop) for s in block)))
                       for block in blocks]
        options = self._first_pass(sum(len(profiles) for profiles in profiles_of))
        values, counts, errors = [], [], []
        for block, profiles in zip(blocks, profiles_of, strict=True):
            tasks = [Task(_estimate_profile, (
                self.game, [populations[q][i].actor(None) for q, i in enumerate(profile)],
                derive_seed(self.seed, 7, *profile), options)) for profile in profiles]
            estimates = backend.run(tasks)
            self._spent += sum(e.count for e in estimates)
            shape = tuple(s.stop - s.start for s in block)
            values.append(np.stack([e.mean for e in estimates], axis=1)
                          .reshape((len(new),) + shape))
            counts.append(np.array([e.count for e in estimates]).reshape(shape))
            errors.append(np.stack([e.std_err for e in estimates], axis=1)
                          .reshape((len(new),) + shape))
        table.grow(new, blocks, values, counts, errors)
        return int(np.prod(new) - np.prod(old))

    def _first_pass(self, entries: int) -> dict:
        """The estimate options of an iteration's new entries: the run's, with ``max_episodes``
        at ``min_episodes`` where they are refined later and both within the iteration's cap."""
        options = dict(self.options)
        most = self.full["max_episodes"]
        if self.refine_mode == "support":
            most = min(most, self.full["min_episodes"])
        if self.iteration_episodes is not None and entries:
            most = min(most, max(1, self.iteration_episodes // entries))
        if most < self.full["max_episodes"]:
            options["max_episodes"] = most
            options["min_episodes"] = min(self.full["min_episodes"], most)
        return options

    def refine(self, state: RunState, backend: Backend) -> bool:
        """With ``refine = "support"``: re-estimate, to the tolerance or ``max_episodes``
        (within what is left of the iteration's cap), the coarse entries the meta-strategy
        ``state.mixtures`` depends on. True when some entry changed (the loop then solves the
        meta-game again); False when none needed it, the cap is spent or this iteration has
        had ``REFINE_ROUNDS`` rounds."""
        if self.refine_mode != "support" or not self.fill or self._rounds >= REFINE_ROUNDS:
            return False
        table = state.table
        profiles = entries_to_refine(table, state.mixtures, self.full["tolerance"],
                                     self.full["max_episodes"])
        allowance = None
        if self.iteration_episodes is not None and profiles:
            allowance = (self.iteration_episodes - self._spent) // len(profiles)
        if not profiles or (allowance is not None and allowance < 1):
            return False
        self._rounds += 1
        tasks = []
        for profile in profiles:
            mean, std_err, count = table.entry(profile)
            options = dict(self.options)
            if allowance is not None:
                options["max_episodes"] = min(self.full["max_episodes"], count + allowance)
            start = monte_carlo.Estimate(mean, std_err, count)
            tasks.append(Task(_estimate_profile, (
                self.game, [state.populations[q][i].actor(None) for q, i in enumerate(profile)],
                derive_seed(self.seed, 8, *profile, count), {**options, "start": start})))
        for profile, estimate in zip(profiles, backend.run(tasks), strict=True):
            self._spent += estimate.count - int(table.counts[profile])
            table.set_entry(profile, estimate.mean, estimate.std_err, estimate.count,
                            state.iteration)
        return True

    @staticmethod
    def columns(num_players: int) -> tuple[str, ...]:
        """The keys of :meth:`measure` (a superset of the lower bound's, which :meth:`finish`
        and :meth:`during` write)."""
        return (*MEASURED_COLUMNS, *per_player("gain_p", num_players),
                *per_player("value_p", num_players), "meta_game_nash_conv",
                *per_player("gain_std_err_p", num_players), "exploitability_half_width",
                "payoff_episodes")

    def measure(self, populations: list[list], mixtures: list[np.ndarray],
                table: PayoffTable) -> dict:
        """The meta-policy's values and its NashConv within the population (exploitability is
        measured by :meth:`finish`), and ``payoff_episodes``: the episodes this iteration
        spent on payoff entries."""
        game = table.as_game()
        n = len(populations)
        if not self.fill:
            return {"exploitability": None, "nash_conv": None,
                    "exploitability_kind": "not_measured",
                    **{f"gain_p{p}": None for p in range(n)},
                    **{f"value_p{p}": None for p in range(n)}, "meta_game_nash_conv": None,
                    **{f"gain_std_err_p{p}": None for p in range(n)},
                    "exploitability_half_width": None, "payoff_episodes": 0}
        values = solvers.expected_payoffs(game, mixtures)
        return {"exploitability": None, "nash_conv": None,
                "exploitability_kind": "not_measured",
                **{f"gain_p{p}": None for p in range(n)},
                **{f"value_p{p}": float(v) for p, v in enumerate(values)},
                "meta_game_nash_conv": solvers.nash_conv(game, mixtures),
                **{f"gain_std_err_p{p}": None for p in range(n)},
                "exploitability_half_width": None, "payoff_episodes": self._spent}

    def finish_text(self) -> str | None:
        """What :meth:`finish` is about to measure, in words (None where it measures nothing):
        a run says it before the minutes the responses may take."""
        if not self.final:
            return None
        if self.kernel_game is not None:
            kept = "" if self.progress_folder is None else \
                "; its progress kept in the run directory, where a resumed run continues it"
            return ("measuring the final meta-policy's exact exploitability (compiled kernel: "
                    f"every member asked at every information set{kept})")
        return (f"measuring the final meta-policy's approximate exploitability (a lower bound): "
                f"a PPO best response of {self.ppo.env_steps:,} env steps for each of the "
                f"{self.num_players} players")

    def finish(self, state: RunState, backend: Backend) -> dict:
        """Approximate exploitability of the final meta-policy (:meth:`lower_bound`); nothing
        where ``lower_bound.final`` is false."""
        return self.lower_bound(state, backend) if self.final else {}

    def during(self, state: RunState, backend: Backend) -> dict | None:
        """The lower bound where ``lower_bound.every`` iterations or ``every_s`` seconds of run
        time have passed since the last one (the first at iteration ``every``, or once
        ``every_s`` have passed); None otherwise."""
        measured = [r for r in state.metrics if r.get("exploitability") is not None]
        last_it = measured[-1]["iteration"] if measured else 0
        last_s = measured[-1]["wall_time_s"] if measured else 0.0
        due = (self.every is not None and state.iteration - last_it >= self.every) or \
            (self.every_s is not None and state.wall_time_s - last_s >= self.every_s)
        return self.lower_bound(state, backend) if due and state.iteration > 0 else None

    def lower_bound(self, state: RunState, backend: Backend) -> dict:
        """:func:`ppo_lower_bound` of the current meta-policy, seeded by the run's seed and the
        iteration only (so every method of a comparison, at the same seed and iteration, trains
        its responses from the same seeds), with the ``lower_bound`` table's responses
        (:func:`psro.rl.config.response_config`: the same options for every method). The
        responses' training logs go to the oracle log, tagged ``purpose = "lower_bound"``; the
        row gains ``exploitability_half_width`` (95%). Where a compiled kernel exists, the
        exploitability is measured exactly instead (:func:`exact_row`)."""
        if self.kernel_game is not None:
            return exact_row(self.kernel_game, state.populations, state.mixtures,
                             run_progress(self.progress_folder, state.iteration, state.mixtures))
        seats = [[m.actor(None) for m in pop] for pop in state.populations]
        seeds = [derive_seed(self.seed, 10**6 + state.iteration, p)
                 for p in range(len(seats) + 1)]
        row, logs = lower_bound_with_curves(self.game, seats, state.mixtures, self.ppo, seeds,
                                            self.options, backend)
        for p, log in enumerate(logs):
            state.oracle_log += [{"iteration": state.iteration, "player": p,
                                  "purpose": "lower_bound", **d} for d in log]
        errors = [row[f"gain_std_err_p{p}"] for p in range(len(seats))]
        row["exploitability_half_width"] = float(
            monte_carlo.Z95 * np.sqrt(np.sum(np.square(errors))) / len(seats))
        return row


def ppo_lower_bound(game, seats: list[list], mixtures: list[np.ndarray], ppo: PPOConfig,
                    seeds: list[int], options: dict, backend: Backend) -> dict:
    """A lower bound on the NashConv of players mixing the actors ``seats[q]`` by
    ``mixtures[q]``.

    For each player a fresh PPO best response (``ppo``'s options and budget, its own seed) is
    trained against the others; its gain over the profile's value, both estimated by Monte
    Carlo (``options``: :func:`psro.evaluation.monte_carlo.estimate`'s), is a *lower bound* on that
    player's true gain (the response is approximate). ``seeds[0]`` seeds the estimates,
    ``seeds[p + 1]`` player p's training. Returns a metrics row: exploitability,
    nash_conv, gain_p*, gain_std_err_p*, value_p*, exploitability_kind."""
    return lower_bound_with_curves(game, seats, mixtures, ppo, seeds, options, backend)[0]


def lower_bound_with_curves(game, seats: list[list], mixtures: list[np.ndarray],
                            ppo: PPOConfig, seeds: list[int], options: dict,
                            backend: Backend) -> tuple[dict, list[list[dict]]]:
    """:func:`ppo_lower_bound`'s row and each player's best-response training log (one row
    per PPO update: env steps, mean return, ...), the lower bound's training curves."""
    from psro.rl.ppo import train_best_response

    n, seed = len(seats), seeds[0]
    options = monte_carlo.estimate_options(options)
    base = monte_carlo.estimate(game, seats, mixtures, seed, **options)
    tasks = [Task(train_best_response, (game, p, seats, mixtures, ppo, seeds[p + 1], None,
                                        {"purpose": "exploitability"}))
             for p in range(n)]
    responses = backend.run(tasks)
    gains, errors = [], []
    for p, (network, _) in enumerate(responses):
        probe = [list(pop) for pop in seats]
        probe[p] = [network]
        weights = list(mixtures)
        weights[p] = np.ones(1)
        est = monte_carlo.estimate(game, probe, weights, seed + p + 1, **options)
        gains.append(max(0.0, float(est.mean[p] - base.mean[p])))
        errors.append(float(np.hypot(est.std_err[p], base.std_err[p])))
    row = {"exploitability": sum(gains) / n, "nash_conv": sum(gains),
           "exploitability_kind": "approximate_lower_bound",
           **{f"gain_p{p}": g for p, g in enumerate(gains)},
           **{f"gain_std_err_p{p}": e for p, e in enumerate(errors)},
           **{f"value_p{p}": float(v) for p, v in enumerate(base.mean)}}
    return row, [log for _, log in responses]


def _estimate_profile(game, actors: list, seed: int, options: dict) -> monte_carlo.Estimate:
    """A pure task: Monte Carlo payoffs of one profile of members."""
    return monte_carlo.estimate_profile(game, actors, seed, **options)

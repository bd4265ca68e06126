"""Sampled evaluation for games too large to walk: Monte Carlo payoff entries with standard
errors, and an approximate exploitability (a lower bound) measured when the run stops."""

from __future__ import annotations

import itertools

import numpy as np

import solvers
from psro.backends import Backend, Task
from psro.context import GameContext
from psro.errors import ConfigError
from psro.evaluation import monte_carlo
from psro.extensive_form.members import UniformMember
from psro.payoffs import PayoffTable
from psro.rl.config import PPOConfig
from psro.seeds import derive_seed
from psro.state import RunState


class SampledEvaluator:
    """Payoff entries estimated by simulation (``config.monte_carlo`` options) on the backend,
    one task per profile with its own seed. Each iteration's row has the meta-policy's values
    and its NashConv within the population (``meta_game_nash_conv``); exploitability is
    measured by :meth:`finish`."""

    name = "sampled"

    def __init__(self, context: GameContext):
        if context.config.target_exploitability is not None:
            raise ConfigError(f"target_exploitability needs exact exploitability, and "
                              f"{context.config.game!r} is too large to walk")
        self.game = context.play_game
        self.seed = context.config.seed
        self.options = dict(context.config.monte_carlo)
        self.ppo = PPOConfig.from_dict(context.config.ppo)
        self.num_players = context.num_players

    def initial_members(self) -> list[UniformMember]:
        """One uniform member per player (no tree to tabulate on)."""
        return [UniformMember(p) for p in range(self.num_players)]

    def extend(self, table: PayoffTable, populations: list[list], backend: Backend) -> int:
        """Estimate the new payoff entries by Monte Carlo, one seeded task per profile."""
        old, new = table.shape, tuple(len(pop) for pop in populations)
        blocks = PayoffTable.new_blocks(old, new)
        values, counts, errors = [], [], []
        for block in blocks:
            profiles = list(itertools.product(*(range(s.start, s.stop) for s in block)))
            tasks = [Task(_estimate_profile, (
                self.game, [populations[q][i].actor(None) for q, i in enumerate(profile)],
                derive_seed(self.seed, 7, *profile), self.options)) for profile in profiles]
            estimates = backend.run(tasks)
            shape = tuple(s.stop - s.start for s in block)
            values.append(np.stack([e.mean for e in estimates], axis=1)
                          .reshape((len(new),) + shape))
            counts.append(np.array([e.count for e in estimates]).reshape(shape))
            errors.append(np.stack([e.std_err for e in estimates], axis=1)
                          .reshape((len(new),) + shape))
        table.grow(new, blocks, values, counts, errors)
        return int(np.prod(new) - np.prod(old))

    def measure(self, populations: list[list], mixtures: list[np.ndarray],
                table: PayoffTable) -> dict:
        """The meta-policy's values and its NashConv within the population (exploitability is
        measured by :meth:`finish`)."""
        game = table.as_game()
        values = solvers.expected_payoffs(game, mixtures)
        n = len(populations)
        return {"exploitability": None, "nash_conv": None,
                "exploitability_kind": "not_measured",
                **{f"gain_p{p}": None for p in range(n)},
                **{f"value_p{p}": float(v) for p, v in enumerate(values)},
                "meta_game_nash_conv": solvers.nash_conv(game, mixtures),
                **{f"gain_std_err_p{p}": None for p in range(n)}}

    def finish(self, state: RunState, backend: Backend) -> dict:
        """Approximate exploitability of the final meta-policy (:func:`ppo_lower_bound`,
        seeded from the run's seed and iteration)."""
        seats = [[m.actor(None) for m in pop] for pop in state.populations]
        seeds = [derive_seed(self.seed, 10**6 + state.iteration, p)
                 for p in range(len(seats) + 1)]
        return ppo_lower_bound(self.game, seats, state.mixtures, self.ppo, seeds, self.options,
                               backend)


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

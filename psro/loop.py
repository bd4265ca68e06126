"""The PSRO loop: best responses, payoff-table extension, meta-solve, exploitability.

Iteration 0 is the initial population (one uniform-random policy per player). Each iteration
then (1) asks the oracle for one best response per player against the other players'
meta-policy, (2) adds them to the populations, (3) evaluates only the new payoff-table
entries, (4) solves the meta-game, and (5) measures the meta-policy's exploitability. Oracle
calls and payoff blocks are independent tasks handed to the backend.

Each seat has its own population: a best response trained for seat p is only ever played in
seat p. (OpenSpiel's psro_v2 shares one population between the seats of a symmetric game and
so plays seat-0 policies in seat 1, where they are uniformly random; on turn-based
rock-paper-scissors it ends at NashConv 0.59. Here the same game converges to 0.)
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import solvers
from games import Game, load
from games.simulation import turn_based
from psro import monte_carlo
from psro.backends import make_backend
from psro.config import ConfigError, RunConfig
from psro.exploitability import exact_exploitability
from psro.neural import NeuralPolicy, UniformActor, network_of
from psro.oracles import ExactBestResponse, PPOBestResponse
from psro.payoffs import PayoffTable
from psro.policies import MetaPolicy, TabularPolicy
from psro.ppo import PPOConfig, train_best_response
from psro.runs import RunDirectory, RunDirectoryError
from psro.sequence_form import GameTooLargeError, SequenceFormGame
from psro.tensorboard import tensorboard_callback

Callback = Callable[["PSRO", dict], None]


def _keys_digest(tree: SequenceFormGame) -> list[str]:
    return [hashlib.sha256("\n".join(p.keys).encode()).hexdigest()[:16] for p in tree.players]


class PSRO:
    """A PSRO run.

    Parameters
    ----------
    game : a game spec (``"kuhn_poker"``, ``"biased_rps"``, ...) or a loaded :class:`Game`.
    oracle : ``"exact"`` (tabular best response; games up to ``max_nodes`` nodes).
    meta_solver : a name from ``solvers.names()``; ``meta_solver_options`` are its options.
    seed : seeds every random source of the run.
    backend : where the oracle's training tasks and sampled payoff estimates run: ``"local"``
        (in order, in this process) or ``"processes"`` (a pool of ``workers`` processes, by
        default one per CPU); the numbers are the same either way. Exact payoff blocks are
        cheap array products and always run in this process.
    out : run directory; when given, metrics, tables and an atomic checkpoint are written after
        every iteration, and :meth:`resume` continues from it.
    callbacks : functions ``f(psro, row)`` called after every iteration with its metrics row.

    Raises :class:`ConfigError` (a ``ValueError``) for bad settings, including a meta-solver
    that cannot solve this game (``nash`` on a three-player game).
    """

    def __init__(self, game: str | Game, oracle: str = "exact", meta_solver: str = "nash", *,
                 meta_solver_options: dict | None = None, seed: int = 0,
                 backend: str = "local", workers: int | None = None,
                 max_nodes: int = 2_000_000,
                 out: str | Path | None = None, callbacks: tuple[Callback, ...] = (),
                 config: RunConfig | None = None):
        if config is None:
            config = RunConfig(game=game if isinstance(game, str) else game.spec, oracle=oracle,
                               meta_solver=meta_solver,
                               meta_solver_options=dict(meta_solver_options or {}), seed=seed,
                               backend=backend, workers=workers, max_nodes=max_nodes)
        config = config.validate()
        ppo = PPOConfig.from_dict(config.ppo)
        if config.oracle == "ppo":  # every PPO option written out, so a resumed run keeps
            # the options it started with even if a later version changes a default
            config = dataclasses.replace(config, ppo=ppo.to_dict())
        self.config = config
        self.game = game if isinstance(game, Game) else load(config.game)
        # The PPO oracle plays simultaneous-move games through their turn-based version, and
        # the tree is walked on that same game so tables and networks see the same states.
        self.play_game = self.game.pyspiel_game if self.config.oracle == "exact" \
            else turn_based(self.game.pyspiel_game)
        self.tree: SequenceFormGame | None = None
        try:
            self.tree = SequenceFormGame(self.play_game, max_nodes=config.max_nodes)
        except GameTooLargeError as err:
            if self.config.oracle == "exact":
                raise ConfigError(f"game {config.game!r} is too large for the exact oracle: "
                                  f"{err}") from None
        # exact: payoffs and exploitability from the walked tree; monte_carlo: sampled payoffs
        # and an approximate exploitability (a lower bound) measured when the run stops.
        self.mode = "exact" if self.tree is not None else "monte_carlo"
        if self.mode == "monte_carlo" and config.target_exploitability is not None:
            raise ConfigError(f"target_exploitability needs exact exploitability, and "
                              f"{config.game!r} is too large to walk")
        self.mc_options = dict(config.monte_carlo)
        n = self.play_game.num_players()
        if self.config.oracle == "exact":
            self.oracle = ExactBestResponse(self.tree)
        else:
            self.oracle = PPOBestResponse(self.tree, self.play_game, ppo, config.seed)
        self.ppo_log: list[dict] = []
        self._ppo_log_written = 0  # rows of ppo_log already in ppo_log.jsonl
        self.meta_solver = solvers.get(config.meta_solver, **config.meta_solver_options)
        try:  # fail before any work if the meta-solver cannot handle this kind of game
            self.meta_solver([np.zeros((1,) * n) for _ in range(n)])
        except ValueError as err:
            raise ConfigError(f"meta-solver {config.meta_solver!r} cannot solve this game: "
                              f"{err}") from None
        self.backend = make_backend(config.backend, config.workers)
        self.callbacks = list(callbacks)
        self.run_dir = RunDirectory(out) if out is not None else None
        if out is not None:
            board = tensorboard_callback(Path(out) / "tensorboard")
            if board is not None:
                self.callbacks.append(board)
        self.population: list[list] = [[] for _ in range(n)]
        self._plans: list[np.ndarray] = [] if self.tree is None else \
            [np.zeros((0, p.num_sequences)) for p in self.tree.players]
        self.table = PayoffTable(n, exact=self.mode == "exact")
        self.mixtures: list[np.ndarray] = []
        self.mixture_history: list[dict] = []
        self.metrics: list[dict] = []
        self.iteration = -1
        self.wall_time_s = 0.0
        self.env_steps = 0
        self.stop_reason: str | None = None

    # -- the iteration ----------------------------------------------------------------------
    def _add_members(self, members: list) -> None:
        for member in members:
            self.population[member.player].append(member)
            if self.mode == "exact":
                plan = member.realization_plan(self.tree)[None, :]
                self._plans[member.player] = np.vstack([self._plans[member.player], plan])

    def _extend_table(self) -> int:
        old = self.table.shape
        new = tuple(len(pop) for pop in self.population)
        blocks = PayoffTable.new_blocks(old, new)
        if self.mode == "exact":
            values = [self.tree.payoff_block([self._plans[q][s] for q, s in enumerate(block)])
                      for block in blocks]
            self.table.grow(new, blocks, values)
        else:
            values, counts, errors = [], [], []
            for block in blocks:
                profiles = list(itertools.product(*(range(s.start, s.stop) for s in block)))
                tasks = [(self.play_game, [self.population[q][i] for q, i in enumerate(prof)],
                          self._profile_seed(prof), self.mc_options) for prof in profiles]
                estimates = self.backend.map(_estimate_profile_task, tasks)
                shape = tuple(s.stop - s.start for s in block)
                values.append(np.stack([e.mean for e in estimates], axis=1)
                              .reshape((len(new),) + shape))
                counts.append(np.array([e.count for e in estimates]).reshape(shape))
                errors.append(np.stack([e.std_err for e in estimates], axis=1)
                              .reshape((len(new),) + shape))
            self.table.grow(new, blocks, values, counts, errors)
        return int(np.prod(new) - np.prod(old))

    def _solve_meta(self) -> None:
        try:
            mixtures = self.meta_solver(self.table.as_game())
        except (ValueError, solvers.SolverError) as err:
            raise ConfigError(f"meta-solver {self.config.meta_solver!r} failed at iteration "
                              f"{self.iteration}: {err} (the checkpoint of the previous "
                              f"iteration is kept)") from None
        self.mixtures = solvers.as_mixtures(mixtures, self.table.shape)

    def mixed_plans(self) -> list[np.ndarray]:
        """Each player's meta-policy as a realization plan: ``sum_k w_k r_k``."""
        return [w @ plans for w, plans in zip(self.mixtures, self._plans, strict=True)]

    def _profile_seed(self, profile) -> int:
        return int(np.random.SeedSequence([self.config.seed, 7, *profile]).generate_state(1)[0])

    def _record(self, timings: dict, entries: int, start: float) -> dict:
        t = time.perf_counter()
        n = len(self.population)
        if self.mode == "exact":
            result = exact_exploitability(self.tree, self.mixed_plans())
            measured = {"exploitability": result.exploitability,
                        "nash_conv": result.nash_conv, "exploitability_kind": "exact",
                        **{f"gain_p{p}": float(g) for p, g in enumerate(result.gains)},
                        **{f"value_p{p}": float(v) for p, v in enumerate(result.values)}}
        else:  # measured once, when the run stops (see approximate_exploitability)
            game = self.table.as_game()
            values = solvers.expected_payoffs(game, self.mixtures)
            measured = {"exploitability": None, "nash_conv": None,
                        "exploitability_kind": "not_measured",
                        **{f"gain_p{p}": None for p in range(n)},
                        **{f"value_p{p}": float(v) for p, v in enumerate(values)},
                        "meta_game_nash_conv": solvers.nash_conv(game, self.mixtures)}
        timings["exploitability_s"] = time.perf_counter() - t
        self.wall_time_s += time.perf_counter() - start
        row = {
            "iteration": self.iteration,
            "wall_time_s": self.wall_time_s,
            "population_size": len(self.population[0]),
            **measured,
            "entries_evaluated": entries,
            "env_steps": self.env_steps,
            **timings,
        }
        self.metrics.append(row)
        self.mixture_history.append({"iteration": self.iteration,
                                     "mixtures": [m.tolist() for m in self.mixtures]})
        if self.run_dir is not None:
            self._save()
        for callback in self.callbacks:
            callback(self, row)
        return row

    def initialize(self) -> dict:
        """Iteration 0: one uniform-random policy per player, its payoffs and meta-solve."""
        if self.iteration >= 0:
            raise RuntimeError("this run is already initialised")
        start = time.perf_counter()
        if self.run_dir is not None:
            self.run_dir.path.mkdir(parents=True, exist_ok=True)
            self.run_dir.write_config(self.config.to_json())
        if self.mode == "exact":
            self._add_members([
                TabularPolicy(p, self.tree.uniform_policy(p), name=f"uniform_p{p}",
                              metadata={"iteration": 0, "oracle": "uniform"})
                for p in range(self.tree.num_players)])
        else:
            self._add_members([UniformMember(p) for p in range(len(self.population))])
        self.iteration = 0
        t = time.perf_counter()
        entries = self._extend_table()
        timings = {"oracle_s": 0.0, "evaluation_s": time.perf_counter() - t}
        t = time.perf_counter()
        self._solve_meta()
        timings["meta_solver_s"] = time.perf_counter() - t
        return self._record(timings, entries, start)

    def step(self) -> dict:
        """One PSRO iteration; returns its metrics row."""
        if self.iteration < 0:
            return self.initialize()
        start = time.perf_counter()
        self.iteration += 1
        t = time.perf_counter()
        if isinstance(self.oracle, PPOBestResponse):
            tasks = self.oracle.tasks(self.population, self.mixtures, self.iteration,
                                      tabular=self.mode == "exact")
        else:
            tasks = self.oracle.tasks(self.mixed_plans())
        results = self.backend.map(self.oracle.run_task, tasks)
        self._add_members([self.oracle.to_policy(p, r, self.iteration)
                           for p, r in enumerate(results)])
        if isinstance(self.oracle, PPOBestResponse):
            for p, (network, diagnostics) in enumerate(results):
                self.env_steps += int(network.metadata.get("env_steps", 0))
                self.ppo_log += [{"iteration": self.iteration, "player": p, **d}
                                 for d in diagnostics]
        timings = {"oracle_s": time.perf_counter() - t}
        t = time.perf_counter()
        entries = self._extend_table()
        timings["evaluation_s"] = time.perf_counter() - t
        t = time.perf_counter()
        self._solve_meta()
        timings["meta_solver_s"] = time.perf_counter() - t
        return self._record(timings, entries, start)

    def run(self, iterations: int | None = None, time_budget_s: float | None = None,
            target_exploitability: float | None = None) -> list[dict]:
        """Iterate until ``iterations`` (total, counting earlier ones and resumed ones), the
        time budget (run time summed over resumes) or the target exploitability is reached.
        Defaults come from the config. Returns all metrics rows."""
        iterations = self.config.iterations if iterations is None else iterations
        budget = self.config.time_budget_s if time_budget_s is None else time_budget_s
        target = self.config.target_exploitability if target_exploitability is None \
            else target_exploitability
        if self.iteration < 0:
            self.initialize()
        while True:
            last = self.metrics[-1]
            if target is not None and last["exploitability"] is not None \
                    and last["exploitability"] <= target:
                self.stop_reason = "target_exploitability"
                break
            if budget is not None and self.wall_time_s >= budget:
                self.stop_reason = "time_budget"
                break
            if self.iteration >= iterations:
                self.stop_reason = "iterations"
                break
            self.step()
        if self.mode == "monte_carlo" and self.metrics[-1]["exploitability"] is None:
            self.approximate_exploitability()
        self.backend.close()  # worker processes, if any (started again when needed)
        return self.metrics

    def approximate_exploitability(self) -> dict:
        """Approximate exploitability of the current meta-policy for games too large to walk.

        For each player a fresh PPO best response (same options as the oracle, its own seed)
        is trained against the others' meta-policy; its gain over the meta-policy's value, both
        estimated by Monte Carlo, is a *lower bound* on that player's true gain (the response
        is approximate). Written into the last metrics row with
        ``exploitability_kind = "approximate_lower_bound"``.
        """
        t = time.perf_counter()
        n = len(self.population)
        seats = [list(pop) for pop in self.population]
        seed = self.oracle.seed(10**6 + self.iteration, 0)
        base = monte_carlo.estimate(self.play_game, seats, self.mixtures, seed,
                                    **self.mc_options)
        tasks = [(self.play_game, p, seats, self.mixtures, self.oracle.config,
                  self.oracle.seed(10**6 + self.iteration, p + 1), None,
                  {"purpose": "exploitability"}) for p in range(n)]
        responses = self.backend.map(train_best_response, tasks)
        gains, errors = [], []
        for p, (network, _) in enumerate(responses):
            probe = [list(pop) for pop in seats]
            probe[p] = [network]
            weights = list(self.mixtures)
            weights[p] = np.ones(1)
            est = monte_carlo.estimate(self.play_game, probe, weights, seed + p + 1,
                                       **self.mc_options)
            gains.append(max(0.0, float(est.mean[p] - base.mean[p])))
            errors.append(float(np.hypot(est.std_err[p], base.std_err[p])))
        row = self.metrics[-1]
        row.update({"exploitability": sum(gains) / n, "nash_conv": sum(gains),
                    "exploitability_kind": "approximate_lower_bound",
                    **{f"gain_p{p}": g for p, g in enumerate(gains)},
                    **{f"gain_std_err_p{p}": e for p, e in enumerate(errors)},
                    **{f"value_p{p}": float(v) for p, v in enumerate(base.mean)},
                    "exploitability_s": row["exploitability_s"] + time.perf_counter() - t})
        if self.run_dir is not None:
            self._save()
        return row

    def use_backend(self, backend: str, workers: int | None = None) -> None:
        """Run this process's following tasks on another backend (the numbers do not change;
        the run directory keeps its configured backend). ``ConfigError`` for an unknown name
        or a bad worker count."""
        dataclasses.replace(self.config, backend=backend, workers=workers).validate()
        self.backend.close()
        self.backend = make_backend(backend, workers)

    def meta_policy(self) -> MetaPolicy:
        """The current meta-policy as an OpenSpiel ``Policy`` (reach-weighted mixture); only
        for games small enough to walk."""
        if self.tree is None:
            raise ValueError("meta_policy() needs a game small enough to walk")
        return MetaPolicy(self.tree, self.population, self.mixtures)

    # -- persistence ------------------------------------------------------------------------
    def _population_arrays(self) -> dict[str, np.ndarray]:
        if self.mode != "exact":
            return {}
        return {f"player_{p}": np.stack([m.probs for m in pop])
                for p, pop in enumerate(self.population)}

    def _population_meta(self) -> dict:
        return {
            "format_version": 1,
            "game": self.config.game,
            "mode": self.mode,
            "infoset_keys": None if self.tree is None else [p.keys for p in self.tree.players],
            "members": [[{"name": m.name, "kind": _kind(m), **m.metadata} for m in pop]
                        for pop in self.population],
        }

    def _save(self) -> None:
        for p, pop in enumerate(self.population):
            for k, member in enumerate(pop):
                path = network_path(self.run_dir.path, p, k)
                network = network_of(member)
                if network is not None and not path.with_suffix(".json").exists():
                    network.save(path)
        if len(self.ppo_log) > self._ppo_log_written:  # appended, not rewritten: it grows by
            # thousands of rows; the checkpoint records how many rows are valid
            self.run_dir.append_ppo_log(self.ppo_log[self._ppo_log_written:])
            self._ppo_log_written = len(self.ppo_log)
        self.run_dir.write_metrics(self.metrics, self.mixture_history)
        population = self._population_arrays()
        self.run_dir.write_tables(self.table, population, self._population_meta())
        meta = {
            "config": self.config.to_dict(),
            "iteration": self.iteration,
            "wall_time_s": self.wall_time_s,
            "metrics": self.metrics,
            "mixtures": self.mixture_history,
            "members": self._population_meta()["members"],
            "infoset_digest": None if self.tree is None else _keys_digest(self.tree),
            "ppo_log_rows": len(self.ppo_log),
            "networks": [[network_of(m) is not None for m in pop] for pop in self.population],
        }
        arrays = {f"population_{k}": v for k, v in population.items()}
        arrays["payoff_values"] = self.table.values
        arrays["payoff_counts"] = self.table.counts
        arrays["payoff_std_errs"] = self.table.std_errs
        self.run_dir.write_checkpoint(meta, arrays)

    @classmethod
    def resume(cls, out: str | Path, callbacks: tuple[Callback, ...] = ()) -> PSRO:
        """Continue the run in ``out`` from its last checkpoint. A corrupt or incompatible
        checkpoint raises :class:`RunDirectoryError` and is left untouched."""
        run_dir = RunDirectory(out)
        config = RunConfig.from_dict(run_dir.read_config(), source=str(run_dir.path))
        meta, arrays = run_dir.read_checkpoint()
        try:
            saved = RunConfig.from_dict(meta.get("config") or {}).to_dict()
        except (ConfigError, TypeError):
            saved = None
        if saved != config.to_dict():
            raise RunDirectoryError(f"{run_dir.path}: checkpoint and config.json disagree")
        run = cls(config.game, config=config, out=out, callbacks=callbacks)
        digest = None if run.tree is None else _keys_digest(run.tree)
        if meta.get("infoset_digest") != digest:
            raise RunDirectoryError(
                f"{run_dir.path}: the checkpoint's policies do not match the information sets "
                f"of {config.game!r} in this OpenSpiel version")
        try:
            run._add_members([m for pop in _read_population(meta, arrays, run_dir.path)
                              for m in pop])
            run.table.grow(tuple(len(pop) for pop in run.population), [], [])
            run.table.values = arrays["payoff_values"]
            run.table.counts = arrays["payoff_counts"]
            run.table.std_errs = arrays["payoff_std_errs"]
            run.iteration = int(meta["iteration"])
            run.wall_time_s = float(meta["wall_time_s"])
            run.metrics = list(meta["metrics"])
            run.mixture_history = list(meta["mixtures"])
            run.mixtures = [np.asarray(m, float) for m in run.mixture_history[-1]["mixtures"]]
            if "ppo_log" in meta:  # checkpoints of format 1 held the log itself
                run.ppo_log = list(meta["ppo_log"])
            else:
                run.ppo_log = run_dir.read_ppo_log(int(meta["ppo_log_rows"]))
            run.env_steps = int(run.metrics[-1].get("env_steps", 0))
        except (KeyError, IndexError, ValueError, TypeError) as err:
            raise RunDirectoryError(f"checkpoint in {run_dir.path} is incomplete: {err!r}") \
                from None
        if run.table.values.shape[1:] != run.table.shape:
            raise RunDirectoryError(f"checkpoint in {run_dir.path}: payoff table shape does "
                                    f"not match the population")
        run.run_dir.write_metrics(run.metrics, run.mixture_history)
        run.run_dir.write_ppo_log(run.ppo_log)  # drops rows written after the checkpoint
        run._ppo_log_written = len(run.ppo_log)
        return run


def _kind(member) -> str:
    if isinstance(member, TabularPolicy):
        return "tabular"
    if isinstance(member, NeuralPolicy):
        return "neural"
    return "uniform"


def network_path(directory: Path, player: int, index: int) -> Path:
    """Where member ``index`` of ``player`` keeps its network (``.pt`` + ``.json``)."""
    return Path(directory) / "networks" / f"player{player}_member{index}"


def _read_population(meta: dict, arrays: dict, directory: Path) -> list[list]:
    """Rebuild every player's population from a checkpoint (tables, networks, uniform)."""
    population = []
    for p, members in enumerate(meta["members"]):
        pop = []
        for k, info in enumerate(members):
            info = dict(info)
            name, kind = info.pop("name"), info.pop("kind", "tabular")
            network = NeuralPolicy.load(network_path(directory, p, k)) \
                if meta["networks"][p][k] else None
            if kind == "tabular":
                pop.append(TabularPolicy(p, arrays[f"population_player_{p}"][k], name=name,
                                         metadata=info, network=network))
            elif kind == "neural":
                network.name, network.metadata = name, info
                pop.append(network)
            else:
                pop.append(UniformMember(p))
        population.append(pop)
    return population


class UniformMember(UniformActor):
    """The initial population member of a game too large to walk: uniform over legal moves."""

    def __init__(self, player: int):
        self.player = player
        self.name = f"uniform_p{player}"
        self.metadata = {"iteration": 0, "oracle": "uniform"}


def _estimate_profile_task(game, actors: list, seed: int, options: dict):
    """A pure task: Monte Carlo payoffs of one profile of members."""
    return monte_carlo.estimate_profile(game, actors, seed, **options)


class Run:
    """A finished or interrupted run read back from its directory (see :func:`load_run`)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        run_dir = RunDirectory(path)
        self.config = RunConfig.from_dict(run_dir.read_config(), source=str(path))
        self._meta, arrays = run_dir.read_checkpoint()
        self.metrics: list[dict] = list(self._meta["metrics"])
        self.mixtures = [np.asarray(m, float) for m in self._meta["mixtures"][-1]["mixtures"]]
        self.mixture_history = self._meta["mixtures"]
        counts = arrays["payoff_counts"]
        self.payoffs = PayoffTable(len(self.mixtures), exact=bool((counts == 0).all()))
        self.payoffs.values = arrays["payoff_values"]
        self.payoffs.counts = counts
        self.payoffs.std_errs = arrays["payoff_std_errs"]
        self.population = _read_population(self._meta, arrays, self.path)
        self._tree: SequenceFormGame | None = None

    @property
    def tree(self) -> SequenceFormGame:
        if self._tree is None:
            game = load(self.config.game).pyspiel_game
            if self.config.oracle == "ppo":  # PPO runs walk the turn-based version
                game = turn_based(game)
            self._tree = SequenceFormGame(game, max_nodes=self.config.max_nodes)
            if _keys_digest(self._tree) != self._meta.get("infoset_digest"):
                raise RunDirectoryError(f"{self.path}: policies do not match the game's "
                                        f"information sets")
        return self._tree

    def meta_policy(self) -> MetaPolicy:
        """The final meta-policy as an OpenSpiel ``Policy``."""
        return MetaPolicy(self.tree, self.population, self.mixtures)


def load_run(path: str | Path) -> Run:
    """Read a run directory: ``.metrics``, ``.population``, ``.payoffs``, ``.mixtures``,
    ``.config`` and ``.meta_policy()``."""
    return Run(path)


__all__ = ["PSRO", "Run", "load_run"]

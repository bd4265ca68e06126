"""Run configuration: the one description of a run, read from Python keywords, a TOML file or
command-line flags, all merged the same way and validated on load."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

import solvers
from psro.errors import ConfigError
from psro.option_checks import check_count, check_lower_bound, check_monte_carlo, check_positive
from psro.rl.config import PPOConfig
from psro.storage.text_files import read_toml

OPTION_TABLES = ("meta_solver_options", "oracle_options", "ppo", "monte_carlo", "lower_bound")
"""Fields that are tables of options: an override merges into them key by key."""

DEFAULT_ITERATIONS = 20
"""Iterations of a run given no limit at all (no iterations, time budget or target)."""
MAX_PIPELINE_WIDTH = 64
"""Most active learners per player of the "pipeline" algorithm (each is a PPO run)."""
XDO_SOLVERS = ("lp", "cfr", "pcfr", "dcfr")
"""Restricted-game solvers of the "xdo" algorithm (``xdo_solver``): the sequence-form LP, CFR+,
predictive CFR+ and discounted CFR."""
XDO_EXPANSIONS = ("responses", "improving")
"""How the "xdo" algorithm grows its restricted game (``xdo_expansion``): by every action of the
new best responses, or by the actions of positive counterfactual regret against the restricted
equilibrium (the best responses' where none has one)."""
MAX_SEED = 2**63 - 1
"""Largest run seed (seeds are 64-bit)."""
MAX_DIVERSITY = 1000.0
"""Largest diversity weight: returns are of order 1 (PPO scales them by the game's largest
utility), so 1000 already makes the diversity term all of the objective; far larger weights
overflow single-precision training into NaN weights."""


@dataclass
class RunConfig:
    """Everything that determines a PSRO run (with the seed, its numbers are reproducible)."""

    game: str = "kuhn_poker"
    """OpenSpiel game string or catalogue name (`psro games`)."""
    algorithm: str = "psro"
    """PSRO variant (`psro.algorithms`): "psro", "anytime", "rectified", "xdo", "jpsro",
    "pipeline" or "diverse"."""
    pipeline_width: int = 2
    """Active learners per player of the "pipeline" algorithm."""
    anytime_rounds: int | None = None
    """Regret-matching rounds per iteration of the "anytime" algorithm with the "ppo" oracle
    (`psro.algorithms.anytime_rm`): None finds the least exploitable mixture exactly by LP where the
    game is walked, and uses 10 rounds where it is too large to walk."""
    anytime_episodes: int | None = None
    """Episodes per member in each regret-matching round of the "anytime" algorithm (every
    member's return against the trained network from exactly this many episodes); None
    estimates each to the `monte_carlo` options' tolerance. Set, it asks for regret matching
    as `anytime_rounds` does."""
    xdo_solver: str | None = None
    """Restricted-game solver of the "xdo" algorithm (`psro.algorithms.xdo`): "lp" (the
    sequence-form LP, two-player zero-sum games only) or "cfr" (warm-started CFR+); None takes
    "lp" where the game is two-player zero-sum and "cfr" elsewhere."""
    xdo_expansion: str | None = None
    """How the "xdo" algorithm grows its restricted game (`psro.algorithms.xdo`): "responses"
    (every action of the new best responses) or "improving" (the actions of positive
    counterfactual regret against the restricted equilibrium; with "lp" only); None takes
    "improving" with the LP and the exact oracle on games with at least 1,000 information
    sets of a player, "responses" elsewhere."""
    diversity: float | None = None
    """Weight of the diversity term in the best responses' objective of the "diverse" algorithm
    (Diverse PSRO, `psro.algorithms.diverse`), in (0, 1000]; None takes 1.0."""
    oracle: str = "exact"
    """Best-response oracle, a name from `psro.oracles.names()`: "exact" (tabular, games small
    enough to walk), "ppo", "grpo" (critic-free, group-relative), or one registered with
    `psro.oracles.register`."""
    oracle_options: dict = field(default_factory=dict)
    """Options of a registered oracle, checked by its factory ("exact" takes none; "ppo" reads
    the `ppo` table; "grpo" takes group_size and kl_coef, `psro.rl.config.GRPOOptions`, and
    reads the `ppo` table for the rest)."""
    meta_solver: str | None = None
    """Meta-solver name from `solvers.names()`; None takes the algorithm's default ("cce" for
    "jpsro", "nash" for the others; "xdo" reads none). Set when the run's parts are built."""
    meta_solver_options: dict = field(default_factory=dict)
    """Options for the meta-solver, checked by `solvers.get`."""
    iterations: int | None = None
    """PSRO iterations in all, counting resumed ones (each adds one best response per
    player). None: run until ``time_budget_s`` or ``target_exploitability`` where one is set,
    else :data:`DEFAULT_ITERATIONS`. With several limits the first reached ends the run."""
    seed: int = 0
    """Seed of every random source of the run."""
    time_budget_s: float | None = None
    """Stop after this many seconds of run time (summed over resumes)."""
    target_exploitability: float | None = None
    """Stop once the meta-policy's exploitability is at or below this."""
    env_step_budget: int | None = None
    """Stop once the oracle's best responses have taken this many environment steps in all
    (summed over resumes; trained oracles only). The iteration that crosses it is finished, so
    a run ends at most one iteration's steps past it."""
    backend: str = "local"
    """Where oracle training and sampled-evaluation tasks run: "local" (in this process),
    "processes" (a pool of worker processes on this machine) or "ray" (Ray tasks, on this
    machine or a cluster); the numbers are the same on each."""
    workers: int | None = None
    """Workers of the "processes" and "ray" backends (default: the number of CPUs)."""
    ray_address: str | None = None
    """The "ray" backend's cluster: None starts a private local Ray, "auto" joins the one
    `ray start` made on this machine, "HOST:PORT" joins that one."""
    max_nodes: int = 2_000_000
    """Largest game tree the exact oracle and exact evaluation will walk."""
    ppo: dict = field(default_factory=dict)
    """PPO options (fields of psro.rl.config.PPOConfig), e.g. {env_steps = 60000}: for the
    "ppo" and "grpo" oracles (the responses that measure approximate exploitability have their
    own, in ``lower_bound``)."""
    monte_carlo: dict = field(default_factory=dict)
    """Sampled payoffs (games too large to walk): tolerance (95% half-width, default 0.02),
    min_episodes (256), max_episodes (8192), batch (256); refine ("all", or "support": new
    entries get min_episodes and only those the meta-strategy depends on are refined), and
    iteration_episodes (a cap on the episodes an iteration spends on payoff entries; none by
    default). See `psro.evaluation.sampled`."""
    lower_bound: dict = field(default_factory=dict)
    """Approximate exploitability of games too large to walk, measured during the run:
    ``every`` (iterations) and/or ``every_s`` (seconds of run time since the last measurement),
    ``env_steps``, the budget of each player's PPO best response (default 400,000), and
    ``ppo``, other PPO options of those responses (default: ``psro.rl.config.RESPONSE_DEFAULTS``
    over the PPO defaults; never the ``ppo`` table's, so that every method's bound is measured
    alike), and ``final`` (default true): whether it is also measured when the run stops (a
    benchmark suite that measures every run's final meta-policy itself sets it false). Without
    ``every`` or ``every_s`` it is measured once, when the run stops."""
    tensorboard: bool = False
    """Also write every numeric metric as a TensorBoard scalar under DIR/tensorboard."""

    def validate(self) -> RunConfig:
        """Check every field on its own; :class:`ConfigError` names the first bad one. What
        depends on the parts (the algorithm's default meta-solver and its options, settings
        that no part reads) is checked by :func:`psro.build.build_parts`. Returns self."""
        if not isinstance(self.game, str) or not self.game.strip():
            raise ConfigError(f"game must be a non-empty game string; got {self.game!r}")
        if not isinstance(self.algorithm, str) or not self.algorithm:
            raise ConfigError(f"algorithm must be an algorithm name; got {self.algorithm!r}")
        if not isinstance(self.oracle, str) or not self.oracle:
            raise ConfigError(f"oracle must be an oracle name; got {self.oracle!r}")
        for name in OPTION_TABLES:
            if not isinstance(getattr(self, name), dict):
                raise ConfigError(f"{name} must be a table of option = value; got "
                                  f"{getattr(self, name)!r}")
        if self.meta_solver is not None and (not isinstance(self.meta_solver, str)
                                             or self.meta_solver not in solvers.names()):
            raise ConfigError(f"unknown meta-solver {self.meta_solver!r}; accepted: "
                              f"{', '.join(solvers.names())}")
        if self.iterations is not None:
            check_count("iterations", self.iterations)
        check_count("pipeline_width", self.pipeline_width, maximum=MAX_PIPELINE_WIDTH)
        for name in ("anytime_rounds", "anytime_episodes"):
            if getattr(self, name) is not None:
                check_count(name, getattr(self, name))
        if self.xdo_solver is not None and self.xdo_solver not in XDO_SOLVERS:
            raise ConfigError(f"xdo_solver must be one of {', '.join(XDO_SOLVERS)}; got "
                              f"{self.xdo_solver!r}")
        if self.xdo_expansion is not None and self.xdo_expansion not in XDO_EXPANSIONS:
            raise ConfigError(f"xdo_expansion must be one of {', '.join(XDO_EXPANSIONS)}; got "
                              f"{self.xdo_expansion!r}")
        check_positive("diversity", self.diversity, maximum=MAX_DIVERSITY)
        check_count("seed", self.seed, minimum=0, maximum=MAX_SEED)
        check_positive("time_budget_s", self.time_budget_s)
        check_positive("target_exploitability", self.target_exploitability)
        if self.env_step_budget is not None:
            check_count("env_step_budget", self.env_step_budget)
        if not isinstance(self.backend, str) or not self.backend:
            raise ConfigError(f"backend must be a backend name; got {self.backend!r}")
        if self.workers is not None:
            check_count("workers", self.workers)
        if self.ray_address is not None and (not isinstance(self.ray_address, str)
                                             or not self.ray_address.strip()):
            raise ConfigError(f"ray_address must be auto or HOST:PORT; got "
                              f"{self.ray_address!r}")
        check_count("max_nodes", self.max_nodes)
        PPOConfig.from_dict(self.ppo)
        check_monte_carlo(self.monte_carlo)
        check_lower_bound(self.lower_bound)
        if not isinstance(self.tensorboard, bool):
            raise ConfigError(f"tensorboard must be true or false; got {self.tensorboard!r}")
        return self

    def merged(self, overrides: dict) -> RunConfig:
        """A copy with ``overrides`` applied: None values are skipped, option tables
        (``OPTION_TABLES``) merge key by key, every other field is replaced. Unknown keys are a
        :class:`ConfigError`. The Python constructor, ``--config`` files and command-line flags
        all go through this."""
        names = [f.name for f in dataclasses.fields(self)]
        unknown = sorted(set(overrides) - set(names))
        if unknown:
            raise ConfigError(f"unknown setting(s) {', '.join(unknown)}; accepted: "
                              f"{', '.join(names)}")
        changes = {}
        for key, value in overrides.items():
            if value is None:
                continue
            if key in OPTION_TABLES:
                if not isinstance(value, dict):
                    raise ConfigError(f"{key} must be a table of option = value; got {value!r}")
                value = {**getattr(self, key), **value}
            changes[key] = value
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """The config as a plain dict (option tables included)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict, source: str = "config") -> RunConfig:
        """Read a config from a mapping (missing keys take their defaults); unknown keys are a
        :class:`ConfigError` naming ``source``."""
        if not isinstance(data, dict):
            raise ConfigError(f"{source} must hold a table of settings; got "
                              f"{type(data).__name__}")
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ConfigError(f"unknown key(s) {', '.join(unknown)} in {source}; accepted: "
                              f"{', '.join(names)}")
        return cls(**data)

    @classmethod
    def from_toml(cls, path: str | Path) -> RunConfig:
        """Read a TOML file of RunConfig fields (:class:`ConfigError` naming the file and the
        problem)."""
        path = Path(path)
        try:
            data = read_toml(path)
        except ValueError as err:
            raise ConfigError(f"config file {path} cannot be used: {err}") from None
        return cls.from_dict(data, source=str(path))

    def to_json(self) -> str:
        """The config as indented JSON (``config.json``)."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


def as_it_ran(data: dict) -> dict:
    """A saved run's config mapping with the settings it was written without set to what that
    run did: an ``xdo`` run saved before ``xdo_expansion`` existed grew its restricted game by
    its best responses' actions (``"responses"``), whatever the default is now."""
    if isinstance(data, dict) and data.get("algorithm") == "xdo" and "xdo_expansion" not in data:
        return {**data, "xdo_expansion": "responses"}
    return data


def saved_config(data: dict, source: str = "config") -> RunConfig:
    """A run's config as a run directory saved it: :func:`as_it_ran`, then
    :meth:`RunConfig.from_dict`, then :func:`accepted_unread`."""
    return accepted_unread(RunConfig.from_dict(as_it_ran(data), source=source))


def accepted_unread(config: RunConfig) -> RunConfig:
    """A saved run's config with the PPO options that earlier versions accepted without
    reading, and this one refuses, set back to their defaults (they changed nothing):
    ``plateau_tol`` without ``plateau_patience``, in ``ppo`` and in ``lower_bound.ppo``."""
    def reset(options):
        if isinstance(options, dict) and not options.get("plateau_patience") and \
                options.get("plateau_tol", PPOConfig.plateau_tol) != PPOConfig.plateau_tol:
            return {**options, "plateau_tol": PPOConfig.plateau_tol}
        return options

    bound = config.lower_bound
    if isinstance(bound, dict) and "ppo" in bound:
        bound = {**bound, "ppo": reset(bound["ppo"])}
    return dataclasses.replace(config, ppo=reset(config.ppo), lower_bound=bound)


def run_limits(config: RunConfig, iterations: int | None = None,
               time_budget_s: float | None = None,
               target_exploitability: float | None = None,
               env_step_budget: int | None = None) -> tuple:
    """The limits that end a run: ``(iterations, time budget, target, env-step budget)``, the
    first reached ending it. A limit given here replaces the config's; one not given is the
    config's. A time budget, target or env-step budget given here without iterations means
    "until it" (the config's iteration count no longer applies); with no limit at all, the run
    makes :data:`DEFAULT_ITERATIONS` iterations."""
    until = iterations is None and any(v is not None for v in (
        time_budget_s, target_exploitability, env_step_budget))
    iterations = None if until else (config.iterations if iterations is None else iterations)
    if time_budget_s is None:
        time_budget_s = config.time_budget_s
    if target_exploitability is None:
        target_exploitability = config.target_exploitability
    if env_step_budget is None:
        env_step_budget = config.env_step_budget
    if iterations is None and time_budget_s is None and target_exploitability is None \
            and env_step_budget is None:
        iterations = DEFAULT_ITERATIONS
    if iterations is not None:
        check_count("iterations", iterations)
    check_positive("time_budget_s", time_budget_s)
    check_positive("target_exploitability", target_exploitability)
    if env_step_budget is not None:
        check_count("env_step_budget", env_step_budget)
    return iterations, time_budget_s, target_exploitability, env_step_budget

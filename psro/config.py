"""Run configuration: a dataclass read from TOML and/or flags, validated on load."""

from __future__ import annotations

import dataclasses
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import solvers


class ConfigError(ValueError):
    """A configuration that cannot run; the message names the field and what is accepted."""


@dataclass
class RunConfig:
    """Everything that determines a PSRO run (with the seed, its numbers are reproducible)."""

    game: str = "kuhn_poker"
    """OpenSpiel game string or catalogue name (`psro games`)."""
    oracle: str = "exact"
    """Best-response oracle: "exact" (tabular, games small enough to walk) or "ppo"."""
    meta_solver: str = "nash"
    """Meta-solver name from `solvers.names()`."""
    meta_solver_options: dict = field(default_factory=dict)
    """Options for the meta-solver, checked by `solvers.get`."""
    iterations: int = 20
    """PSRO iterations (each adds one best response per player)."""
    seed: int = 0
    """Seed of every random source of the run."""
    time_budget_s: float | None = None
    """Stop after this many seconds of run time (summed over resumes)."""
    target_exploitability: float | None = None
    """Stop once the meta-policy's exploitability is at or below this."""
    backend: str = "local"
    """Where oracle training and sampled-evaluation tasks run: "local" (in this process) or
    "processes" (a pool of worker processes on this machine; same numbers)."""
    workers: int | None = None
    """Worker processes of the "processes" backend (default: the number of CPUs)."""
    max_nodes: int = 2_000_000
    """Largest game tree the exact oracle and exact evaluation will walk."""
    ppo: dict = field(default_factory=dict)
    """PPO oracle options (fields of psro.ppo.PPOConfig), e.g. {env_steps = 60000}."""
    monte_carlo: dict = field(default_factory=dict)
    """Sampled payoffs (games too large to walk): tolerance (95% half-width, default 0.02),
    min_episodes (256), max_episodes (8192), batch (256)."""

    def validate(self) -> RunConfig:
        from psro.backends import BACKENDS
        from psro.oracles import ORACLES

        if not isinstance(self.game, str) or not self.game.strip():
            raise ConfigError("game must be a non-empty game string")
        if self.oracle not in ORACLES:
            raise ConfigError(f"unknown oracle {self.oracle!r}; accepted: {', '.join(ORACLES)}")
        if not isinstance(self.meta_solver_options, dict):
            raise ConfigError("meta_solver_options must be a table of option = value")
        try:
            solvers.get(self.meta_solver, **self.meta_solver_options)
        except ValueError as err:
            raise ConfigError(str(err)) from None
        if not isinstance(self.iterations, int) or isinstance(self.iterations, bool) \
                or self.iterations < 1:
            raise ConfigError(f"iterations must be a positive integer; got {self.iterations!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise ConfigError(f"seed must be a non-negative integer; got {self.seed!r}")
        for name in ("time_budget_s", "target_exploitability"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, (int, float)) or value <= 0):
                raise ConfigError(f"{name} must be a positive number; got {value!r}")
        if self.backend not in BACKENDS:
            raise ConfigError(f"unknown backend {self.backend!r}; accepted: "
                              f"{', '.join(BACKENDS)}")
        if self.workers is not None and (not isinstance(self.workers, int)
                                         or isinstance(self.workers, bool) or self.workers < 1):
            raise ConfigError(f"workers must be a positive integer (or unset: one per CPU); "
                              f"got {self.workers!r}")
        if not isinstance(self.ppo, dict):
            raise ConfigError("ppo must be a table of PPO option = value")
        from psro.ppo import PPOConfig

        try:
            PPOConfig.from_dict(self.ppo)
        except (TypeError, ValueError) as err:
            raise ConfigError(str(err)) from None
        accepted_mc = ("tolerance", "min_episodes", "max_episodes", "batch")
        if not isinstance(self.monte_carlo, dict):
            raise ConfigError("monte_carlo must be a table of option = value")
        unknown = sorted(set(self.monte_carlo) - set(accepted_mc))
        if unknown:
            raise ConfigError(f"unknown monte_carlo option(s) {', '.join(unknown)}; accepted: "
                              f"{', '.join(accepted_mc)}")
        for key, value in self.monte_carlo.items():
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"monte_carlo.{key} must be a positive number; got {value!r}")
        if not isinstance(self.max_nodes, int) or self.max_nodes < 1:
            raise ConfigError(f"max_nodes must be a positive integer; got {self.max_nodes!r}")
        return self

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict, source: str = "config") -> RunConfig:
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ConfigError(f"unknown key(s) {', '.join(unknown)} in {source}; accepted: "
                              f"{', '.join(names)}")
        return cls(**data)

    @classmethod
    def from_toml(cls, path: str | Path) -> RunConfig:
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text())
        except FileNotFoundError:
            raise ConfigError(f"config file {path} does not exist") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
            raise ConfigError(f"config file {path} is not valid TOML: {err}") from None
        return cls.from_dict(data, source=str(path))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

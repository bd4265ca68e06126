"""The errors ``psro`` raises on purpose. Each derives from :class:`solvers.ToolkitError` (as do
``games.GameError``, ``solvers.PayoffError``, ``solvers.OptionError`` and
``solvers.SolverError``), so ``except ToolkitError`` separates a refused input or a failed solve
from a bug. Messages name what was wrong and what is accepted; they never mention command-line
flags (the CLI adds those hints)."""

from __future__ import annotations

from solvers.errors import ToolkitError


class ConfigError(ToolkitError, ValueError):
    """A configuration that cannot run; the message names the field and what is accepted."""


class UnreadSettingError(ConfigError):
    """A setting given a value that no part of the run reads (``lower_bound`` on a game whose
    exploitability is exact, say); ``setting`` names it."""

    def __init__(self, message: str, setting: str):
        super().__init__(message)
        self.setting = setting


class RunDirectoryError(ToolkitError, ValueError):
    """A directory that is not a run, or whose files are corrupt or incompatible."""


class MetaSolverError(ToolkitError, RuntimeError):
    """The meta-solver failed on the payoff table during a run (numerically, not because of a
    setting); the checkpoint of the previous iteration is kept."""


class GameTooLargeError(ToolkitError, ValueError):
    """The game tree exceeds the walk budget; exact methods are not available for it."""


class PolicyError(ToolkitError, ValueError):
    """A policy that cannot be evaluated: an information set it does not cover, probabilities
    that are not a distribution over the legal actions, or an object that is not a policy. The
    message names the first information state at fault."""


class OutputFileError(ToolkitError, ValueError):
    """A file the toolkit was asked to write that must not be written: a symbolic link, a
    folder, a device, an input of the same command, or (where replacing was not asked for) an
    existing file."""


class BackendError(ToolkitError, RuntimeError):
    """A backend whose workers could not start: worker processes that died as they started
    (most often a script that starts its run without an ``if __name__ == "__main__":`` guard,
    which each spawned worker imports again)."""


class TrainingError(ToolkitError, RuntimeError):
    """A best response whose training diverged (a loss or a weight that is not finite): it
    never joins a population; the run keeps the iterations before it."""


class NotPerfectRecallError(ToolkitError, ValueError):
    """An information set is reached by two different own-action histories."""


__all__ = ["BackendError", "ConfigError", "GameTooLargeError", "MetaSolverError",
           "NotPerfectRecallError", "OutputFileError", "PolicyError", "RunDirectoryError",
           "ToolkitError", "TrainingError"]

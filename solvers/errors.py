"""Typed errors of the solvers package.

Every error the toolkit raises on purpose derives from :class:`ToolkitError`, so a caller can
tell a refused input or a failed solve (``except ToolkitError``) from a bug (anything else).
``solvers`` defines the base so that it stands alone; ``games`` and ``psro`` derive from it.
"""


class ToolkitError(Exception):
    """Base of every error the toolkit (``solvers``, ``games``, ``psro``) raises on purpose:
    the message names what was wrong and what is accepted."""


class PayoffError(ToolkitError, ValueError):
    """Payoffs or mixtures that are not valid input: NaN or infinite entries, empty or ragged
    arrays, mismatched shapes, mixtures that are not distributions. The message names the
    problem."""


class OptionError(ToolkitError, ValueError):
    """An unknown solver name, an unknown option or an option value out of range; the message
    lists what is accepted."""


class SolverError(ToolkitError, RuntimeError):
    """A solver failed on valid input: an LP reported failure, or a result missed the
    tolerance the solver promises. The message says which and by how much."""


__all__ = ["OptionError", "PayoffError", "SolverError", "ToolkitError"]

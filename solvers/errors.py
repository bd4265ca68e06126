"""Typed errors of the solvers package."""

from solvers.validation import PayoffError


class SolverError(RuntimeError):
    """A solver failed on valid input: an LP reported failure, or a result missed the
    tolerance the solver promises. The message says which and by how much."""


__all__ = ["PayoffError", "SolverError"]

"""Compiled kernels (numba) that compute exact best responses and exploitability on games too
large for the toolkit's walk of pyspiel states, for any policy it can hold.

- :mod:`psro.kernels.liars_dice`: ``liars_dice`` (two players, any number of dice and sides
  whose public tree fits the memory limit: 2 dice of 5 sides are 2^20 public states), by a walk
  of its public tree;
- :mod:`psro.kernels.exact`: the driver, :func:`~psro.kernels.exact.exact_exploitability`,
  which asks the policies at every information set in batches and runs the kernel.

:func:`kernel_for` says whether a game has a kernel.
"""

from __future__ import annotations

from psro.kernels.liars_dice import KernelError, LiarsDiceRules

KERNELS = {"liars_dice": LiarsDiceRules}
"""Games (OpenSpiel short names) with an exact kernel, and the rules class that checks a
variant and holds its arrays."""


def kernel_for(game) -> type | None:
    """The rules class of the kernel for the pyspiel game ``game``, None where there is none or
    the variant is one the kernel does not implement (too large, other rules)."""
    rules = KERNELS.get(game.get_type().short_name)
    if rules is None:
        return None
    try:
        rules.of(game)
    except KernelError:
        return None
    return rules


__all__ = ["KERNELS", "KernelError", "kernel_for"]

"""Compiled kernels (numba) that compute exact best responses and exploitability on games too
large for the toolkit's walk of pyspiel states, for any policy it can hold.

- :mod:`psro.kernels.liars_dice`: ``liars_dice`` (two players, any number of dice and sides
  whose public tree fits the memory limit: 2 dice of 5 sides are 2^20 public states), by a walk
  of its public tree;
- :mod:`psro.kernels.placement`: ``phantom_ttt`` and ``dark_hex`` (classical and abrupt,
  ``obstype=reveal-nothing``, boards of up to 9 cells), by a walk of every history
  (:mod:`psro.kernels.placement_exact`);
- :mod:`psro.kernels.exact`: the driver, :func:`~psro.kernels.exact.exact_exploitability`,
  which asks the policies at every information set in batches and runs the game's kernel.

:func:`kernel_for` says whether a game has a kernel. A further game is a rules class with
``of(game)`` (:class:`KernelError` for variants it does not implement), an evaluation
function ``(game, seats) -> KernelExploitability`` and the two functions of exact head-to-head
play (:func:`psro.kernels.exact.exact_head_to_head`), registered in :data:`KERNELS`.
"""

from __future__ import annotations

import importlib

from psro.kernels.base import KernelError

_PLACEMENT = ("psro.kernels.placement:PlacementRules",
              "psro.kernels.placement_exact:placement_exploitability",
              "psro.kernels.placement_exact:placement_sums",
              "psro.kernels.placement_exact:placement_cross_values")
KERNELS = {"liars_dice": ("psro.kernels.liars_dice:LiarsDiceRules",
                          "psro.kernels.liars_dice_exact:liars_dice_exploitability",
                          "psro.kernels.liars_dice_exact:liars_dice_sums",
                          "psro.kernels.liars_dice_exact:liars_dice_cross_values"),
           "phantom_ttt": _PLACEMENT,
           "dark_hex": _PLACEMENT}
"""Games (OpenSpiel short names) with an exact kernel, as ``module:name`` imported when asked
for: the rules class that checks a variant (``of(game)``), the function that evaluates
policies (``(game, seats, progress) -> KernelExploitability``), the one that sums both
players' mixtures (``(game, seats, progress) -> KernelSums``) and the one that plays one
pair of sums against others (``(own, others) -> [(first, second), ...]``)."""


def kernel_for(game) -> type | None:
    """The rules class of the kernel for the pyspiel game ``game``, None where there is none or
    the variant is one the kernel does not implement (too large, other rules)."""
    where = KERNELS.get(game.get_type().short_name)
    if where is None:
        return None
    module, name = where[0].split(":")
    rules = getattr(importlib.import_module(module), name)
    try:
        rules.of(game)
    except KernelError:
        return None
    return rules


__all__ = ["KERNELS", "KernelError", "kernel_for"]

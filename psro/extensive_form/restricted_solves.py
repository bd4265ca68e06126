"""The CFR-family runs behind a double oracle's restricted solves
(:class:`~psro.extensive_form.tree_double_oracle.TreeDoubleOracle` with a ``variant``;
``psro solve-tree --solver xdo_cfr``, ``xdo_pcfr``, ``xdo_dcfr+``): one compiled run
(:class:`~psro.extensive_form.compiled_cfr.CompiledRun`) a restricted game, on its compact
part, cut out of the whole game's compact arrays by one compiled pass
(:func:`~psro.extensive_form.compact.restrict`).

Each run starts from the regrets the last one ended with (a warm start: actions new to the
restricted game start at 0) and, while the restricted game grows, with a new average: the
earlier, smaller games' iterates would weigh on it (on liar's dice, keeping it made reaching a
restricted NashConv of 0.008 take 2425 CFR+ iterations; restarting it, 150). With a
``settled`` variant, once the restricted game *settles*, its share of the game's actions
growing by less than ``settle_growth`` from one restricted game to the next, every later run
is of that variant and continues the last settled run's average and clock
(:meth:`~psro.extensive_form.compiled_cfr.CompiledRun.carry_average`): its growths are small,
so the average is nearly that of the new game already, and DCFR+'s average, weighted by
``t ** 4``, forgets what it lacks within a few iterations. ``xdo_dcfr+`` is CFR+ growing and
DCFR+ settled.
"""

from __future__ import annotations

import numpy as np

from psro.extensive_form.cfr_variants import CFRVariant
from psro.extensive_form.compact import CompactGame, restrict, restriction_buffers
from psro.extensive_form.compiled_cfr import CompiledRun
from psro.extensive_form.sequence_form import SequenceFormGame

SETTLE_GROWTH = 0.03
"""With a ``settled`` variant: the restricted game has settled once its share of the game's
(information set, action) pairs grows by less than this from one restricted game to the
next."""


class RestrictedSolves:
    """The runs of the module docstring on ``game``, the compact arrays of the two-player
    ``tree``: ``variant``'s, and with ``settled`` that variant's once the restricted game grows
    by less than ``settle_growth`` (a share of the game's actions, in [0, 1]: ``ValueError``
    otherwise)."""

    def __init__(self, tree: SequenceFormGame, game: CompactGame, variant: CFRVariant,
                 settled: CFRVariant | None = None, settle_growth: float = SETTLE_GROWTH):
        if not 0.0 <= settle_growth <= 1.0:
            raise ValueError(f"settle_growth must be in [0, 1]; got {settle_growth!r}")
        self.tree, self.game = tree, game
        self.variant, self.settled_variant = variant, settled
        self.settle_growth = float(settle_growth)
        self.regrets = [np.zeros(info.num_sequences) for info in tree.players]
        """Each player's regrets by the tree's sequences, as the last finished run left them."""
        self.run: CompiledRun | None = None
        """The current restricted game's run (None between two restricted games)."""
        self.settled = False
        """Whether the restricted game has settled (never without a ``settled`` variant)."""
        self._buffers = restriction_buffers(game)
        """Where each restricted game's leaf arrays are written (the last one's run is over
        when the next is cut out)."""
        self._share = float("nan")
        """The share of the game's actions the last run's restricted game allowed."""
        self._average: tuple[list[np.ndarray], int] | None = None
        """The last settled run's average, which the next run continues."""

    def begin(self, allowed: list[np.ndarray], share: float) -> None:
        """Start :attr:`run` on the restricted game ``allowed`` (each player's booleans by
        compact sequence), which allows ``share`` of the game's actions."""
        grew = share - self._share  # nan before the first: not settled
        self.settled = self.settled or (self.settled_variant is not None
                                        and grew < self.settle_growth)
        self.run = CompiledRun(self.tree, restrict(self.game, (allowed[0], allowed[1]),
                                                   self._buffers),
                               self.regrets, self.settled_variant if self.settled
                               else self.variant)
        if self.settled and self._average is not None:
            self.run.carry_average(self._average)
        self._share = share

    def finish(self) -> list[np.ndarray]:
        """End the current run: keep its regrets (and, settled, its average) for the next;
        returns its average plans by the tree's sequences."""
        run = self.run
        run.save_regrets(self.regrets)
        if self.settled:
            self._average = run.average_on_tree()
        self.run = None
        return run.average_plans_on_tree()


__all__ = ["SETTLE_GROWTH", "RestrictedSolves"]

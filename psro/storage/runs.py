"""Finished or interrupted runs read back from their directories (:func:`load_run`)."""

from __future__ import annotations

from pathlib import Path

from psro.context import GameContext
from psro.errors import ConfigError, RunDirectoryError
from psro.evaluation.sampled_policy import SampledMetaPolicy
from psro.extensive_form.policies import MetaPolicy
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.state import joint_from_record
from psro.storage import checkpoint


class Run:
    """A run read from its directory: ``config``, ``iteration`` (the last one saved),
    ``metrics`` (one row per iteration),
    ``population`` (per player, its members), ``payoffs`` (the
    :class:`~psro.payoffs.PayoffTable`), ``mixtures`` (the final meta-strategies),
    ``mixture_history``, ``evaluation`` (``"exact"`` or ``"sampled"``), ``joint`` (JPSRO's
    final joint distribution over profiles, an array of the table's shape whose marginals are
    ``mixtures``; None for the other algorithms), ``stop_reason`` and ``ended`` (why the run
    ended; False with no reason for a run killed or still running, None for one written
    before run directories recorded it) and :meth:`meta_policy`."""

    def __init__(self, path: str | Path):
        saved = checkpoint.load(path)
        self.path = Path(path)
        self.config = saved.config
        self.state = saved.state
        self.iteration = saved.state.iteration
        self.stop_reason, self.ended = saved.state.stop_reason, saved.ended
        self.evaluation = saved.state.evaluation
        self.metrics = saved.state.metrics
        self.mixtures = saved.state.mixtures
        last = saved.state.mixture_history[-1] if saved.state.mixture_history else {}
        self.joint = joint_from_record(last["joint"]) if "joint" in last else None
        self.mixture_history = saved.state.mixture_history
        self.payoffs = saved.state.table
        self.population = saved.state.populations
        self._manifest = saved.manifest
        self._tree: SequenceFormGame | None = None

    @property
    def tree(self) -> SequenceFormGame:
        """The game's sequence form, walked as the run played it (simultaneous moves made
        turn-based for rollout oracles)."""
        if self._tree is None:
            play_turn_based = self._manifest.get("turn_based", _turn_based(self.config.oracle))
            context = GameContext.build(self.config, play_turn_based)
            self._tree = context.require_tree("a tabular meta-policy")
            if self._tree.keys_digest() != self._manifest.get("infoset_digest"):
                raise RunDirectoryError(f"{self.path}: policies do not match the game's "
                                        f"information sets")
        return self._tree

    def meta_policy(self) -> MetaPolicy | SampledMetaPolicy:
        """The final meta-policy as an OpenSpiel ``Policy`` (JPSRO: the product of the joint's
        marginals; a correlated distribution is no policy): a :class:`MetaPolicy` on the walked
        tree where the run's payoffs were exact, else (games too large to walk) a
        :class:`~psro.evaluation.sampled_policy.SampledMetaPolicy` of the run's networks, which
        plays the behavioural mixture and draws a member per episode on request."""
        if self.evaluation == "sampled":
            import games
            from games.simulation import turn_based

            game = games.load(self.config.game).pyspiel_game
            if self._manifest.get("turn_based", True):
                game = turn_based(game)
            return SampledMetaPolicy(game, self.population, self.mixtures)
        return MetaPolicy(self.tree, self.population, self.mixtures)


def _turn_based(oracle: str) -> bool:
    """Whether the oracle ``oracle`` plays simultaneous moves turn-based (its registry entry
    says; for a run written before run.json recorded it, by an oracle not registered in this
    process, False)."""
    from psro import oracles

    try:
        return oracles.get(oracle).turn_based
    except ConfigError:
        return False


def load_run(path: str | Path) -> Run:
    """Read a run directory (any format version) into a :class:`Run`."""
    return Run(path)

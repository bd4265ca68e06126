"""What every part of a run is built from: the config, the loaded game, the game as it is
played, and its walked tree where it is small enough."""

from __future__ import annotations

from dataclasses import dataclass

import pyspiel

from games import Game, load
from games.simulation import turn_based
from psro.config import RunConfig
from psro.errors import ConfigError, GameTooLargeError, NotPerfectRecallError
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.extensive_form.walks import walk_game


@dataclass
class GameContext:
    """A run's game, built once and shared by its parts.

    ``play_game`` is the game the oracle plays: the game itself, or its turn-based version for
    oracles that play through batched rollouts (simultaneous moves become sequential moves the
    players cannot see). ``tree`` is the sequence form of ``play_game``, or None where it has
    more than ``config.max_nodes`` nodes or lacks perfect recall (then its payoffs are sampled,
    as for a large game); ``walk_error`` then says why.
    """

    config: RunConfig
    game: Game
    play_game: pyspiel.Game
    tree: SequenceFormGame | None
    walk_error: str | None = None

    @classmethod
    def build(cls, config: RunConfig, turn_based_play: bool,
              game: Game | None = None) -> GameContext:
        """Load ``config.game`` (unless ``game`` is it, loaded already) and walk it
        (``GameError`` for a bad spec)."""
        game = load(config.game) if game is None else game
        if game.num_players < 2:
            raise ConfigError(f"PSRO needs a game of two or more players; {config.game!r} has "
                              f"{game.num_players}")
        play = turn_based(game.pyspiel_game) if turn_based_play else game.pyspiel_game
        try:  # a failed walk is made once a process (phantom tic-tac-toe: 7 s to fail)
            return cls(config, game, play, walk_game(play, config.max_nodes, name=config.game))
        except GameTooLargeError as err:
            why = str(err)
        except NotPerfectRecallError as err:  # no sequence form: sampled, as a large game
            why = f"{err}; its sequence form (exact best responses, exact payoffs) does not exist"
        return cls(config, game, play, None, why)

    @property
    def num_players(self) -> int:
        """Players of the game."""
        return self.play_game.num_players()

    def require_tree(self, purpose: str) -> SequenceFormGame:
        """The walked tree; :class:`GameTooLargeError` naming ``purpose`` when there is none."""
        if self.tree is None:
            raise GameTooLargeError(f"game {self.config.game!r} cannot be walked for {purpose}: "
                                    f"{self.walk_error}")
        return self.tree

    def difference(self, other: GameContext) -> str | None:
        """How ``other``'s game differs from this one in what a member plays (players,
        distinct actions, information-state tensor, walked or not, and walked information
        sets), in words, or None: a run's members play either game alike."""
        a, b = self.play_game, other.play_game
        for what, first, second in (
                ("players", a.num_players(), b.num_players()),
                ("distinct actions", a.num_distinct_actions(), b.num_distinct_actions()),
                ("information-state tensor", _tensor_shape(a), _tensor_shape(b)),
                ("walked", self.tree is not None, other.tree is not None)):
            if first != second:
                return f"its {what} differ ({first} against {second})"
        if self.tree is not None and self.tree.keys_digest() != other.tree.keys_digest():
            return "its information sets differ"
        return None


def _tensor_shape(game: pyspiel.Game) -> tuple[int, ...] | None:
    try:
        return tuple(game.information_state_tensor_shape())
    except RuntimeError:  # a game without information-state tensors
        return None

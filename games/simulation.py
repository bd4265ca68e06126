"""Batched simulation: many pyspiel states stepped together, tensors out as numpy arrays.

``VectorGame`` keeps ``num_envs`` states of one game. Chance nodes are resolved at once by a
seeded generator, so every state it exposes is a decision node or terminal. Simultaneous-move
games are played through OpenSpiel's turn-based conversion (the players still cannot see each
other's move). Observations are information-state tensors, or observation tensors where the
game provides none.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyspiel

from games.loading import GameError
from games.probe import failure

TERMINAL = pyspiel.PlayerId.TERMINAL


def sample_chance(state: pyspiel.State, u: float) -> int:
    """The chance outcome at cumulative probability ``u`` in [0, 1); :class:`GameError` for a
    chance node without outcomes."""
    outcomes = state.chance_outcomes()
    if not outcomes:
        raise GameError(f"game {state.get_game()}: a chance node has no outcome (after actions "
                        f"{state.history()})")
    total = 0.0
    for action, prob in outcomes:
        total += prob
        if u < total:
            return action
    return outcomes[-1][0]


def sample_actions(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row of ``probs`` (B, A), by inverse CDF with one uniform per row."""
    cum = np.cumsum(probs, axis=1)
    u = rng.random(len(probs))[:, None] * cum[:, -1:]
    return np.minimum((cum < u).sum(axis=1), probs.shape[1] - 1)


def observation_tensor(game: pyspiel.Game) -> str:
    """The state method neural policies observe through: ``"information_state_tensor"``, or
    ``"observation_tensor"`` where the game provides no information-state tensor. Raises
    :class:`GameError` when it provides neither."""
    kind = game.get_type()
    if kind.provides_information_state_tensor:
        return "information_state_tensor"
    if kind.provides_observation_tensor:
        return "observation_tensor"
    raise GameError(f"{game} provides neither information-state nor observation tensors, so "
                    f"neural policies cannot observe it")


def turn_based(game: pyspiel.Game) -> pyspiel.Game:
    """The game itself, or its turn-based version when moves are simultaneous."""
    if game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        return pyspiel.convert_to_turn_based(game)
    return game


def _failure(game: pyspiel.Game, err: Exception, during: str) -> GameError:
    if isinstance(err, GameError):
        return err
    return GameError(f"game {game}: the game failed while {during}: {failure(err)}")


class VectorGame:
    """``num_envs`` copies of a game advanced in lockstep by batches of actions.

    ``current_players()`` gives each state's player to move (``-4``, pyspiel's terminal id,
    for finished ones); :meth:`tensors` returns observations and legal-action masks of a set of
    states for one player; :meth:`step` applies one action per listed state; :meth:`reset`
    starts new episodes. All randomness (chance outcomes) comes from ``seed``, unless a reset
    gives episodes chance streams of their own (``reset(idx, chance_seeds)``: episodes started
    with the same chance seed draw the same uniform numbers at their chance nodes, so they are
    dealt the same outcomes wherever their chance nodes offer the same ones). An error of
    OpenSpiel's during play, or a state that is not terminal but has no legal action, is a
    :class:`GameError` naming the game.
    """

    def __init__(self, game: pyspiel.Game, num_envs: int, seed: int = 0):
        if num_envs < 1:
            raise ValueError(f"num_envs must be positive; got {num_envs}")
        self.game = turn_based(game)
        self._tensor = observation_tensor(self.game)
        self.obs_shape = tuple(getattr(self.game, f"{self._tensor}_shape")())
        self.obs_size = int(np.prod(self.obs_shape))
        self.num_actions = self.game.num_distinct_actions()
        self.num_players = self.game.num_players()
        self.rng = np.random.default_rng(seed)
        self.states = [None] * num_envs
        self.chance: list[np.random.Generator | None] = [None] * num_envs
        self.reset(np.arange(num_envs))

    @property
    def num_envs(self) -> int:
        """How many games are stepped together."""
        return len(self.states)

    def _resolve_chance(self, i: int) -> None:
        state, rng = self.states[i], self.chance[i]
        rng = self.rng if rng is None else rng
        while state.is_chance_node():
            state.apply_action(sample_chance(state, rng.random()))

    def current_players(self) -> np.ndarray:
        """The player to move in each game (``-4``, pyspiel's terminal id, where finished)."""
        players = np.array([s.current_player() for s in self.states], dtype=np.int64)
        wrong = np.flatnonzero((players >= self.num_players) | ((players < 0)
                                                                & (players != TERMINAL)))
        if wrong.size:
            state = self.states[int(wrong[0])]
            raise GameError(f"game {self.game}: the player to move is "
                            f"{int(players[wrong[0]])}, not a player of this "
                            f"{self.num_players}-player game (after actions {state.history()})")
        return players

    def tensors(self, idx: np.ndarray, player: int, observations: bool = True
                ) -> tuple[np.ndarray | None, np.ndarray]:
        """Observations (len(idx), obs_size) float32 and legal masks (len(idx), A) bool.
        With ``observations=False`` only the masks are built (observations are None): for
        actors that look states up instead of observing them."""
        states = [self.states[i] for i in idx]
        obs = None
        try:
            if observations:
                obs = np.array([getattr(s, self._tensor)(player) for s in states],
                               dtype=np.float32).reshape(len(states), self.obs_size)
            legal = [s.legal_actions(player) for s in states]
        except Exception as err:  # noqa: BLE001 - OpenSpiel's, or a Python game's own
            raise _failure(self.game, err, "reading states") from None
        empty = next((k for k, actions in enumerate(legal) if not actions
                      and states[k].current_player() == player), None)
        if empty is not None:  # the player to move has no move: the game cannot go on
            raise GameError(f"game {self.game}: player {player} has no legal action at a state "
                            f"that is not terminal (after actions {states[empty].history()}); "
                            f"such games cannot be played")
        ids = np.fromiter(itertools.chain.from_iterable(legal), dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= self.num_actions):
            bad = int(ids[(ids < 0) | (ids >= self.num_actions)][0])
            raise GameError(f"game {self.game}: legal action {bad} of player {player} is not "
                            f"one of the game's {self.num_actions} distinct actions")
        mask = np.zeros((len(states), self.num_actions), dtype=bool)
        rows = np.repeat(np.arange(len(states)), [len(actions) for actions in legal])
        mask[rows, ids] = True
        return obs, mask

    def step(self, idx: np.ndarray, actions: np.ndarray) -> None:
        """Apply ``actions[k]`` in game ``idx[k]`` (chance outcomes after it are sampled)."""
        try:
            for i, a in zip(idx, actions, strict=True):
                self.states[i].apply_action(int(a))
                self._resolve_chance(int(i))
        except Exception as err:  # noqa: BLE001 - OpenSpiel's, or a Python game's own
            raise _failure(self.game, err, "playing") from None

    def returns(self, idx: np.ndarray) -> np.ndarray:
        """Returns (len(idx), num_players) of finished states."""
        try:
            return np.array([self.states[i].returns() for i in idx], dtype=np.float64)
        except Exception as err:  # noqa: BLE001 - OpenSpiel's, or a Python game's own
            raise _failure(self.game, err, "reading returns") from None

    def reset(self, idx: np.ndarray, chance_seeds: np.ndarray | None = None) -> None:
        """Start new episodes in the games ``idx``; with ``chance_seeds`` (one integer per
        game), each new episode draws its chance outcomes from a stream of its own seeded by
        its entry (the same seed, the same draws), else from the shared ``seed``'s."""
        try:
            for k, i in enumerate(idx):
                self.chance[i] = None if chance_seeds is None else \
                    np.random.default_rng(int(chance_seeds[k]))
                self.states[i] = self.game.new_initial_state()
                self._resolve_chance(int(i))
        except Exception as err:  # noqa: BLE001 - OpenSpiel's, or a Python game's own
            raise _failure(self.game, err, "starting an episode") from None


def random_playout_rate(game: pyspiel.Game, seconds: float = 2.0, seed: int = 0) -> float:
    """Environment steps per second of plain pyspiel uniform-random playouts: the limit a
    rollout engine can approach. Chance steps are not counted."""
    import time

    game = turn_based(game)
    rng = np.random.default_rng(seed)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(sample_chance(state, rng.random()))
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.random() * len(legal))])
                steps += 1
    return steps / (time.perf_counter() - start)

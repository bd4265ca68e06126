"""The debate game (Irving, Christiano and Amodei 2018, "AI safety via debate"), on digits.

Two debaters argue about a handwritten digit before a fixed judge (:mod:`games.judge`):

1. chance draws an image, uniformly, from the *debate* part of the shipped digits
   (:mod:`games.digits`; the judge never saw these), keeping the first ``images`` of those
   with at least ``reveals`` nonzero pixels (0: all of them);
2. the debaters commit to labels. ``protocol=honest`` (the paper's): player 0 is the honest
   debater and claims the true label without choosing; player 1 chooses one of the nine
   others. ``protocol=free``: player 0 chooses any label, then player 1 any other one;
3. they take turns, player 0 first, revealing one nonzero pixel of the image to the judge, up
   to ``reveals`` pixels in all;
4. the judge, which sees only the revealed pixels and their values, scores the ten labels
   and picks the higher-scored of the two claims (a tie goes to player 1). The winner gets
   +1, the loser -1.

Both debaters see the image and everything said (a game of perfect information with chance);
the judge sees only the revealed pixels. Actions: a label 0..9 in the claim phase, a pixel
index ``row * size + column`` in the reveal phase. Information-state and observation tensors
are the same, of length ``2 P + 20`` for ``P = size * size`` pixels: the image (values / 16),
the revealed mask, then each player's claim one-hot (zeros before it is made). The judge is
the one for ``size``, ``reveals`` pixels and ``judge_seed`` (trained on first use, a few
seconds, then cached), or, where ``judge_file`` names a file :func:`games.judge.save` wrote
(a judge retrained during a run), that one: read once per process, so a new judge is a new
file.

Load it as ``games.load("debate(reveals=4)")`` or ``psro run --game "debate(reveals=4)"``.
``debate(images=4,size=4,reveals=2)`` is small enough to walk (exact oracles and exact
exploitability); the default (797 images, 8x8, 6 reveals) is not.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pyspiel

from games import judge as judges
from games.digits import MAX_VALUE, SHA256, digits

LABELS = 10
PROTOCOLS = ("honest", "free")
DEFAULTS = {"images": 0, "reveals": 6, "size": 8, "protocol": "honest", "judge_seed": 0,
            "judge_file": ""}

_GAME_TYPE = pyspiel.GameType(
    short_name="debate",
    long_name="Debate on handwritten digits before a sparse-pixel judge",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULTS)


@functools.cache
def debate_images(size: int, reveals: int, images: int) -> tuple[np.ndarray, np.ndarray]:
    """The images a debate draws from and their labels (see the module docstring)."""
    pictures, labels = digits("debate", size)
    keep = np.flatnonzero((pictures > 0).sum(axis=1) >= reveals)
    if images:
        keep = keep[:images]
    return pictures[keep], labels[keep]


def _check(params: dict) -> dict:
    values = {**DEFAULTS, **params}
    problem = judges.configuration_problem(values["size"], values["reveals"],
                                           values["judge_seed"], ("size", "reveals", "judge_seed"))
    if problem:
        raise ValueError(f"debate: {problem}")
    if values["protocol"] not in PROTOCOLS:
        raise ValueError(f"debate: protocol must be one of {', '.join(PROTOCOLS)}; got "
                         f"{values['protocol']!r}")
    if values["images"] < 0:
        raise ValueError(f"debate: images must be 0 (all) or a positive count; got "
                         f"{values['images']}")
    if values["judge_file"]:
        try:
            found = _judge_file(values["judge_file"])
        except ValueError as err:
            raise ValueError(f"debate: judge_file: {err}") from None
        if found.size != values["size"]:
            raise ValueError(f"debate: judge_file {values['judge_file']} holds a judge of "
                             f"{found.size}x{found.size} images; this game's size is "
                             f"{values['size']}")
    if not len(debate_images(values["size"], values["reveals"], values["images"])[1]):
        raise ValueError(f"debate: no image has {values['reveals']} nonzero pixels at size "
                         f"{values['size']}")
    return values


@dataclass(frozen=True)
class Debate:
    """One configuration of the game: its images, labels and judge, shared by its states
    (immutable, so a copied state shares it rather than copying its arrays)."""

    size: int
    reveals: int
    protocol: str
    images: np.ndarray
    labels: np.ndarray
    judge: judges.Judge

    @property
    def pixels(self) -> int:
        """Pixels of an image."""
        return self.size * self.size

    def __deepcopy__(self, memo) -> Debate:
        return self


_DEBATES: dict[tuple, Debate] = {}


@functools.cache
def _judge_file(path: str) -> judges.Judge:
    """The judge in a file (read once per process)."""
    return judges.load_file(path)


def _configuration(values: dict) -> Debate:
    """The :class:`Debate` of checked parameter values (built once per process)."""
    key = tuple(values[k] for k in DEFAULTS)
    if key not in _DEBATES:
        size, reveals = values["size"], values["reveals"]
        images, labels = debate_images(size, reveals, values["images"])
        judge = _judge_file(values["judge_file"]) if values["judge_file"] else \
            judges.judge(size, reveals, values["judge_seed"])
        _DEBATES[key] = Debate(size, reveals, values["protocol"], images, labels, judge)
    return _DEBATES[key]


class DebateGame(pyspiel.Game):
    """The debate game of the module docstring. Its configuration is read from the game's
    parameters whenever it is needed (a game unpickled in a worker process is not rebuilt
    through ``__init__``)."""

    def __init__(self, params=None):
        values = _check(dict(params or {}))
        debate = _configuration(values)
        claims = 2 if debate.protocol == "free" else 1
        info = pyspiel.GameInfo(
            num_distinct_actions=max(LABELS, debate.pixels),
            max_chance_outcomes=len(debate.labels), num_players=2, min_utility=-1.0,
            max_utility=1.0, utility_sum=0.0, max_game_length=claims + debate.reveals)
        super().__init__(_GAME_TYPE, info, {k: values[k] for k in DEFAULTS})

    @property
    def debate(self) -> Debate:
        """The game's configuration: images, labels, judge."""
        return _configuration({**DEFAULTS, **self.get_parameters()})

    def provenance(self) -> dict:
        """What the game is made of beyond its parameters, for a run's records: the judge's
        checksum and the digits file's."""
        return {"judge_sha256": self.debate.judge.checksum, "digits_sha256": SHA256}

    def min_tree_nodes(self) -> int:
        """The number of terminal histories, a lower bound on the tree's nodes (so that a walk
        of a game too large to walk is refused without walking it)."""
        debate = self.debate
        claims = 9 if debate.protocol == "honest" else 90
        nonzero = (debate.images > 0).sum(axis=1)
        return claims * sum(math.perm(int(n), debate.reveals) for n in nonzero)

    def new_initial_state(self):
        """A debate before chance has drawn its image."""
        return DebateState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        """The observer of information states (the history) and observations (the same
        tensor, a shorter string)."""
        perfect_recall = iig_obs_type is None or iig_obs_type.perfect_recall
        return DebateObserver(self.debate, perfect_recall, params)


class DebateState(pyspiel.State):
    """A debate in progress: the image, the claims, the revealed pixels."""

    def __init__(self, game: DebateGame):
        super().__init__(game)
        self.debate = game.debate
        self.image: int | None = None
        self.claims: list[int] = []
        self.revealed: list[int] = []
        self._returns: list[float] | None = None

    @property
    def label(self) -> int:
        """The true label of the drawn image."""
        return int(self.debate.labels[self.image])

    def current_player(self):
        """Chance, then the claims, then the reveals in turn, then terminal."""
        if self.image is None:
            return pyspiel.PlayerId.CHANCE
        if self._returns is not None:
            return pyspiel.PlayerId.TERMINAL
        if len(self.claims) < 2:
            return len(self.claims)
        return len(self.revealed) % 2

    def chance_outcomes(self):
        """Every image of the debate, uniformly."""
        n = len(self.debate.labels)
        return [(i, 1.0 / n) for i in range(n)]

    def _legal_actions(self, player):
        if len(self.claims) < 2:
            taken = set(self.claims)
            return [a for a in range(LABELS) if a not in taken]
        pixels = self.debate.images[self.image]
        shown = set(self.revealed)
        return [int(a) for a in np.flatnonzero(pixels > 0) if int(a) not in shown]

    def _apply_action(self, action):
        if self.image is None:
            self.image = int(action)
            if self.debate.protocol == "honest":
                self.claims.append(self.label)
            return
        if len(self.claims) < 2:
            self.claims.append(int(action))
            return
        self.revealed.append(int(action))
        if len(self.revealed) == self.debate.reveals:
            self._returns = [1.0, -1.0] if self.judge_choice() == 0 else [-1.0, 1.0]

    def revealed_mask(self) -> np.ndarray:
        """Which pixels the judge sees, shape (P,)."""
        mask = np.zeros(self.debate.pixels, bool)
        mask[self.revealed] = True
        return mask

    def judge_choice(self) -> int:
        """The player whose claim the judge picks from the revealed pixels (ties: player 1)."""
        scores = self.debate.judge.logits(self.revealed_mask()[None, :],
                                          self.debate.images[self.image][None, :])[0]
        return 0 if scores[self.claims[0]] > scores[self.claims[1]] else 1

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            return f"image {action}"
        if len(self.claims) < 2:
            return f"claim {action}"
        row, column = divmod(int(action), self.debate.size)
        return f"reveal ({row},{column})"

    def is_terminal(self):
        """After the last reveal."""
        return self._returns is not None

    def returns(self):
        """+1 for the debater the judge sides with, -1 for the other (0 before the end)."""
        return list(self._returns) if self._returns is not None else [0.0, 0.0]

    def __str__(self):
        return (f"image {self.image} label {None if self.image is None else self.label} "
                f"claims {self.claims} revealed {self.revealed}")


class DebateObserver:
    """Tensor: image (values / 16), revealed mask, each player's claim one-hot; the string is
    the whole history for information states and the position for observations."""

    def __init__(self, debate: Debate, perfect_recall: bool, params):
        if params:
            raise ValueError(f"debate: observation parameters are not supported; got {params}")
        self.perfect_recall = perfect_recall
        game = debate
        pixels = game.pixels
        self.tensor = np.zeros(2 * pixels + 2 * LABELS, np.float32)
        self.dict = {"image": self.tensor[:pixels], "revealed": self.tensor[pixels:2 * pixels],
                     "claims": self.tensor[2 * pixels:].reshape(2, LABELS)}

    def set_from(self, state: DebateState, player: int) -> None:
        """Fill the tensor from ``state`` (the same for both players)."""
        self.tensor.fill(0)
        if state.image is None:
            return
        self.dict["image"][:] = state.debate.images[state.image] / MAX_VALUE
        self.dict["revealed"][state.revealed] = 1
        for seat, claim in enumerate(state.claims):
            self.dict["claims"][seat, claim] = 1

    def string_from(self, state: DebateState, player: int) -> str:
        """The history (information states) or the position (observations)."""
        if state.image is None:
            return "start"
        shown = state.revealed if self.perfect_recall else sorted(state.revealed)
        return f"image {state.image} claims {state.claims} revealed {shown}"


pyspiel.register_game(_GAME_TYPE, DebateGame)

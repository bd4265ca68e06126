"""Exact best responses in liar's dice by a walk of its public tree, compiled with numba.

OpenSpiel's ``liars_dice(numdice=D, dice_sides=S)`` (two players, ``bidding_rule=reset-face``):
chance deals each player D dice, each player sees its own dice sorted (its *hand*), and the
players then bid in turn, each bid higher than the last (bid ``b`` is quantity ``b // S + 1`` of
face ``b % S + 1``, of all ``2 D`` dice), until one calls "Liar" (action ``2 D S``). The bid is
true when the dice showing its face, plus those showing the highest face (wild) where the bid's
face is another, number at least its quantity; the caller then loses 1 to the bidder, else the
bidder to the caller.

Every action but chance's is public, so a history is a hand per player and a *public state*:
the set of bids made, a bit mask over the ``B = 2 D S`` bids (a set of bids is made in one order
only, increasing), with player ``popcount(mask) % 2`` to act. A player's information set is its
hand and the public state. There are ``2^B`` public states (1,048,576 for 2 dice of 5 sides,
15 hands a player), so a walk is two sweeps over arrays of shape ``(2^B, hands)``:

- forward, in increasing mask order (a child mask is its parent plus a higher bit), each
  player's *reach*: the probability that its own actions lead to a public state, per hand, and
  to the "Liar" call there (the policy is asked once per information set, in batches);
- backward, in decreasing order, player p's best-response values: at p's public states the
  best action per hand, at the opponent's the sum over its actions, at a "Liar" call the
  chance- and opponent-reach-weighted returns.

The policy's own values come from the two reaches at the terminal states. Exploitability is the
toolkit's definition (NashConv / players, NashConv the sum of the players' best-response gains);
it agrees with OpenSpiel's ``exploitability`` to rounding (tested on the games OpenSpiel can walk).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from psro.kernels.base import InfoBatch, KernelError

MEMORY_LIMIT = 8 * 2**30
"""Largest memory (bytes) the walk's arrays may take: four of ``2^B x hands`` float64."""
CHUNK = 1 << 15
"""Public states whose information sets are asked of a policy in one batch."""


@dataclass(frozen=True)
class LiarsDiceRules:
    """The rules of one ``liars_dice`` variant, as arrays the compiled walk reads."""

    numdice: int
    sides: int
    hands: np.ndarray
    """(H, numdice) sorted faces (0-based) of each hand a player can hold."""
    hand_probs: np.ndarray
    """(H,) the chance probability of each hand."""
    true_bid: np.ndarray
    """(B, H, H) int8: whether bid b is true when player 0 holds hand i and player 1 hand j."""

    @classmethod
    def of(cls, game) -> LiarsDiceRules:
        """The rules of the pyspiel game ``game``; :class:`KernelError` for variants the
        kernel does not implement or that would not fit :data:`MEMORY_LIMIT`."""
        params = game.get_parameters()
        if game.get_type().short_name != "liars_dice" or params.get("players", 2) != 2 or \
                params.get("bidding_rule", "reset-face") != "reset-face":
            raise KernelError(f"the liar's dice kernel implements two players and "
                              f"bidding_rule=reset-face; got {game}")
        numdice, sides = int(params["numdice"]), int(params["dice_sides"])
        hands = np.array(list(itertools.combinations_with_replacement(range(sides), numdice)),
                         dtype=np.int64).reshape(-1, numdice)
        probs = np.array([math.factorial(numdice) / np.prod(
            [math.factorial(c) for c in np.bincount(h, minlength=sides)]) for h in hands])
        probs = probs / sides ** numdice
        bids = 2 * numdice * sides
        needed = 4 * 8 * 2 ** bids * len(hands)
        if needed > MEMORY_LIMIT:
            raise KernelError(f"{game} has 2^{bids} public states of {len(hands)} hands a "
                              f"player: an exact walk needs {needed / 2**30:.0f} GiB; the limit "
                              f"is {MEMORY_LIMIT / 2**30:.0f} GiB")
        counts = np.stack([np.bincount(h, minlength=sides) for h in hands])
        true_bid = np.zeros((bids, len(hands), len(hands)), dtype=np.int8)
        for b in range(bids):
            face, quantity = b % sides, b // sides + 1
            showing = counts[:, face] + (counts[:, sides - 1] if face != sides - 1 else 0)
            true_bid[b] = (showing[:, None] + showing[None, :]) >= quantity
        return cls(numdice, sides, hands, probs, true_bid)

    @property
    def num_bids(self) -> int:
        """B: the bids (actions 0 to B - 1; action B calls "Liar")."""
        return 2 * self.numdice * self.sides

    @property
    def num_hands(self) -> int:
        """H: the hands a player can hold."""
        return len(self.hands)

    def info_tensors(self, masks: np.ndarray, player: int) -> tuple[np.ndarray, np.ndarray]:
        """For every public state in ``masks`` (n,) and every hand, in that order (n * H
        rows): OpenSpiel's information-state tensor of ``player`` (float32: player one-hot,
        each die's face one-hot in sorted order, the bids made) and the legal actions."""
        n, hands, bids = len(masks), self.num_hands, self.num_bids
        obs = np.zeros((n, hands, 2 + self.numdice * self.sides + bids + 1), dtype=np.float32)
        obs[:, :, player] = 1.0
        for d in range(self.numdice):
            obs[:, np.arange(hands), 2 + d * self.sides + self.hands[:, d]] = 1.0
        bits = (masks[:, None] >> np.arange(bids)) & 1
        obs[:, :, 2 + self.numdice * self.sides:-1] = bits[:, None, :]
        legal = np.zeros((n, bids + 1), dtype=bool)
        top = top_bits(masks)
        legal[:, :bids] = np.arange(bids)[None, :] > top[:, None]
        legal[:, bids] = masks != 0
        return obs.reshape(n * hands, -1), np.repeat(legal, hands, axis=0)

    def info_strings(self, masks: np.ndarray) -> list[str]:
        """OpenSpiel's information-state strings for every public state and hand, in the order
        of :meth:`info_tensors` (the same for both players: the string names no player)."""
        dice = ["".join(str(f + 1) for f in hand) for hand in self.hands]
        out = []
        for mask in masks.tolist():
            bids = " ".join(f"{b // self.sides + 1}-{b % self.sides + 1}"
                            for b in range(self.num_bids) if mask >> b & 1)
            out += [f"{d} {bids}" if bids else d for d in dice]
        return out

    def batch(self, masks: np.ndarray, player: int, game) -> InfoBatch:
        """The information sets of ``player`` at the public states ``masks``, every hand of
        each (order of :meth:`info_tensors`), as a policy is asked at them."""
        obs, legal = self.info_tensors(masks, player)
        hands = self.num_hands

        def label(row: int) -> str:
            return repr(self.info_strings(masks[row // hands:row // hands + 1])[row % hands])

        return InfoBatch(player, obs, legal, lambda: self.info_strings(masks),
                         lambda: self.states(masks, player, game), label)

    def states(self, masks: np.ndarray, player: int, game) -> list:
        """A pyspiel state at each information set of ``player`` (order of
        :meth:`info_tensors`), for policies that can only be asked at states."""
        out = []
        for mask in masks.tolist():
            for hand in self.hands:
                state = game.new_initial_state()
                for p in range(2):
                    for face in (hand if p == player else [0] * self.numdice):
                        state.apply_action(int(face))
                for b in range(self.num_bids):
                    if mask >> b & 1:
                        state.apply_action(b)
                out.append(state)
        return out


def top_bits(masks: np.ndarray) -> np.ndarray:
    """The highest bid of each public state (-1 for the empty one)."""
    masks = np.asarray(masks, dtype=np.int64)
    return np.where(masks > 0, np.floor(np.log2(np.maximum(masks, 1))).astype(np.int64), -1)


def acting_masks(lo: int, hi: int, player: int) -> np.ndarray:
    """The public states in ``[lo, hi)`` where ``player`` is to act."""
    masks = np.arange(lo, hi, dtype=np.int64)
    return masks[_popcount_parity(masks) == player]


def _popcount_parity(masks: np.ndarray) -> np.ndarray:
    x = masks.copy()
    parity = np.zeros_like(x)
    while np.any(x):
        parity ^= x & 1
        x >>= 1
    return parity


@njit(cache=True)
def _top_and_count(m: int) -> tuple[int, int]:
    """The highest bid (-1 for none) and the number of bids of public state ``m``."""
    top, count = -1, 0
    while m:
        top += 1
        count += m & 1
        m >>= 1
    return top, count


@njit(cache=True)
def _propagate(lo: int, hi: int, player: int, bids: int, reach: np.ndarray,
               terminal: np.ndarray, probs: np.ndarray) -> None:
    """Reach of ``player``'s own actions from the public states in ``[lo, hi)`` to their
    children, and to the "Liar" call at each (``terminal``); ``probs[k, h, a]`` is its policy
    at the k-th state of the range where it acts (:func:`acting_masks`)."""
    k = 0
    hands = reach.shape[1]
    for m in range(lo, hi):
        top, count = _top_and_count(m)
        own = (count & 1) == player
        for b in range(top + 1, bids):
            child = m | (1 << b)
            for h in range(hands):
                reach[child, h] = reach[m, h] * (probs[k, h, b] if own else 1.0)
        if m > 0:
            for h in range(hands):
                terminal[m, h] = reach[m, h] * (probs[k, h, bids] if own else 1.0)
        if own:
            k += 1


@njit(cache=True)
def _best_response(player: int, bids: int, opponent: np.ndarray, true_bid: np.ndarray,
                   hand_probs: np.ndarray, value: np.ndarray, best: np.ndarray) -> float:
    """Player ``player``'s best-response values against the opponent whose reach to each
    "Liar" call is ``opponent`` (2^B, H); fills ``value`` (2^B, H), the chance- and
    opponent-weighted value of each of the player's information sets, and ``best`` (2^B, H),
    the best action at each of its own (-1 elsewhere). Returns the best-response value."""
    states, hands = value.shape
    for m in range(states - 1, -1, -1):
        top, count = _top_and_count(m)
        actor = count & 1
        bidder = 1 - actor
        for h in range(hands):
            liar = 0.0
            if m > 0:
                for o in range(hands):
                    w = opponent[m, o] * hand_probs[o]
                    if w == 0.0:
                        continue
                    truth = true_bid[top, h, o] if player == 0 else true_bid[top, o, h]
                    winner = bidder if truth else actor
                    liar += w if winner == player else -w
                liar *= hand_probs[h]
            if actor == player:
                chosen = bids if m > 0 else -1
                top_value = liar if m > 0 else -np.inf
                for b in range(top + 1, bids):
                    v = value[m | (1 << b), h]
                    if v > top_value:
                        top_value, chosen = v, b
                value[m, h] = top_value
                best[m, h] = chosen
            else:
                total = liar
                for b in range(top + 1, bids):
                    total += value[m | (1 << b), h]
                value[m, h] = total
                best[m, h] = -1
    root = 0.0
    for h in range(hands):
        root += value[0, h]
    return root


@njit(cache=True)
def _policy_value(bids: int, terminal0: np.ndarray, terminal1: np.ndarray,
                  true_bid: np.ndarray, hand_probs: np.ndarray) -> float:
    """Player 0's expected return when both play their policies (``terminal[q]``: player q's
    own reach to each "Liar" call)."""
    states, hands = terminal0.shape
    total = 0.0
    for m in range(1, states):
        top, count = _top_and_count(m)
        actor = count & 1
        bidder = 1 - actor
        for i in range(hands):
            a = terminal0[m, i] * hand_probs[i]
            if a == 0.0:
                continue
            for j in range(hands):
                w = a * terminal1[m, j] * hand_probs[j]
                if w == 0.0:
                    continue
                winner = bidder if true_bid[top, i, j] else actor
                total += w if winner == 0 else -w
    return total

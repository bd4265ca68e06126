"""Exact exploitability through a compiled kernel (:mod:`psro.kernels`): the policies of the
players, asked in batches at every information set, and the kernel's best responses.

A player's policy is a mixture ``[(policy, weight), ...]`` in sequence form (a run's
meta-policy: member k with weight ``w_k``; one policy with weight 1 otherwise): the kernel walks
each member's reach and sums them with their weights, which is exactly the behavioural policy of
the mixture. A member may be anything :func:`batch_probs` reads.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from psro.errors import PolicyError
from psro.evaluation.policy_actors import PolicyActor
from psro.evaluation.user_policies import (
    SUM_TOLERANCE,
    fill_entry,
    is_module,
    module_probs,
    openspiel_probs,
)
from psro.kernels.liars_dice import (
    CHUNK,
    LiarsDiceRules,
    _best_response,
    _policy_value,
    _propagate,
    acting_masks,
)


@dataclass
class KernelExploitability:
    """What an exact kernel measured: ``nash_conv``, ``exploitability`` (NashConv / players),
    per player ``gains`` (best-response value minus the policy's value) and ``values``,
    ``best_values`` (the best responses' values), ``best_actions[p]`` (the best response of
    player p: its action at each of its information sets, -1 where another player acts),
    ``seconds`` (``tabularise``: asking the policies; ``walk``: the compiled sweeps) and
    ``information_sets`` (how many the policies were asked at)."""

    nash_conv: float
    exploitability: float
    gains: np.ndarray
    values: np.ndarray
    best_values: np.ndarray
    best_actions: list[np.ndarray]
    seconds: dict = field(default_factory=dict)
    information_sets: int = 0
    kind: str = "exact"


def mixture_seats(populations: list[list], weights: list) -> list[list[tuple[object, float]]]:
    """Per player, the sequence-form mixture ``[(member, weight), ...]`` of a meta-policy
    (``populations[p]`` its members, ``weights[p]`` their weights), as
    :func:`exact_exploitability` takes it."""
    return [[(m, float(w)) for m, w in zip(pop, mix, strict=True)]
            for pop, mix in zip(populations, weights, strict=True)]


def batch_probs(policy, rules: LiarsDiceRules, masks: np.ndarray, player: int,
                game) -> np.ndarray:
    """``policy``'s action probabilities (len(masks) * H, actions) at ``player``'s information
    sets of the public states ``masks`` (each with every hand, :meth:`info_tensors` order).
    ``policy``: a toolkit member's actor (``action_probs(vg, idx, player, obs, mask)`` that
    reads tensors only: networks, the uniform member), a torch module, a mapping from
    information-state string to ``{action: probability}``, or an OpenSpiel ``Policy`` (asked
    at a state of each information set: slow, for small games). :class:`PolicyError` names the
    first information state where it is missing or not a distribution over the legal
    actions."""
    obs, legal = rules.info_tensors(masks, player)
    if isinstance(policy, PolicyActor):  # a user's policy wrapped for rollouts: read it
        policy = policy.policy
    if is_module(policy):
        probs = module_probs(policy, obs, legal, player)
    elif hasattr(policy, "action_probs"):  # an actor that plays from tensors and masks
        probs = np.asarray(policy.action_probs(None, None, player, obs, legal), dtype=float)
    elif isinstance(policy, Mapping):
        probs = np.zeros(legal.shape)
        for row, key in enumerate(rules.info_strings(masks)):
            entry = policy.get(key)
            if entry is None:
                raise PolicyError(f"the policy has no entry for information state {key!r} of "
                                  f"player {player}")
            fill_entry(probs, row, entry, key, player)
    elif hasattr(policy, "action_probabilities"):
        probs = np.zeros(legal.shape)
        keys = rules.info_strings(masks)
        for row, state in enumerate(rules.states(masks, player, game)):
            fill_entry(probs, row, openspiel_probs(policy, state, player, keys[row]),
                       keys[row], player)
    else:
        raise PolicyError(f"cannot read a policy from {type(policy).__name__}; give a network, "
                          f"a torch module, a mapping or an OpenSpiel policy")
    _check(probs, legal, rules, masks, player)
    return probs


def _check(probs: np.ndarray, legal: np.ndarray, rules: LiarsDiceRules, masks: np.ndarray,
           player: int) -> None:
    bad = ~np.isfinite(probs).all(axis=1) | (probs < -1e-12).any(axis=1) | \
        (np.where(legal, 0.0, np.abs(probs)) > 1e-12).any(axis=1) | \
        (np.abs(probs.sum(axis=1) - 1.0) > SUM_TOLERANCE)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        key = rules.info_strings(masks[row // rules.num_hands:row // rules.num_hands + 1])[
            row % rules.num_hands]
        raise PolicyError(f"the policy of player {player} is not a distribution over the legal "
                          f"actions at information state {key!r}")


def exact_exploitability(game, seats: list[list[tuple[object, float]]]) -> KernelExploitability:
    """Exact best responses, NashConv and exploitability of the policies ``seats`` (per
    player, a sequence-form mixture ``[(policy, weight), ...]``; weights sum to 1) in the
    pyspiel game ``game`` (``liars_dice``: :class:`~psro.kernels.liars_dice.KernelError` for
    another variant, before any work)."""
    rules = LiarsDiceRules.of(game)
    states, hands, bids = 2 ** rules.num_bids, rules.num_hands, rules.num_bids
    seconds = {"tabularise": 0.0, "walk": 0.0}
    asked = 0
    terminal = []
    for player, mixture in enumerate(seats):
        total = np.zeros((states, hands))
        for policy, weight in mixture:
            if weight == 0:
                continue
            reach = np.zeros((states, hands))
            reach[0] = 1.0
            own = np.zeros((states, hands))
            for lo in range(0, states, CHUNK):
                hi = min(states, lo + CHUNK)
                masks = acting_masks(lo, hi, player)
                start = time.perf_counter()
                probs = batch_probs(policy, rules, masks, player, game).reshape(
                    len(masks), hands, bids + 1)
                seconds["tabularise"] += time.perf_counter() - start
                asked += probs.shape[0] * hands
                start = time.perf_counter()
                _propagate(lo, hi, player, bids, reach, own, probs)
                seconds["walk"] += time.perf_counter() - start
            total += weight * own
        terminal.append(total)
    start = time.perf_counter()
    value = np.zeros((states, hands))
    best_values, best_actions = np.zeros(2), []
    for player in range(2):
        best = np.full((states, hands), -1, dtype=np.int8)
        best_values[player] = _best_response(player, bids, terminal[1 - player],
                                             rules.true_bid, rules.hand_probs, value, best)
        best_actions.append(best)
    v0 = _policy_value(bids, terminal[0], terminal[1], rules.true_bid, rules.hand_probs)
    seconds["walk"] += time.perf_counter() - start
    values = np.array([v0, -v0])
    gains = best_values - values
    nash_conv = float(gains.sum())
    return KernelExploitability(nash_conv, nash_conv / 2, gains, values, best_values,
                                best_actions, seconds, asked)

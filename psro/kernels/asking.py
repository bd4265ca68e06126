"""Policies asked in batches at a kernel's information sets (:class:`~psro.kernels.base.InfoBatch`):
networks and torch modules at the tensors, mappings and OpenSpiel tabular policies at the
strings, other OpenSpiel policies at a state of each."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

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
from psro.kernels.base import InfoBatch, KernelError, threads


def batch_probs(policy, batch: InfoBatch) -> np.ndarray:
    """``policy``'s action probabilities (N, actions) at the information sets of ``batch``.
    ``policy``: a toolkit member's actor (``action_probs(vg, idx, player, obs, mask)`` that
    reads tensors only: networks, the uniform member), a torch module, a mapping from
    information-state string to ``{action: probability}``, an OpenSpiel ``TabularPolicy``
    (read by strings), or another OpenSpiel ``Policy`` (asked at a state of each information
    set: slow, for small games; where the kernel can give states). :class:`PolicyError` names the
    first information state where it is missing or not a distribution over the legal
    actions, or says why the kernel cannot read it."""
    player, legal = batch.player, batch.legal
    if isinstance(policy, PolicyActor):  # a user's policy wrapped for rollouts: read it
        policy = policy.policy
    if is_module(policy):
        probs = module_probs(policy, batch.tensors, legal, player)
    elif hasattr(policy, "action_probs"):  # an actor that plays from tensors and masks
        probs = np.asarray(policy.action_probs(None, None, player, batch.tensors, legal),
                           dtype=float)
    elif _is_tabular(policy):
        probs = np.zeros(legal.shape)
        table = np.asarray(policy.action_probability_array, dtype=float)
        for row, key in enumerate(_asked(batch.strings)):
            at = policy.state_lookup.get(key)
            if at is None:
                raise PolicyError(f"the policy has no entry for information state {key!r} of "
                                  f"player {player}")
            probs[row, :table.shape[1]] = table[at, :legal.shape[1]]
    elif isinstance(policy, Mapping):
        probs = np.zeros(legal.shape)
        for row, key in enumerate(_asked(batch.strings)):
            entry = policy.get(key)
            if entry is None:
                raise PolicyError(f"the policy has no entry for information state {key!r} of "
                                  f"player {player}")
            fill_entry(probs, row, entry, key, player)
    elif hasattr(policy, "action_probabilities"):
        probs = np.zeros(legal.shape)
        states = _asked(batch.states)
        for row, state in enumerate(states):
            key = batch.label(row)
            fill_entry(probs, row, openspiel_probs(policy, state, player, key), key, player)
    else:
        raise PolicyError(f"cannot read a policy from {type(policy).__name__}; give a network, "
                          f"a torch module, a mapping or an OpenSpiel policy")
    _check(probs, batch)
    return probs


def asked_in_order(ask: Callable, policy, batches: Sequence[Callable[[], InfoBatch]]
                   ) -> Iterator[np.ndarray]:
    """``ask(policy, make())`` for each ``make`` of ``batches`` (each makes one batch of
    information sets), yielded in their order. A network or torch module is asked at up to
    :func:`~psro.kernels.base.threads` batches at once, each on one of as many threads with
    torch on one intra-op thread (a toolkit network then runs a block of rows at a time,
    :func:`psro.rl.networks.blocked_actor`: the same numbers, faster than torch's threads on
    one batch); other policies (Python lookups) one batch at a time. At most one batch more
    than the threads is made ahead of the one the caller reads."""
    if not is_module(policy.policy if isinstance(policy, PolicyActor) else policy):
        for make in batches:
            yield ask(policy, make())
        return
    workers = threads()
    from psro.rl.networks import one_thread

    with one_thread(), ThreadPoolExecutor(workers) as pool:
        pending: deque = deque()
        for make in batches:
            pending.append(pool.submit(lambda m: ask(policy, m()), make))
            if len(pending) > workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _is_tabular(policy) -> bool:
    from open_spiel.python import policy as openspiel_policy

    return isinstance(policy, openspiel_policy.TabularPolicy)


def _asked(source):
    try:
        return source()
    except KernelError as err:
        raise PolicyError(str(err)) from None


def _check(probs: np.ndarray, batch: InfoBatch) -> None:
    legal = batch.legal
    bad = ~np.isfinite(probs).all(axis=1) | (probs < -1e-12).any(axis=1) | \
        (np.where(legal, 0.0, np.abs(probs)) > 1e-12).any(axis=1) | \
        (np.abs(probs.sum(axis=1) - 1.0) > SUM_TOLERANCE)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise PolicyError(f"the policy of player {batch.player} is not a distribution over "
                          f"the legal actions at information state {batch.label(row)}")

"""Policies made outside the toolkit, read into per-player action-probability tables.

:func:`policy_tables` accepts, for a walked game tree:

- an OpenSpiel ``TabularPolicy`` (read row by row through its ``state_lookup``);
- any other OpenSpiel ``Policy`` (``action_probabilities(state, player)`` is called once per
  information set, at one state of it);
- a mapping from information-state string to ``{action: probability}`` (actions as ints or
  strings of ints; the JSON file of ``psro exploitability --policy``), or a list of such
  mappings, one per player (needed where two players share information-state strings);
- a torch module, or a list of them, one per player, called as ``module(obs)`` with a float32
  tensor of shape (batch, obs_size) holding the acting player's information-state tensors
  (observation tensors where the game has none) and returning logits of shape
  (batch, num_actions); illegal actions are masked before the softmax. A toolkit network
  (:class:`psro.neural.NeuralPolicy`) is used through its own masked ``probs``.

Every table is checked: each information set must be covered, probabilities must be finite,
in [0, 1], zero on illegal actions and sum to 1 within :data:`SUM_TOLERANCE`;
:class:`~psro.errors.PolicyError` names the first information set that fails.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from games.simulation import observation_tensor
from psro.errors import PolicyError
from psro.sequence_form import SequenceFormGame

SUM_TOLERANCE = 1e-6
"""Largest accepted ``|sum(probabilities) - 1|`` at an information set."""


def policy_tables(tree: SequenceFormGame, policy) -> list[np.ndarray]:
    """Per player, the action probabilities (num_infosets, num_actions) of ``policy`` at the
    information sets of ``tree`` (see the module docstring for what ``policy`` may be)."""
    from open_spiel.python import policy as os_policy

    n = tree.num_players
    if isinstance(policy, os_policy.TabularPolicy):
        tables = [_from_openspiel_tabular(tree, policy, p) for p in range(n)]
    elif isinstance(policy, os_policy.Policy):
        tables = [_from_openspiel(tree, policy, p) for p in range(n)]
    elif isinstance(policy, Mapping):
        tables = [_from_mapping(tree, policy, p) for p in range(n)]
    elif _is_module(policy):
        tables = [_from_module(tree, policy, p) for p in range(n)]
    elif isinstance(policy, Sequence) and not isinstance(policy, str) \
            and len(policy) == n and all(isinstance(x, Mapping) for x in policy):
        tables = [_from_mapping(tree, policy[p], p) for p in range(n)]
    elif isinstance(policy, Sequence) and not isinstance(policy, str) \
            and len(policy) == n and all(_is_module(x) for x in policy):
        tables = [_from_module(tree, policy[p], p) for p in range(n)]
    else:
        raise PolicyError(
            f"cannot read a policy from {type(policy).__name__}; accepted: an OpenSpiel Policy "
            f"or TabularPolicy, a mapping {{information state: {{action: probability}}}} or a "
            f"list of {n} of them, a torch module or a list of {n} of them")
    for p, table in enumerate(tables):
        check_table(tree, p, table)
    return tables


def check_table(tree: SequenceFormGame, player: int, table: np.ndarray) -> None:
    """Refuse a table that is not a policy, naming the first information set at fault."""
    keys, legal = tree.players[player].keys, tree.players[player].legal
    illegal = np.ones(table.shape, dtype=bool)
    for i, actions in enumerate(legal):
        illegal[i, actions] = False
    bad_value = ~np.isfinite(table) | (table < 0) | (table > 1)
    bad_mass = illegal & (table != 0)
    bad_sum = np.abs(np.where(illegal, 0.0, table).sum(axis=1) - 1) > SUM_TOLERANCE
    bad = np.flatnonzero(bad_value.any(axis=1) | bad_mass.any(axis=1) | bad_sum)
    if bad.size == 0:
        return
    i = int(bad[0])
    where = f"at information state {keys[i]!r} of player {player}"
    if bad_value[i].any():
        a = int(np.flatnonzero(bad_value[i])[0])
        raise PolicyError(f"probability {float(table[i, a])!r} of action {a} {where} is not "
                          f"in [0, 1]")
    if bad_mass[i].any():
        a = int(np.flatnonzero(bad_mass[i])[0])
        raise PolicyError(f"probability {table[i, a]:.6g} on illegal action {a} {where} "
                          f"(legal: {', '.join(map(str, legal[i]))})")
    raise PolicyError(f"probabilities {where} sum to {table[i].sum():.9g}, not 1 "
                      f"(tolerance {SUM_TOLERANCE})")


def _missing(tree: SequenceFormGame, player: int, index: int) -> PolicyError:
    return PolicyError(f"the policy has no entry for information state "
                       f"{tree.players[player].keys[index]!r} of player {player}")


def _from_openspiel_tabular(tree: SequenceFormGame, policy, player: int) -> np.ndarray:
    keys = tree.players[player].keys
    lookup = policy.state_lookup
    rows = [lookup.get(key) for key in keys]
    if None in rows:
        raise _missing(tree, player, rows.index(None))
    array = np.asarray(policy.action_probability_array, dtype=float)
    if array.shape[1] != tree.num_actions:
        raise PolicyError(f"the TabularPolicy has {array.shape[1]} actions; the game has "
                          f"{tree.num_actions}")
    return array[np.array(rows, dtype=np.int64)] if rows else np.zeros((0, tree.num_actions))


def _from_openspiel(tree: SequenceFormGame, policy, player: int) -> np.ndarray:
    table = np.zeros((tree.players[player].num_infosets, tree.num_actions))
    for i, state in enumerate(tree.representative_states(player)):
        try:
            probs = policy.action_probabilities(state, player)
        except (KeyError, LookupError):
            raise _missing(tree, player, i) from None
        _fill_row(tree, player, table, i, probs)
    return table


def _from_mapping(tree: SequenceFormGame, mapping: Mapping, player: int) -> np.ndarray:
    table = np.zeros((tree.players[player].num_infosets, tree.num_actions))
    for i, key in enumerate(tree.players[player].keys):
        probs = mapping.get(key)
        if probs is None:
            raise _missing(tree, player, i)
        if not isinstance(probs, Mapping):
            raise PolicyError(f"the entry for information state {key!r} must map actions to "
                              f"probabilities; got {type(probs).__name__}")
        _fill_row(tree, player, table, i, probs)
    return table


def _fill_row(tree: SequenceFormGame, player: int, table: np.ndarray, i: int,
              probs: Mapping) -> None:
    for action, prob in probs.items():
        try:
            a = int(action)
            value = float(prob)
        except (TypeError, ValueError):
            raise PolicyError(f"entry {action!r}: {prob!r} at information state "
                              f"{tree.players[player].keys[i]!r} is not action id: "
                              f"probability") from None
        if not 0 <= a < tree.num_actions:
            raise PolicyError(f"action {a} at information state "
                              f"{tree.players[player].keys[i]!r} is not an action of the game "
                              f"(0 to {tree.num_actions - 1})")
        table[i, a] = value


def _is_module(policy) -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return False
    from psro.neural import NeuralPolicy

    return isinstance(policy, (torch.nn.Module, NeuralPolicy))


def _from_module(tree: SequenceFormGame, module, player: int) -> np.ndarray:
    states = tree.representative_states(player)
    tensor = observation_tensor(tree.game)
    obs = np.array([getattr(s, tensor)(player) for s in states], dtype=np.float32)
    obs = obs.reshape(len(states), -1)
    mask = np.zeros((len(states), tree.num_actions), dtype=bool)
    for i, legal in enumerate(tree.players[player].legal):
        mask[i, legal] = True
    return module_probs(module, obs, mask, player)


def module_probs(module, obs: np.ndarray, mask: np.ndarray, player: int) -> np.ndarray:
    """A torch module's (or toolkit network's) action probabilities at observations ``obs``
    (batch, obs_size), illegal actions (``mask`` False) masked before the softmax."""
    import torch

    from psro.neural import NeuralPolicy

    if isinstance(module, NeuralPolicy):
        return np.asarray(module.probs(obs, mask), dtype=float)
    with torch.no_grad():
        try:
            logits = module(torch.from_numpy(obs))
        except Exception as err:  # noqa: BLE001 - the user's module: name the failure
            raise PolicyError(f"the torch module of player {player} failed on a batch of shape "
                              f"{tuple(obs.shape)}: {type(err).__name__}: {err}") from None
    logits = np.asarray(logits.detach().cpu().numpy(), dtype=float)
    if logits.shape != mask.shape:
        raise PolicyError(f"the torch module of player {player} returned shape "
                          f"{logits.shape}; expected (batch, num_actions) = {mask.shape}")
    logits = np.where(mask, logits, -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    return probs / probs.sum(axis=1, keepdims=True)


class PolicyActor:
    """Plays a user's policy in batched rollouts where no tree is walked (games too large for
    exact evaluation): information-state strings are looked up (mappings), OpenSpiel's
    ``action_probabilities`` is called (Policy objects), or the module is run on observation
    tensors (torch modules). Each distribution is checked as :func:`check_table` does."""

    def __init__(self, policy, player: int):
        self.policy, self.player = policy, player
        self.observes = _is_module(policy)

    def action_probs(self, vg, idx, player, obs, mask) -> np.ndarray:
        """The policy's probabilities at the states (checked to be distributions over the legal
        actions)."""
        if self.observes:
            probs = module_probs(self.policy, obs, mask, player)
        else:
            probs = np.zeros(mask.shape)
            for row, i in enumerate(idx):
                state = vg.states[i]
                key = state.information_state_string(player)
                if isinstance(self.policy, Mapping):
                    entry = self.policy.get(key)
                    if entry is None:
                        raise PolicyError(f"the policy has no entry for information state "
                                          f"{key!r} of player {player}")
                else:
                    entry = self.policy.action_probabilities(state, player)
                for action, prob in entry.items():
                    probs[row, int(action)] = float(prob)
        bad = np.flatnonzero(~np.isfinite(probs).all(axis=1) | (probs < 0).any(axis=1)
                             | (probs * ~mask).any(axis=1)
                             | (np.abs(probs.sum(axis=1) - 1) > SUM_TOLERANCE))
        if bad.size:
            state = vg.states[idx[int(bad[0])]]
            raise PolicyError(f"the policy's probabilities at information state "
                              f"{state.information_state_string(player)!r} of player "
                              f"{player} are not a distribution over the legal actions")
        return probs

def policy_actors(policy, num_players: int) -> list[PolicyActor]:
    """One :class:`PolicyActor` per player (a list of per-player policies, or one for all)."""
    if isinstance(policy, Sequence) and not isinstance(policy, str) \
            and len(policy) == num_players:
        return [PolicyActor(policy[p], p) for p in range(num_players)]
    return [PolicyActor(policy, p) for p in range(num_players)]

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
  (:class:`psro.rl.networks.NeuralPolicy`) is used through its own masked ``probs``.

Every table is checked: each information set must be covered, probabilities must be finite,
in [0, 1], zero on illegal actions and sum to 1 within :data:`SUM_TOLERANCE`;
:class:`~psro.errors.PolicyError` names the first information set that fails.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np

from games.simulation import observation_tensor
from psro.errors import PolicyError
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.storage.text_files import one_line

SUM_TOLERANCE = 1e-6
"""Largest accepted ``|sum(probabilities) - 1|`` at an information set."""


def policy_tables(tree: SequenceFormGame, policy) -> list[np.ndarray]:
    """Per player, the action probabilities (num_infosets, num_actions) of ``policy`` at the
    information sets of ``tree`` (see the module docstring for what ``policy`` may be)."""
    tables = []
    for p, one in enumerate(per_player(policy, tree.num_players)):
        table = _table(tree, one, p)
        check_table(tree, p, table)
        tables.append(np.clip(table, 0.0, 1.0))  # rounding, within SUM_TOLERANCE
    return tables


def per_player(policy, num_players: int) -> list:
    """The policy each player follows: a list or tuple gives one per player (its length must
    be ``num_players``), anything else is followed by every player. :class:`PolicyError` for
    a list of the wrong length, or a toolkit network in a seat it was not trained for (its
    metadata names its player)."""
    if isinstance(policy, (list, tuple)):
        if len(policy) != num_players:
            raise PolicyError(f"{len(policy)} policies were given for a game of "
                              f"{num_players} players; give one for every player, in player "
                              f"order, or one for all")
        seats = list(policy)
    else:
        seats = [policy] * num_players
    for p, one in enumerate(seats):
        trained_for = getattr(one, "player", None) if _is_network(one) else None
        if trained_for is not None and trained_for != p:
            where = f"player {trained_for}" if trained_for < num_players else \
                f"player {trained_for}, which this {num_players}-player game does not have"
            raise PolicyError(f"the toolkit network given for player {p} was trained as "
                              f"{where} (its metadata); give each player's network in player "
                              f"order")
    return seats


def _table(tree: SequenceFormGame, policy, player: int) -> np.ndarray:
    from open_spiel.python import policy as os_policy

    if isinstance(policy, os_policy.TabularPolicy):
        return _from_openspiel_tabular(tree, policy, player)
    if isinstance(policy, os_policy.Policy):
        return _from_openspiel(tree, policy, player)
    if _is_cpp_policy(policy):
        return _from_cpp_policy(tree, policy, player)
    if isinstance(policy, Mapping):
        return _from_mapping(tree, policy, player)
    if is_module(policy):
        return _from_module(tree, policy, player)
    raise PolicyError(
        f"cannot read a policy from {type(policy).__name__} (player {player}); accepted: an "
        f"OpenSpiel Policy or TabularPolicy (Python or C++), a mapping {{information state: "
        f"{{action: probability}}}}, a torch module or a toolkit network, or a list of "
        f"{tree.num_players} of them, one per player")


def check_table(tree: SequenceFormGame, player: int, table: np.ndarray) -> None:
    """Refuse a table that is not a policy, naming the first information set at fault
    (probabilities are allowed :data:`SUM_TOLERANCE` of rounding outside [0, 1], as a
    reach-weighted mixture's quotients have)."""
    keys, legal = tree.players[player].keys, tree.players[player].legal
    illegal = np.ones(table.shape, dtype=bool)
    for i, actions in enumerate(legal):
        illegal[i, actions] = False
    bad_value = ~np.isfinite(table) | (table < -SUM_TOLERANCE) | (table > 1 + SUM_TOLERANCE)
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
    keys = tree.players[player].keys
    for i, state in enumerate(tree.representative_states(player)):
        _fill_row(tree, player, table, i, openspiel_probs(policy, state, player, keys[i]))
    return table


def _is_cpp_policy(policy) -> bool:
    import pyspiel

    return isinstance(policy, pyspiel.Policy)


def _from_cpp_policy(tree: SequenceFormGame, policy, player: int) -> np.ndarray:
    """A C++ ``pyspiel.Policy`` (e.g. ``CFRPlusSolver.average_policy()``): looked up by
    information-state string, or asked at a representative state where that fails."""
    table = np.zeros((tree.players[player].num_infosets, tree.num_actions))
    keys = tree.players[player].keys
    states = None
    for i, key in enumerate(keys):
        try:
            probs = dict(policy.get_state_policy(key))
        except Exception:  # noqa: BLE001 - not a tabular C++ policy: ask at a state
            states = states or tree.representative_states(player)
            try:
                probs = dict(policy.action_probabilities(states[i]))
            except Exception as err:  # noqa: BLE001 - the user's policy: name the failure
                raise PolicyError(f"the policy's action_probabilities failed at information "
                                  f"state {key!r} of player {player}: {type(err).__name__}: "
                                  f"{one_line(err)}") from None
        if not probs:
            raise _missing(tree, player, i)
        _fill_row(tree, player, table, i, probs)
    return table


def openspiel_probs(policy, state, player: int, key: str) -> Mapping:
    """``policy.action_probabilities(state, player)``, its failures as :class:`PolicyError`."""
    try:
        probs = policy.action_probabilities(state, player)
    except (KeyError, LookupError):
        raise PolicyError(f"the policy has no entry for information state {key!r} of player "
                          f"{player}") from None
    except Exception as err:  # noqa: BLE001 - the user's policy: name the failure
        raise PolicyError(f"the policy's action_probabilities failed at information state "
                          f"{key!r} of player {player}: {type(err).__name__}: "
                          f"{one_line(err)}") from None
    if not isinstance(probs, Mapping):
        raise PolicyError(f"the policy's action_probabilities returned "
                          f"{type(probs).__name__} at information state {key!r} of player "
                          f"{player}; expected a mapping {{action: probability}}")
    return probs


def _from_mapping(tree: SequenceFormGame, mapping: Mapping, player: int) -> np.ndarray:
    table = np.zeros((tree.players[player].num_infosets, tree.num_actions))
    for i, key in enumerate(tree.players[player].keys):
        probs = mapping.get(key)
        if probs is None:
            raise _missing(tree, player, i)
        _fill_row(tree, player, table, i, probs)
    return table


def _fill_row(tree: SequenceFormGame, player: int, table: np.ndarray, i: int,
              probs: Mapping) -> None:
    key = tree.players[player].keys[i]
    fill_entry(table, i, probs, key, player)


def fill_entry(table: np.ndarray, row: int, probs, key: str, player: int) -> None:
    """Row ``row`` of ``table`` from one ``{action: probability}`` entry (checked to be
    integer actions of the game and numbers; :class:`PolicyError` naming ``key`` otherwise)."""
    if not isinstance(probs, Mapping):
        raise PolicyError(f"the entry for information state {key!r} of player {player} must "
                          f"map actions to probabilities; got {type(probs).__name__}")
    num_actions = table.shape[1]
    for action, prob in probs.items():
        a = action_id(action)
        if a is None or not is_probability_number(prob):
            raise PolicyError(f"entry {action!r}: {prob!r} at information state {key!r} of "
                              f"player {player} is not action id: probability (an integer "
                              f"action and a number)")
        if not 0 <= a < num_actions:
            raise PolicyError(f"action {a} at information state {key!r} of player {player} "
                              f"is not an action of the game (0 to {num_actions - 1})")
        table[row, a] = float(prob)


def action_id(action) -> int | None:
    """An action given as an integer or a string of one (JSON keys are strings); None for
    anything else (booleans, floats, other text)."""
    if isinstance(action, (bool, np.bool_)):
        return None
    if isinstance(action, (int, np.integer)):
        return int(action)
    if isinstance(action, str) and action.strip().lstrip("-").isdigit() \
            and len(action.strip()) < 20:
        return int(action)
    return None


def is_probability_number(value) -> bool:
    """A real number (not a boolean and not text): what a probability may be given as."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_network(policy) -> bool:
    from psro.rl.networks import NeuralPolicy

    return isinstance(policy, NeuralPolicy)


def is_module(policy) -> bool:
    """Whether ``policy`` is a torch module or a toolkit network (read on tensors)."""
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return False
    from psro.rl.networks import NeuralPolicy

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
    (batch, obs_size), illegal actions (``mask`` False) masked before the softmax.
    :class:`PolicyError` in one line when the module does not fit the game (input size,
    output shape, an output that is not a tensor, or an exception it raises)."""
    import torch

    if _is_network(module):
        expected = (module.net.actor[0].in_features, module.net.actor[-1].out_features)
        if expected != (obs.shape[1], mask.shape[1]):
            raise PolicyError(f"the toolkit network of player {player} takes observations of "
                              f"size {expected[0]} and has {expected[1]} actions; this game "
                              f"has observations of size {obs.shape[1]} and {mask.shape[1]} "
                              f"actions")
        return np.asarray(module.probs(obs, mask), dtype=float)
    with torch.no_grad():
        try:
            logits = module(torch.from_numpy(obs))
        except Exception as err:  # noqa: BLE001 - the user's module: name the failure
            raise PolicyError(f"the torch module of player {player} failed on a batch of shape "
                              f"{tuple(obs.shape)}: {type(err).__name__}: {one_line(err)}") \
                from None
    if not isinstance(logits, torch.Tensor):
        raise PolicyError(f"the torch module of player {player} returned "
                          f"{type(logits).__name__}; expected a tensor of logits of shape "
                          f"(batch, num_actions) = {mask.shape}")
    logits = np.asarray(logits.detach().cpu().double().numpy(), dtype=float)
    if logits.shape != mask.shape:
        raise PolicyError(f"the torch module of player {player} returned shape "
                          f"{logits.shape}; expected (batch, num_actions) = {mask.shape}")
    if np.isnan(logits).any() or np.isposinf(logits).any():
        raise PolicyError(f"the torch module of player {player} returned NaN or +inf logits")
    logits = np.where(mask, logits, -np.inf)
    top = logits.max(axis=1, keepdims=True)
    if not np.isfinite(top).all():
        raise PolicyError(f"the torch module of player {player} gives every legal action "
                          f"a logit of -inf at some state")
    probs = np.exp(logits - top)
    return probs / probs.sum(axis=1, keepdims=True)

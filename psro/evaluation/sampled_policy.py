"""A run's meta-policy on any game, walked or not: each player's population of members
(networks, the uniform member) mixed by its meta-strategy, as an OpenSpiel ``Policy``.

Two ways to play a mixture, which give the same distribution over play:

- *a member drawn per episode* by the mixture (:meth:`SampledMetaPolicy.draw`: a policy of one
  member per player, for one episode), which is how PSRO defines a meta-policy and how the
  toolkit's rollouts play it;
- *the behavioural mixture* (:meth:`SampledMetaPolicy.action_probabilities`): at a state, each
  member's probabilities weighted by its meta-strategy weight times the probability that it
  took the player's own earlier actions of this episode (Kuhn's theorem: behaviourally equal to
  the per-episode draw; the same reach weighting as :class:`psro.MetaPolicy`, computed from
  the state's history instead of a walked tree). Each call replays the history: one network
  pass per member and own earlier decision.

Members observe information-state tensors (observation tensors where the game has none), as
in training. Simultaneous-move games are played in their turn-based form, as the PPO oracle
played them.
"""

from __future__ import annotations

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

from games.simulation import observation_tensor


class SampledMetaPolicy(os_policy.Policy):
    """``populations[p]``: player p's members (with ``probs(obs, mask)`` like
    :class:`psro.rl.networks.NeuralPolicy`, or the uniform member); ``weights[p]``: a mixture
    over them (1-D, summing to 1). ``game``: the pyspiel game the members were trained on
    (turn-based where the game is simultaneous)."""

    def __init__(self, game: pyspiel.Game, populations: list[list],
                 weights: list[np.ndarray]):
        super().__init__(game, list(range(game.num_players())))
        self.populations = [list(pop) for pop in populations]
        self.weights = [np.asarray(w, dtype=float) for w in weights]
        self.tensor = observation_tensor(game)
        self.num_actions = game.num_distinct_actions()

    @property
    def seats(self) -> tuple[list[list], list[np.ndarray]]:
        """``(populations, weights)``: the members and their mixtures, as rollouts play them
        (a member drawn per episode)."""
        return self.populations, self.weights

    def member_probs(self, member, state: pyspiel.State, player: int) -> np.ndarray:
        """One member's action probabilities at ``state`` for ``player``, shape
        (num_actions,), zero off the legal actions."""
        legal = state.legal_actions(player)
        mask = np.zeros((1, self.num_actions), dtype=bool)
        mask[0, legal] = True
        probs = getattr(member, "probs", None)
        if probs is None:  # the uniform member
            out = mask[0].astype(float)
            return out / out.sum()
        obs = np.asarray(getattr(state, self.tensor)(player), dtype=np.float32)[None]
        return np.asarray(probs(obs, mask), dtype=float)[0]

    def posterior(self, state: pyspiel.State, player: int) -> np.ndarray:
        """The mixture over ``player``'s members given its own actions so far this episode
        (the meta-strategy where none were taken, or where no member could have taken them)."""
        weights = self.weights[player].copy()
        members = self.populations[player]
        if len(members) > 1:
            replay = self.game.new_initial_state()
            for action in state.history():
                if replay.current_player() == player:
                    weights *= [self.member_probs(m, replay, player)[action] for m in members]
                replay.apply_action(action)
        total = weights.sum()
        return weights / total if total > 0 else self.weights[player]

    def action_probabilities(self, state, player_id=None) -> dict[int, float]:
        """The behavioural mixture at ``state`` (see the module docstring)."""
        player = state.current_player() if player_id is None else player_id
        weights = self.posterior(state, player)
        probs = sum(w * self.member_probs(m, state, player)
                    for w, m in zip(weights, self.populations[player], strict=True) if w > 0)
        return {int(a): float(probs[a]) for a in state.legal_actions(player)}

    def draw(self, rng: np.random.Generator) -> SampledMetaPolicy:
        """One member per player drawn by the mixture: the policy of one episode."""
        picked = [[pop[int(rng.choice(len(pop), p=w))]]
                  for pop, w in zip(self.populations, self.weights, strict=True)]
        return SampledMetaPolicy(self.game, picked, [np.ones(1)] * len(picked))

"""The PPO oracle's tables of a walked game: the network is queried on one torch thread."""

import numpy as np
import torch

from psro.oracles.ppo import PPOOracle
from psro.oracles.spec import Target
from psro.rl.config import PPOConfig


def test_networks_are_tabularised_on_one_torch_thread_and_the_caller_keeps_its_own(kuhn):
    """Every information set's probabilities come from one batched forward pass; it runs on
    one torch thread (the same tables on any machine's core count) and the caller's thread
    count is back afterwards."""
    game, tree = kuhn
    seen = []

    class Network:
        metadata = {"env_steps": 10}

        def probs(self, obs, mask):
            seen.append(torch.get_num_threads())
            return mask / mask.sum(axis=1, keepdims=True)

    oracle = PPOOracle(game, tree, PPOConfig(), 0)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        [response] = oracle.targeted_responses(1, [Target(0, ())], [(Network(), [])])
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert seen == [1]
    np.testing.assert_allclose(response.member.probs, tree.uniform_policy(0))

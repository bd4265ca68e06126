"""Reinforcement learning: PPO (its options, networks, rollouts and training)."""

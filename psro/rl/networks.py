"""Neural policies: an actor-critic MLP over observation tensors, with legal-action masking,
saved as a torch state dict plus JSON metadata (no pickled code)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch
from torch import nn

from psro.errors import RunDirectoryError
from psro.rl.config import MAX_WIDTH
from psro.storage.files import atomic_write_bytes, atomic_write_text
from psro.storage.text_files import one_line, read_json

FORMAT_VERSION = 1


@contextmanager
def one_thread() -> Iterator[None]:
    """Torch's intra-op threads at 1 for the block, then back to what they were. The networks
    here are small: one thread runs them at least as fast, workers running side by side (one
    process per core) do not oversubscribe the cores, and the numbers do not depend on the
    machine's core count. PPO training and Monte Carlo simulation run inside it."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _layer(inputs: int, outputs: int, std: float = np.sqrt(2)) -> nn.Linear:
    layer = nn.Linear(inputs, outputs)
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, 0.0)
    return layer


def _mlp(inputs: int, hidden: tuple[int, ...], outputs: int, out_std: float) -> nn.Sequential:
    layers: list[nn.Module] = []
    size = inputs
    for width in hidden:
        layers += [_layer(size, width), nn.Tanh()]
        size = width
    layers.append(_layer(size, outputs, out_std))
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """Separate actor and critic MLPs (tanh, orthogonal initialisation, as in CleanRL);
    ``critic=False``: the actor alone (critic-free methods such as GRPO; :meth:`value` is then
    unavailable)."""

    def __init__(self, obs_size: int, num_actions: int, hidden: tuple[int, ...] = (128, 128),
                 critic: bool = True):
        super().__init__()
        self.actor = _mlp(obs_size, hidden, num_actions, 0.01)
        self.critic = _mlp(obs_size, hidden, 1, 1.0) if critic else None

    def logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Action logits with illegal actions set to -inf (they get probability exactly 0)."""
        return self.actor(obs).masked_fill(~mask, float("-inf"))

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """State values, shape (batch,); a ``TypeError`` for an actor without a critic."""
        if self.critic is None:
            raise TypeError("this network has no critic (it was trained without one)")
        return self.critic(obs).squeeze(-1)


BLOCK_ROWS = 8192
"""Rows of a large batch that :func:`blocked_actor` pushes through the actor at a time (their
activations stay in the processor's caches)."""


def blocked_actor(actor: nn.Sequential, obs: torch.Tensor) -> torch.Tensor:
    """``actor(obs)``, the same numbers bit for bit (tests compare them). On one intra-op
    thread (:func:`one_thread`: how the exact kernels ask networks, one batch a thread) a batch
    of more than :data:`BLOCK_ROWS` rows is run a block of rows at a time with each activation
    applied in place, for an MLP of ``Linear`` layers (with bias) and ``Tanh`` that starts with
    a ``Linear``: about 1.7 times faster than the module's forward on one thread, and faster
    than torch's two threads on one batch. Every block holds from one to two blocks' rows (the
    rest joins the last): a matrix product of that many rows computes each row as the
    product of the whole batch does (a product of a few rows may take another path and differ
    in the last bits). Otherwise (several intra-op threads, whose parallel forward of the whole
    batch blocks would slow, another module, a small batch): ``actor(obs)``."""
    layers = list(actor)
    starts = list(range(0, len(obs), BLOCK_ROWS))
    if len(starts) < 2 or torch.get_num_threads() != 1 or not layers or \
            not isinstance(layers[0], nn.Linear) or not all(
                (isinstance(m, nn.Linear) and m.bias is not None) or isinstance(m, nn.Tanh)
                for m in layers):
        return actor(obs)
    if len(obs) - starts[-1] < BLOCK_ROWS:
        starts.pop()  # the rest joins the last block: no block is small
    out = None
    for lo, hi in zip(starts, [*starts[1:], len(obs)], strict=True):
        h = obs[lo:hi]
        for layer in layers:
            h = torch.addmm(layer.bias, h, layer.weight.t()) if isinstance(layer, nn.Linear) \
                else h.tanh_()
        if out is None:
            out = torch.empty((len(obs), h.shape[1]), dtype=h.dtype)
        out[lo:hi] = h
    return out


class NeuralPolicy:
    """A trained network as a population member of one player.

    ``metadata`` records the game, player, observation shape, hidden sizes and the PPO
    hyperparameters; :meth:`save` writes ``<path>.pt`` (state dict) and ``<path>.json``.
    With ``metadata["greedy"]`` true the member plays the network's most probable legal action
    (a pure strategy; ties go to the lowest action index) instead of sampling from it.
    """

    kind = "neural"

    def __init__(self, player: int, net: ActorCritic, metadata: dict, name: str = ""):
        self.player = player
        self.net = net
        self.metadata = dict(metadata)
        self.name = name

    @property
    def greedy(self) -> bool:
        """Whether the member plays its most probable legal action instead of sampling."""
        return bool(self.metadata.get("greedy", False))

    @torch.no_grad()
    def probs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Action probabilities (B, A) for observations (B, obs_size) and masks (B, A): the
        network's softmax, or one-hot on its most probable legal action when greedy (the
        actor run by :func:`blocked_actor`)."""
        obs_t, mask_t = torch.as_tensor(obs), torch.as_tensor(mask)
        logits = blocked_actor(self.net.actor, obs_t).masked_fill(~mask_t, float("-inf"))
        if self.greedy:
            out = np.zeros(logits.shape)
            if len(out):
                out[np.arange(len(out)), logits.argmax(dim=-1).numpy()] = 1.0
            return out
        return torch.softmax(logits, dim=-1).double().numpy()

    def action_probs(self, vg, idx, player, obs, mask) -> np.ndarray:
        """The network's masked action probabilities at the states' observations."""
        return self.probs(obs, mask)

    def actor(self, tree=None) -> NeuralPolicy:
        """A network plays itself in rollouts."""
        return self

    def save(self, path: str | Path) -> None:
        """Write the weights (``.pt``) and metadata (``.json``) atomically."""
        path = Path(path)
        atomic_write_bytes(path.with_suffix(".pt"),
                           lambda h: torch.save(self.net.state_dict(), h))
        meta = {"format_version": FORMAT_VERSION, "player": self.player, "name": self.name,
                **self.metadata}
        atomic_write_text(path.with_suffix(".json"), json.dumps(meta, indent=1))

    @classmethod
    def load(cls, path: str | Path) -> NeuralPolicy:
        """Read a network written by :meth:`save`. :class:`~psro.errors.RunDirectoryError`
        names the file when it is missing, corrupt, of another format version, or when its
        metadata does not describe its weights (the layer sizes are read from the weights, so
        a crafted ``obs_shape`` or ``num_actions`` allocates nothing)."""
        path = Path(path)
        meta_file = path.with_suffix(".json")
        try:
            meta = read_json(meta_file, limit=MAX_METADATA_BYTES)
        except ValueError as err:
            raise RunDirectoryError(f"cannot read policy metadata {meta_file}: {err}") from None
        if not isinstance(meta, dict) or meta.get("format_version") != FORMAT_VERSION:
            version = meta.get("format_version") if isinstance(meta, dict) else None
            raise RunDirectoryError(f"{meta_file}: policy format version {version!r}; this "
                                    f"toolkit reads {FORMAT_VERSION}")
        try:
            state = torch.load(path.with_suffix(".pt"), weights_only=True)
            net = _network_for(state, meta)
            player = meta.pop("player")
            if not isinstance(player, int) or isinstance(player, bool) or player < 0:
                raise ValueError(f"its player {player!r} is not a player index")
        except Exception as err:  # noqa: BLE001 - missing keys, bad shapes, crafted weights
            raise RunDirectoryError(f"cannot load policy {path}: {type(err).__name__}: "
                                    f"{one_line(err)}") from None
        name = str(meta.pop("name", ""))
        meta.pop("format_version")
        return cls(player, net, meta, name)


MAX_METADATA_BYTES = 16 * 2**20
"""Largest network metadata file read (16 MiB)."""


def _network_for(state: dict, meta: dict) -> ActorCritic:
    """The network whose weights are ``state``, after checking that the metadata's
    ``obs_shape``, ``num_actions`` and ``hidden`` describe those weights (``ValueError``)."""
    hidden = tuple(meta["hidden"])
    if not hidden or len(hidden) > 16 or not all(
            isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= MAX_WIDTH
            for h in hidden):
        raise ValueError(f"hidden widths {list(hidden)[:17]} are outside 1..{MAX_WIDTH} "
                         f"(1 to 16 integer widths)")
    shape, actions = meta["obs_shape"], meta["num_actions"]
    if not isinstance(shape, list) or not shape or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in shape) \
            or not isinstance(actions, int) or isinstance(actions, bool) or actions < 1:
        raise ValueError("obs_shape must list positive integers and num_actions be a positive "
                         "integer")
    if not isinstance(state, dict) or not all(isinstance(t, torch.Tensor)
                                              for t in state.values()):
        raise ValueError("the weights file holds no state dict")
    first, last = state.get("actor.0.weight"), state.get(f"actor.{2 * len(hidden)}.weight")
    obs_size = math.prod(shape)
    if first is None or last is None or tuple(first.shape) != (hidden[0], obs_size) \
            or tuple(last.shape) != (actions, hidden[-1]):
        raise ValueError(f"the metadata (obs_shape {shape}, num_actions {actions}, hidden "
                         f"{list(hidden)}) does not describe the weights")
    net = ActorCritic(obs_size, actions, hidden, critic="critic.0.weight" in state)
    net.load_state_dict(state)
    if not all(torch.isfinite(t).all() for t in net.state_dict().values()):
        raise ValueError("the weights hold NaN or infinite values")
    return net

"""TensorBoard scalars for a run (``tensorboard = true`` in the config, ``--tensorboard``),
with the optional ``tensorboard`` package (``pip install -e ".[tensorboard]"``). CSV and
JSONL metrics are always written regardless."""

from __future__ import annotations

from pathlib import Path

from psro.errors import ConfigError


def require_tensorboard():
    """torch's ``SummaryWriter``; :class:`ConfigError` when the tensorboard package is not
    installed."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise ConfigError("tensorboard logging needs the tensorboard package: "
                          "pip install -e '.[tensorboard]'") from None
    return SummaryWriter


def tensorboard_callback(log_dir: str | Path):
    """A PSRO callback writing every numeric metric of each iteration as a scalar under
    ``log_dir``."""
    SummaryWriter = require_tensorboard()  # noqa: N806 (a class)
    writer = SummaryWriter(log_dir=str(log_dir))

    def callback(run, row: dict) -> None:
        for key, value in row.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and key != "iteration":
                writer.add_scalar(f"psro/{key}", value, row["iteration"])
        writer.flush()

    return callback

"""TensorBoard scalars for a run, when the optional ``tensorboard`` package is installed
(``pip install -e ".[tensorboard]"``). CSV and JSONL metrics are always written regardless."""

from __future__ import annotations

from pathlib import Path


def tensorboard_callback(log_dir: str | Path):
    """A PSRO callback writing every numeric metric of each iteration as a scalar under
    ``log_dir``, or None when tensorboard is not installed."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    writer = SummaryWriter(log_dir=str(log_dir))

    def callback(run, row: dict) -> None:
        for key, value in row.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and key != "iteration":
                writer.add_scalar(f"psro/{key}", value, row["iteration"])
        writer.flush()

    return callback

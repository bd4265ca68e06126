"""Seeds of a run's tasks, each derived from the run seed and the task's place in the run, so a
task gives the same result on any backend and after any resume."""

from __future__ import annotations

import numpy as np


def derive_seed(*keys: int) -> int:
    """A 32-bit seed from integer keys (``SeedSequence(keys)``); equal keys give equal seeds.

    >>> derive_seed(0, 1, 0) == derive_seed(0, 1, 0) != derive_seed(0, 1, 1)
    True
    """
    return int(np.random.SeedSequence([int(k) for k in keys]).generate_state(1)[0])

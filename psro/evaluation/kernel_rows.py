"""A metrics row measured exactly by a compiled kernel (:mod:`psro.kernels`): what a run's
rows and the suite's large tier record where a game too large to walk has a kernel."""

from __future__ import annotations

import numpy as np


def exact_row(game, populations: list[list], mixtures: list[np.ndarray],
              progress=None) -> dict:
    """The metrics row of the meta-policy's exact exploitability by the compiled kernel of
    ``game`` (:mod:`psro.kernels`): its members' sequence-form mixture, every value exact
    (``exploitability_kind = "exact"``, no standard errors or interval). ``progress``
    (:class:`psro.kernels.progress.MixtureProgress`, or None): where an interrupted
    evaluation resumes."""
    from psro.kernels.exact import exact_exploitability as kernel_exact
    from psro.kernels.exact import mixture_seats

    result = kernel_exact(game, mixture_seats(populations, mixtures), progress=progress)
    n = len(populations)
    return {"exploitability": result.exploitability, "nash_conv": result.nash_conv,
            "exploitability_kind": "exact",
            **{f"gain_p{p}": float(g) for p, g in enumerate(result.gains)},
            **{f"gain_std_err_p{p}": None for p in range(n)},
            **{f"value_p{p}": float(v) for p, v in enumerate(result.values)},
            "exploitability_half_width": None}


__all__ = ["exact_row"]

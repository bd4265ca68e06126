"""The payoff table in iteration records: each record holds the entries that were new in its
iteration (``block{b}_*``) and the older entries it re-estimated (``refined_*``: sampled
entries refined for the meta-strategy); reading the records in order rebuilds the table."""

from __future__ import annotations

import numpy as np

from psro.payoffs import PayoffTable


def table_arrays(table: PayoffTable, k: int, sizes_before: tuple[int, ...],
                 sizes: tuple[int, ...]) -> dict:
    """Record ``k``'s payoff arrays: the new blocks' ``block{b}_values``, ``_counts`` and
    ``_std_errs`` (members ``sizes_before`` to ``sizes``), and :func:`refined_arrays`."""
    arrays = {}
    for b, block in enumerate(PayoffTable.new_blocks(sizes_before, sizes)):
        values, counts, errors = table.block(block)
        arrays[f"block{b}_values"] = values
        arrays[f"block{b}_counts"] = counts
        arrays[f"block{b}_std_errs"] = errors
    return {**arrays, **refined_arrays(table, k, sizes_before)}


def refined_arrays(table: PayoffTable, k: int, sizes_before: tuple[int, ...]) -> dict:
    """The entries of earlier iterations that iteration ``k`` re-estimated (sampled entries
    refined for the meta-strategy), as the record's ``refined_*`` arrays: ``refined_index``
    (R, N) profiles, ``refined_values`` and ``refined_std_errs`` (N, R), ``refined_counts``
    (R,); none when there are none."""
    profiles = sorted(profile for profile, at in table.refined.items() if at == k
                      and all(i < size for i, size in zip(profile, sizes_before, strict=True)))
    if not profiles:
        return {}
    entries = [table.entry(profile) for profile in profiles]
    return {"refined_index": np.array(profiles, dtype=np.int64),
            "refined_values": np.stack([e[0] for e in entries], axis=1),
            "refined_std_errs": np.stack([e[1] for e in entries], axis=1),
            "refined_counts": np.array([e[2] for e in entries], dtype=np.int64)}


def apply_refined(arrays: dict, iteration: int, values: np.ndarray, counts: np.ndarray,
                  errors: np.ndarray, refined: dict) -> None:
    """Write a record's ``refined_*`` entries (if any) into the table's arrays being rebuilt,
    noting each profile's iteration in ``refined``."""
    for r, profile in enumerate(arrays.get("refined_index", ())):
        profile = tuple(int(i) for i in profile)
        values[(slice(None),) + profile] = arrays["refined_values"][:, r]
        errors[(slice(None),) + profile] = arrays["refined_std_errs"][:, r]
        counts[profile] = arrays["refined_counts"][r]
        refined[profile] = iteration

"""The head-to-head table of a suite's report: per game and pair of methods, the first
method's score against the second over both seats, its mean return as player 0 and as player 1
(each the mean over seeds with a 95% interval), how its games were played (Monte Carlo, or
exactly by a compiled kernel) and its score on each seed, read from the game's
``head_to_head.json`` (:func:`psro.bench.evaluation.head_to_head`). A record written before
seats and seeds were kept shows ``-`` in their cells."""

from __future__ import annotations

HEADER = ["## Head to head", "",
          "Score: the first method's mean return against the second over both seats; then its "
          "mean return as player 0 and as player 1 (95% intervals over seeds), how the games "
          "were played (Monte Carlo, or exactly where the game has a compiled kernel and the "
          "suite was run with --exact-head-to-head), and its score on each seed.", "",
          "| game | method | against | score | as player 0 | as player 1 | played | seeds | "
          "score per seed |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
"""The table's heading, caption and column header (Markdown lines)."""


def table_rows(game_label: str, record: dict) -> list[str]:
    """One Markdown row per pair of ``record["pairs"]``."""
    return [f"| {game_label} | {p['a']} | {p['b']} | {_mean(p, 'score', 'half_width')} | "
            f"{_mean(p, 'first', 'first_half_width')} | "
            f"{_mean(p, 'second', 'second_half_width')} | {p.get('kind', 'monte carlo')} | "
            f"{len(p['seeds'])} | "
            f"{_per_seed(p)} |" for p in record["pairs"]]


def _mean(pair: dict, name: str, half: str) -> str:
    return f"{pair[name]:+.3f} +- {pair[half]:.3f}" if name in pair else "-"


def _per_seed(pair: dict) -> str:
    return ", ".join(f"{r['score']:+.2f}" for r in pair.get("per_seed", [])) or "-"

"""Head to head without Monte Carlo noise: on a large-tier game with a compiled kernel
(:mod:`psro.kernels`), each pair of methods' final meta-policies of a seed is played exactly,
in both seats (``psro bench SUITE --out DIR --exact-head-to-head``).

A seed's meta-policies are each asked at every information set once and summed in sequence
form (:func:`psro.kernels.exact.exact_sums`; most of the cost: the members one after the
other, as in their exact exploitability); then one walk of the game for a method's pair of
sums gives its expected return per sequence to each player, and with it every other method's
return against it in both seats (a return is bilinear in the two sequence forms): with M
methods, M - 1 walks a seed. The records go into the game's ``head_to_head.json`` in the Monte
Carlo records' format (``kind = "exact"``, standard errors 0), replacing those of the same
pair and seed, and are kept by the suite's own head-to-head step as long as the runs are the
same. Over seeds, the interval is then the seeds' spread alone.

Resumable: a seed's records are written as soon as its pairs are played, and each
meta-policy's sums are saved as they are made (``seed-N.sums.progress.npz`` beside its run,
removed once the seed's records are written), so a stopped call asks no finished member
again.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path

from psro.bench.evaluation import (
    _kept_records,
    _last_iteration,
    _seats,
    assemble,
    names_runs,
    play_game,
    record_marks,
)
from psro.bench.folder import slug
from psro.bench.suites import SuiteGame
from psro.errors import ConfigError
from psro.kernels import kernel_for
from psro.kernels.exact import exact_cross_values, exact_sums, mixture_seats
from psro.kernels.progress import MixtureProgress
from psro.storage.files import atomic_write_text


def exact_head_to_head(game: SuiteGame, runs: list, path: Path,
                       methods: list[str] | None = None,
                       say: Callable[[str], None] = print) -> dict:
    """Play every pair of ``methods`` (labels; None: all the game's) exactly on each seed both
    ran among ``runs`` (the game's measured :class:`~psro.bench.plan.PlannedRun` s), writing
    each seed's records into ``path`` (``head_to_head.json``, the format of
    :func:`psro.bench.evaluation.head_to_head`) as soon as they are made; pairs and seeds
    recorded exactly already, for the same runs' iterations, are kept. ``say``: one line a
    seed. :class:`ConfigError` for a game without a kernel, before any work. Returns the
    file's contents."""
    pyspiel_game = play_game(game.game)
    if kernel_for(pyspiel_game) is None:
        raise ConfigError(f"{game.label}: no compiled kernel implements {game.game}, so its "
                          f"head-to-head games cannot be played exactly")
    ended = {(r.method.label, r.seed): (r, _last_iteration(r.path)) for r in runs}
    labels = [m.label for m in game.methods]
    chosen = [label for label in labels if methods is None or label in methods]
    kept, written = _kept_records(path), None
    for seed in sorted({s for _, s in ended}):
        present = [label for label in chosen if (label, seed) in ended]
        todo = [(a, b) for a, b in itertools.combinations(present, 2)
                if not _is_exact(kept.get((a, b, seed)), labels, ended, a, b, seed)]
        if not todo:
            continue
        start = time.perf_counter()
        played = _play_seed(pyspiel_game, labels, todo, ended, seed)
        kept.update(played)
        written = assemble(labels, ended, kept, pyspiel_game)
        atomic_write_text(path, json.dumps(written, indent=1))
        for label in {m for pair in todo for m in pair}:
            _sums_path(ended[(label, seed)][0]).unlink(missing_ok=True)
        say(f"      {game.label} · seed {seed}: {len(todo)} pair(s) played exactly in "
            f"{time.perf_counter() - start:.0f} s")
    if written is None:  # nothing to play: the file is written for these runs all the same
        written = assemble(labels, ended, kept, pyspiel_game)
        atomic_write_text(path, json.dumps(written, indent=1))
    return written


def _is_exact(record: dict | None, labels: list[str], ended: dict, a: str, b: str,
              seed: int) -> bool:
    """Whether ``record`` is an exact record of these runs."""
    return record is not None and record.get("kind") == "exact" and names_runs(
        record, labels, ended, a, b, seed)


def _sums_path(run) -> Path:
    """Where the sums of ``run``'s final meta-policy are kept while its seed is played."""
    return run.path.parent / f"{run.path.name}.sums.progress.npz"


def _progress(run, iteration: int, mixtures: list) -> MixtureProgress:
    """The progress of summing ``run``'s final meta-policy (its members at ``iteration``
    with the weights ``mixtures``)."""
    return MixtureProgress.of_mixtures(
        _sums_path(run), f"{run.method.label} seed {run.seed} iteration {iteration} ", mixtures)


def _play_seed(pyspiel_game, labels: list[str], todo: list[tuple[str, str]], ended: dict,
               seed: int) -> dict:
    """The exact records of the pairs ``todo`` at ``seed``, by ``(a, b, seed)``: each
    method's sums once, then one walk for each method that is A of a pair."""
    involved = [label for label in labels if any(label in pair for pair in todo)]
    sums = {}
    for label in involved:
        run, iteration = ended[(label, seed)]
        populations, mixtures, _ = _seats(run.path)
        sums[label] = exact_sums(pyspiel_game, mixture_seats(populations, mixtures),
                                 progress=_progress(run, iteration, mixtures))
    records = {}
    for a in involved:
        others = [b for first, b in todo if first == a]
        if not others:
            continue
        values = exact_cross_values(pyspiel_game, sums[a], [sums[b] for b in others])
        for b, (b_first, b_second) in zip(others, values, strict=True):
            first, second = -b_second, -b_first  # zero-sum: A's return in each seat
            records[(a, b, seed)] = {
                "seed": seed, "score": (first + second) / 2, "first": first,
                "first_std_err": 0.0, "second": second, "second_std_err": 0.0,
                "kind": "exact", **record_marks(labels, ended, a, b, seed)}
    return records


def exact_suite_head_to_head(suite, out: str | Path, games: list[str] | None = None,
                             methods: list[str] | None = None,
                             say: Callable[[str], None] = print) -> list[str]:
    """:func:`exact_head_to_head` on each large-tier game of ``suite`` (``games``: labels or
    folder names, None: every one) that has a compiled kernel, over its runs measured in the
    folder ``out``; ``methods``: the pairs of these methods only (labels or folder names).
    :class:`ConfigError` where none of the chosen games has a kernel. Returns the labels of
    the games played."""
    from psro.bench.plan import plan
    from psro.bench.runner import _measured, select_games, select_methods

    chosen = [g for g in select_games(suite, games) if g.tier == "large"
              and kernel_for(play_game(g.game)) is not None]
    if not chosen:
        raise ConfigError("--exact-head-to-head: none of the chosen games has a compiled "
                          "kernel (phantom_ttt, dark_hex and liars_dice variants of the large "
                          "tier have one)")
    planned = [r for r in plan(suite, Path(out)) if r.game in chosen]
    picked = {r.method.label for r in select_methods(planned, chosen, methods)}
    for game in chosen:
        measured = [r for r in planned if r.game is game and _measured(r)]
        exact_head_to_head(game, measured, Path(out) / slug(game.label) / "head_to_head.json",
                           [m.label for m in game.methods if m.label in picked], say)
    return [g.label for g in chosen]


__all__ = ["exact_head_to_head", "exact_suite_head_to_head"]

"""The large tier's measurements, the same for every method of a game: the approximate
exploitability of each run's final meta-policy at one shared best-response budget, and the
head-to-head results between the methods' final meta-policies.

Lower bound: for each player a fresh PPO best response of ``SuiteGame.response_steps`` env
steps (the lower bound's PPO options otherwise, :func:`psro.rl.config.response_config`) is
trained against the final meta-policy, seeded by the run's seed only, so that every method of a
seed faces the same response training; its gain over the meta-policy's value, both by Monte
Carlo, is a lower bound on the true gain (:func:`psro.evaluation.sampled.lower_bound_with_curves`).
The responses' training curves are kept with it.

Head to head: for two methods A and B and a seed both ran, A's meta-policy plays B's once in
each seat (Monte Carlo, seeded), and A's score is its mean return over the two seatings; A's
return in each seat is kept too (``first``: A as player 0, ``second``: A as player 1), since
in a game with a stronger seat the spread of the score over seeds can come from one seat
alone. Over seeds: the mean with a 95% Student-t interval (one seed: the Monte Carlo
interval), for the score and for each seat. Elo ratings
are fitted to the mean scores mapped to win rates, ``(score + M) / (2 M)`` with ``M`` the
game's largest absolute return (:func:`solvers.elo_ratings`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from pathlib import Path

import numpy as np

import games
import solvers
from games.simulation import turn_based
from psro.backends import make_backend
from psro.bench.suites import SuiteGame, run_config
from psro.evaluation import monte_carlo
from psro.evaluation.kernel_rows import exact_row
from psro.evaluation.sampled import lower_bound_with_curves
from psro.kernels import kernel_for
from psro.kernels.progress import MixtureProgress
from psro.payoffs import utility_scale
from psro.reports.groups import interval
from psro.rl.config import response_config
from psro.seeds import derive_seed
from psro.storage import checkpoint
from psro.storage.files import atomic_write_text
from psro.storage.text_files import read_json

VERSION = 3
"""Bumped when the lower bound's measurement changes (3: the lower bound's own PPO options), so
that bounds measured before are measured again."""
HEAD_TO_HEAD_VERSION = 5
"""Bumped when the head-to-head record changes (4: each seat's return, per seed and over
seeds; 5: each seed's record names its runs' iterations and the methods' places, and is kept
when they are the same), so that scores recorded before are measured again (the same games:
the same seeds)."""
CURVE_KEYS = ("env_steps", "mean_return", "episodes")
"""What is kept of each PPO update of a lower bound's response (its training curve)."""


def play_game(spec: str):
    """The pyspiel game the toolkit plays for ``spec`` (turn-based where simultaneous)."""
    import games

    return turn_based(games.load(spec).pyspiel_game)


def _seats(path: Path) -> tuple[list[list], list[np.ndarray], int]:
    saved = checkpoint.load(path)
    return ([[m.actor(None) for m in pop] for pop in saved.state.populations],
            [np.asarray(m, dtype=float) for m in saved.state.mixtures], saved.state.iteration)


def _cached(path: Path, key: dict) -> dict | None:
    if not path.exists():
        return None
    try:
        saved = read_json(path)
    except ValueError:
        return None
    return saved if isinstance(saved, dict) and saved.get("key") == key else None


def shared_lower_bound(run, path: Path) -> dict:
    """The lower bound of ``run``'s final meta-policy (a :class:`psro.bench.plan.PlannedRun`)
    at its game's shared budget, read from ``path`` where it was measured for this run's last
    iteration already, else measured and written there: ``{"key", "exploitability",
    "nash_conv", "gain_p*", "gain_std_err_p*", "value_p*", "curves"}``. Where the game has a
    compiled kernel (:mod:`psro.kernels`) and the suite game asks for it (``exact``, the
    default), the value is exact instead
    (``exploitability_kind = "exact"``, no standard errors or curves)."""
    game = run.game
    pyspiel_game = games.load(game.game).pyspiel_game
    exact = game.exact and kernel_for(pyspiel_game) is not None
    key = {"version": VERSION, "iteration": _last_iteration(run.path),
           "response_steps": game.response_steps, "seed": run.seed,
           **({"exact": True} if exact else {})}
    saved = _cached(path, key)
    if saved is not None:  # the networks are not read (a copy without them is measured)
        return saved
    seats, mixtures, _ = _seats(run.path)
    if exact:  # an hour or more for a large meta-policy: resumable member by member
        progress = MixtureProgress.of_mixtures(path.with_suffix(".progress.npz"),
                                               json.dumps(key), mixtures)
        row = exact_row(pyspiel_game, seats, mixtures, progress)
        made = {"key": key, **row, "curves": []}
        atomic_write_text(path, json.dumps(made, indent=1))
        return made
    options = run_config(game, game.methods[0], run.seed).monte_carlo
    seeds = [derive_seed(run.seed, 31337, p) for p in range(len(seats) + 1)]
    backend = make_backend(run.config.backend, run.config.workers, run.config.ray_address)
    try:
        row, logs = lower_bound_with_curves(
            play_game(game.game), seats, mixtures,
            response_config({"env_steps": game.response_steps}), seeds, options, backend)
    finally:
        backend.close()
    made = {"key": key, **row, "curves": [[{k: r.get(k) for k in CURVE_KEYS} for r in log]
                                          for log in logs]}
    atomic_write_text(path, json.dumps(made, indent=1))
    return made


def head_to_head(game: SuiteGame, runs: list, path: Path) -> dict | None:
    """Every pair of the game's methods played against each other on the seeds both ran
    (two-player games; None otherwise), written to ``path``: ``{"key", "methods", "pairs":
    [{"a", "b", "score", "half_width", "first", "first_half_width", "second",
    "second_half_width", "seeds", "per_seed"}], "elo": {method: rating}}``. ``score`` is A's
    mean return against B over both seats (B's is its negative in a zero-sum game),
    ``first`` and ``second`` A's mean return as player 0 and as player 1; each with the
    half-width of its 95% interval over seeds. ``per_seed``: ``[{"seed", "score", "first",
    "first_std_err", "second", "second_std_err", "iterations", "positions"}]`` (Monte Carlo
    standard errors; the two runs' last iterations and the methods' places in the suite).

    A seed's games are played once: a record of ``path`` for the same pair, seed, iterations
    and places is kept as it is (its episodes are seeded by the seed and the places), so a
    seed added later plays its own games only, and a pair whose runs' networks are gone (a
    suite folder copied without them) keeps its record."""
    ended = {(r.method.label, r.seed): (r, _last_iteration(r.path)) for r in runs}
    pyspiel_game = play_game(game.game)
    if not ended or pyspiel_game.num_players() != 2:
        return None
    key = {"version": HEAD_TO_HEAD_VERSION, "runs": runs_key(ended)}
    saved = _cached(path, key)
    if saved is not None:
        return saved
    labels = [m.label for m in game.methods]
    kept = _kept_records(path)
    options = monte_carlo.estimate_options(run_config(game, game.methods[0], 0).monte_carlo)
    loaded: dict = {}

    def seats(label: str, seed: int) -> tuple:
        if (label, seed) not in loaded:
            loaded[(label, seed)] = _seats(ended[(label, seed)][0].path)
        return loaded[(label, seed)]

    for (i, a), (j, b) in itertools.combinations(enumerate(labels), 2):
        for seed in common_seeds(ended, a, b):
            if not names_runs(kept.get((a, b, seed)), labels, ended, a, b, seed):
                (sa, wa, _), (sb, wb, _) = seats(a, seed), seats(b, seed)
                kept[(a, b, seed)] = {"seed": seed, **_play_both_seats(
                    pyspiel_game, (sa, wa), (sb, wb), derive_seed(seed, 4242, i, j, 0),
                    derive_seed(seed, 4242, i, j, 1), options),
                    **record_marks(labels, ended, a, b, seed)}
    made = assemble(labels, ended, kept, pyspiel_game)
    atomic_write_text(path, json.dumps(made, indent=1))
    return made


def common_seeds(ended: dict, a: str, b: str) -> list[int]:
    """The seeds both methods ``a`` and ``b`` ran among ``ended`` (``{(method, seed): (run,
    last iteration)}``), in order."""
    return sorted({s for m, s in ended if m == a} & {s for m, s in ended if m == b})


def record_marks(labels: list[str], ended: dict, a: str, b: str, seed: int) -> dict:
    """What a per-seed record of the pair ``(a, b)`` at ``seed`` names: the two runs' last
    iterations (``ended``: ``{(method, seed): (run, last iteration)}``) and the methods'
    places among ``labels``."""
    return {"iterations": [ended[(a, seed)][1], ended[(b, seed)][1]],
            "positions": [labels.index(a), labels.index(b)]}


def names_runs(record: dict | None, labels: list[str], ended: dict, a: str, b: str,
               seed: int) -> bool:
    """Whether ``record`` (None: no record) is one of the pair ``(a, b)`` at ``seed`` played
    by these runs (:func:`record_marks`), so that it is kept as it is."""
    return record is not None and all(
        record.get(k) == v for k, v in record_marks(labels, ended, a, b, seed).items())


def assemble(labels: list[str], ended: dict, records: dict, pyspiel_game) -> dict:
    """``head_to_head.json``'s contents from the per-seed ``records`` (by ``(a, b, seed)``)
    that name the runs ``ended``: a pair for each two methods with a record, their Elo
    ratings, and a key that names the runs only where every seed of every pair has its
    record (the suite's own step then reads the file as it is; else it plays the rest)."""
    pairs, score, complete = [], np.zeros((len(labels), len(labels))), True
    for (i, a), (j, b) in itertools.combinations(enumerate(labels), 2):
        seeds = common_seeds(ended, a, b)
        per_seed = [records[(a, b, s)] for s in seeds
                    if names_runs(records.get((a, b, s)), labels, ended, a, b, s)]
        complete = complete and len(per_seed) == len(seeds)
        if not per_seed:
            continue
        pairs.append(pair_summary(a, b, [r["seed"] for r in per_seed], per_seed))
        score[i, j], score[j, i] = pairs[-1]["score"], -pairs[-1]["score"]
    return {"key": {"version": HEAD_TO_HEAD_VERSION,
                    "runs": runs_key(ended) if complete else None},
            "methods": labels, "pairs": pairs,
            "elo": _elo(labels, pairs, score, utility_scale(pyspiel_game))}


def runs_key(ended: dict) -> str:
    """What names the runs a head-to-head file was made from (``ended``: ``{(method, seed):
    (run, last iteration)}``)."""
    return hashlib.sha256(json.dumps(sorted(
        (m, s, it) for (m, s), (_, it) in ended.items())).encode()).hexdigest()


def _last_iteration(path: Path) -> int:
    """The last iteration of the run directory ``path`` (its networks are not read)."""
    return checkpoint.load(path, networks=False).state.iteration


def _kept_records(path: Path) -> dict:
    """The per-seed records of an earlier ``head_to_head.json`` at ``path`` that name their
    runs' iterations (records of this version), by ``(a, b, seed)``."""
    try:
        saved = read_json(path) if path.exists() else {}
    except ValueError:
        return {}
    if not isinstance(saved, dict) or (saved.get("key") or {}).get("version") != \
            HEAD_TO_HEAD_VERSION:
        return {}
    return {(pair["a"], pair["b"], row["seed"]): row for pair in saved.get("pairs", ())
            for row in pair.get("per_seed", ()) if "iterations" in row}


def _play_both_seats(pyspiel_game, a: tuple, b: tuple, seed_first: int, seed_second: int,
                     options: dict) -> dict:
    """A's meta-policy ``a = (seats, mixtures)`` against B's, once as player 0 and once as
    player 1 (Monte Carlo, seeded): the score (mean of A's two returns) and each seat's."""
    (sa, wa), (sb, wb) = a, b
    one = monte_carlo.estimate(pyspiel_game, [sa[0], sb[1]], [wa[0], wb[1]], seed_first,
                               **options)
    two = monte_carlo.estimate(pyspiel_game, [sb[0], sa[1]], [wb[0], wa[1]], seed_second,
                               **options)
    return {"score": float(one.mean[0] + two.mean[1]) / 2,
            "first": float(one.mean[0]), "first_std_err": float(one.std_err[0]),
            "second": float(two.mean[1]), "second_std_err": float(two.std_err[1])}


def pair_summary(a: str, b: str, seeds: list[int], per_seed: list[dict]) -> dict:
    """A pair's record from its per-seed records (``{"score", "first", "first_std_err",
    "second", "second_std_err", ...}``, one a seed of ``seeds``): ``{"a", "b", "score",
    "half_width", "first", "first_half_width", "second", "second_half_width", "kind",
    "seeds", "per_seed"}``, each mean over seeds with the half-width of its 95% Student-t
    interval (one seed: its Monte Carlo interval; the score's standard error is the seats'
    combined, halved); ``kind``: ``"exact"`` where every record was played exactly
    (:mod:`psro.bench.exact_head_to_head`), ``"monte carlo"`` where none was, else
    ``"mixed"``."""
    pair: dict = {"a": a, "b": b}
    pair["score"], pair["half_width"] = _over_seeds(
        [r["score"] for r in per_seed],
        [math.hypot(r["first_std_err"], r["second_std_err"]) / 2 for r in per_seed])
    for seat in ("first", "second"):
        pair[seat], pair[f"{seat}_half_width"] = _over_seeds(
            [r[seat] for r in per_seed], [r[f"{seat}_std_err"] for r in per_seed])
    kinds = {r.get("kind", "monte carlo") for r in per_seed}
    pair["kind"] = kinds.pop() if len(kinds) == 1 else "mixed"
    return {**pair, "seeds": seeds, "per_seed": per_seed}


def _elo(labels: list[str], pairs: list[dict], score: np.ndarray, reach: float) -> dict:
    """Elo ratings fitted to the pairs' mean scores mapped to win rates."""
    observed = np.zeros_like(score, dtype=bool)
    for pair in pairs:
        i, j = labels.index(pair["a"]), labels.index(pair["b"])
        observed[i, j] = observed[j, i] = True
    win = np.clip((score + reach) / (2 * reach), 0.0, 1.0)
    elo = solvers.elo_ratings(win, observed=observed) if pairs else np.zeros(len(labels))
    return {label: float(r) for label, r in zip(labels, elo, strict=True)}


def _over_seeds(values: list[float], std_errs: list[float]) -> tuple[float, float]:
    """The mean of per-seed ``values`` and the half-width of its 95% Student-t interval over
    seeds; with one seed, the Monte Carlo interval of its ``std_errs``."""
    if len(values) == 1:
        return float(values[0]), float(monte_carlo.Z95 * std_errs[0])
    curve = interval(np.zeros(1), np.asarray(values, dtype=float)[:, None])
    return float(curve.mean[0]), float(curve.high[0] - curve.mean[0])

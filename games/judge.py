"""The debate game's judge: a classifier of sparsely revealed digit images.

The judge sees, for each pixel of a ``size`` x ``size`` image, whether it was revealed and,
if so, its value; it returns one score (logit) per digit label. It is a one-hidden-layer
network (ReLU, ``hidden`` units) trained with Adam on the *judge* part of the digits
(:mod:`games.digits`), each image shown every epoch with a fresh random choice of ``pixels``
of its nonzero pixels revealed (as Irving, Christiano and Amodei's MNIST judge was trained on
random nonzero pixels). Training is numpy only and seeded: the same ``(size, pixels, seed)``
gives the same weights, and :attr:`Judge.checksum` (SHA-256 of the weights) names them.

:func:`judge` returns the judge of a configuration: from memory, else from the cache
directory (``$PSRO_CACHE``, default ``~/.cache/psro-toolkit``), whose file is used only if its
weights still match the checksum stored with them, else trained (a few seconds) and saved
there. ``psro judge`` trains one and reports its accuracy.

A judge can also learn during a run (the self-rewarding judge of the debate guide):
:func:`retrain` trains it further on labelled debates, :func:`save` writes it to a file and
:func:`load_file` reads it back, checked; the debate game's ``judge_file`` parameter plays
before such a judge.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from games.digits import MAX_VALUE, SIZES, digits
from games.probe import keep_alive

HIDDEN = 128
EPOCHS = 400
BATCH = 64
LEARNING_RATE = 2e-3
VERSION = 1
"""Bumped whenever training changes, so that cached judges of an older recipe are not used."""


@dataclass(frozen=True)
class Judge:
    """A trained judge: weights ``w1`` (2P, H), ``b1`` (H,), ``w2`` (H, 10), ``b2`` (10,)
    for P = ``size``**2 pixels, trained on ``pixels`` revealed pixels with ``seed``."""

    size: int
    pixels: int
    seed: int
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray

    @property
    def checksum(self) -> str:
        """SHA-256 of the weights (float64, C order), hex: what names this judge."""
        digest = hashlib.sha256()
        for array in (self.w1, self.b1, self.w2, self.b2):
            digest.update(np.ascontiguousarray(array, np.float64).tobytes())
        return digest.hexdigest()

    def logits(self, revealed: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Scores of the 10 labels, shape (n, 10), for ``revealed`` (n, P) booleans and
        ``values`` (n, P) pixel values 0..16 (only revealed ones are read)."""
        return _forward(self.w1, self.b1, self.w2, self.b2, features(revealed, values))[0]

    def classify(self, revealed: np.ndarray, values: np.ndarray) -> np.ndarray:
        """The judge's label for each image (the highest score; ties to the lowest label)."""
        return np.argmax(self.logits(revealed, values), axis=1)


def features(revealed: np.ndarray, values: np.ndarray) -> np.ndarray:
    """What the judge reads: the revealed mask, then the revealed values scaled to [0, 1]
    (unrevealed pixels read 0), shape (n, 2P)."""
    mask = np.asarray(revealed, bool)
    scaled = np.where(mask, np.asarray(values, float) / MAX_VALUE, 0.0)
    return np.concatenate([mask.astype(float), scaled], axis=1)


def _forward(w1, b1, w2, b2, x):
    hidden = np.maximum(x @ w1 + b1, 0.0)
    return hidden @ w2 + b2, hidden


def random_reveals(images: np.ndarray, pixels: int, rng: np.random.Generator) -> np.ndarray:
    """A mask of ``pixels`` nonzero pixels of each image drawn uniformly without replacement
    (all of its nonzero pixels where it has fewer), shape of ``images``."""
    keys = np.where(images > 0, rng.random(images.shape), np.inf)
    order = np.argsort(keys, axis=1)[:, :pixels]
    mask = np.zeros(images.shape, bool)
    np.put_along_axis(mask, order, True, axis=1)
    return mask & (images > 0)


def configuration_problem(size, pixels, seed,
                          names: tuple[str, str, str] = ("size", "pixels", "seed")) -> str | None:
    """What is wrong with a judge's configuration, naming the setting by ``names`` (the
    debate game's parameters or ``psro judge``'s flags), or None."""
    if size not in SIZES:
        return f"{names[0]} must be one of {', '.join(map(str, SIZES))}; got {size}"
    if not 1 <= pixels <= size * size:
        return (f"{names[1]} must be from 1 to {size * size} (the pixels of a {size}x{size} "
                f"image); got {pixels}")
    if seed < 0:
        return f"{names[2]} must not be negative; got {seed}"
    return None


def train_judge(size: int = 8, pixels: int = 6, seed: int = 0) -> Judge:
    """Train the judge of ``size`` x ``size`` images on ``pixels`` random nonzero pixels
    (module docstring); deterministic for a given seed."""
    images, labels = digits("judge", size)
    rng = np.random.default_rng(seed)
    inputs = 2 * size * size
    params = [rng.normal(0, np.sqrt(2 / inputs), (inputs, HIDDEN)), np.zeros(HIDDEN),
              rng.normal(0, np.sqrt(1 / HIDDEN), (HIDDEN, 10)), np.zeros(10)]
    _fit(params, labels, lambda: features(random_reveals(images, pixels, rng), images),
         EPOCHS, LEARNING_RATE, rng)
    return Judge(size, pixels, seed, *params)


def _fit(params: list[np.ndarray], labels: np.ndarray, epoch_inputs, epochs: int,
         learning_rate: float, rng: np.random.Generator) -> None:
    """Minimise the mean cross-entropy of ``labels`` with Adam in minibatches of ``BATCH``,
    in place; ``epoch_inputs()`` gives each epoch's features (n, 2P). BLAS runs on one thread
    meanwhile (then restored): the products are (64 x 128)-sized, which two threads do no
    faster on an idle machine, and with another process keeping a core busy training the
    default judge took 7-10 s on two threads against 2.5-2.9 s on one (the same weights;
    ``experiments/bench_blas_threads.py --busy``); see ``psro.backends.threads``."""
    with threadpool_limits(limits=1, user_api="blas"):  # small products: one BLAS thread
        _adam(params, labels, epoch_inputs, epochs, learning_rate, rng)


def _adam(params: list[np.ndarray], labels: np.ndarray, epoch_inputs, epochs: int,
          learning_rate: float, rng: np.random.Generator) -> None:
    moments = [np.zeros_like(p) for p in params]
    squares = [np.zeros_like(p) for p in params]
    step = 0
    for _ in range(epochs):
        keep_alive()  # a game check waits for a judge in training (games.probe)
        x_all = epoch_inputs()
        order = rng.permutation(len(labels))
        for start in range(0, len(order), BATCH):
            batch = order[start:start + BATCH]
            x, y = x_all[batch], labels[batch]
            logits, hidden = _forward(*params, x)
            probs = np.exp(logits - logits.max(axis=1, keepdims=True))
            probs /= probs.sum(axis=1, keepdims=True)
            probs[np.arange(len(y)), y] -= 1.0
            d_logits = probs / len(y)  # gradient of the mean cross-entropy
            d_hidden = (d_logits @ params[2].T) * (hidden > 0)
            grads = [x.T @ d_hidden, d_hidden.sum(axis=0), hidden.T @ d_logits,
                     d_logits.sum(axis=0)]
            step += 1
            for p, g, m, v in zip(params, grads, moments, squares, strict=True):
                m *= 0.9
                m += 0.1 * g
                v *= 0.999
                v += 0.001 * g * g
                p -= learning_rate * (m / (1 - 0.9 ** step)) / (
                    np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)


RETRAIN_EPOCHS = 4
RETRAIN_LEARNING_RATE = 1e-3


def retrain(judge: Judge, revealed: np.ndarray, values: np.ndarray, labels: np.ndarray,
            seed: int, epochs: int = RETRAIN_EPOCHS,
            learning_rate: float = RETRAIN_LEARNING_RATE) -> Judge:
    """The judge trained further, from its own weights, on ``labels`` (n,) for the images it
    saw: ``revealed`` (n, P) booleans and ``values`` (n, P) pixel values 0..16, as in
    :meth:`Judge.logits`. Mean cross-entropy, Adam started afresh, minibatches of ``BATCH``,
    ``epochs`` passes in an order drawn with ``seed``; the judge passed in is not changed.

    This is the self-rewarding judge's update (the debate guide): with its own verdicts as
    ``labels`` it learns what it already says; with true labels for some of them, an anchor.
    ``ValueError`` for arrays whose shapes do not match or labels outside 0..9."""
    revealed, values = np.asarray(revealed, bool), np.asarray(values)
    labels = np.asarray(labels, np.int64)
    pixels = judge.size * judge.size
    if revealed.shape != values.shape or revealed.ndim != 2 or revealed.shape[1] != pixels \
            or labels.shape != (len(revealed),):
        raise ValueError(f"retrain: revealed and values must be (n, {pixels}) and labels "
                         f"(n,); got {revealed.shape}, {values.shape} and {labels.shape}")
    if labels.size and (labels.min() < 0 or labels.max() > 9):
        raise ValueError("retrain: labels must be digits 0..9")
    if epochs < 1 or not learning_rate > 0:
        raise ValueError(f"retrain: epochs must be positive and the learning rate above 0; "
                         f"got {epochs} and {learning_rate}")
    params = [np.array(a, np.float64) for a in (judge.w1, judge.b1, judge.w2, judge.b2)]
    x = features(revealed, values)
    _fit(params, labels, lambda: x, epochs, learning_rate, np.random.default_rng(seed))
    return Judge(judge.size, judge.pixels, judge.seed, *params)


def save(judge: Judge, path: str | Path) -> Path:
    """Write ``judge`` to ``path`` (``.npz``: its weights, configuration and checksum), whole
    and renamed into place; returns the path. ``OSError`` where it cannot be written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".npz", delete=False) as out:
        np.savez(out, w1=judge.w1, b1=judge.b1, w2=judge.w2, b2=judge.b2,
                 checksum=judge.checksum, config=np.array([judge.size, judge.pixels,
                                                           judge.seed]))
    os.replace(out.name, path)
    return path


def load_file(path: str | Path) -> Judge:
    """The judge :func:`save` wrote to ``path``. ``ValueError`` naming the file where it is
    missing, unreadable, not a judge's file or fails its checksum."""
    try:
        with np.load(path) as saved:
            size, pixels, seed = (int(v) for v in saved["config"])
            found = Judge(size, pixels, seed, saved["w1"], saved["b1"], saved["w2"],
                          saved["b2"])
            stored = str(saved["checksum"])
    except (OSError, KeyError, ValueError, TypeError, EOFError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path} is not a readable judge file (one psro's games.judge.save "
                         f"wrote): {err}") from None
    if size not in SIZES or found.w1.shape != (2 * size * size, found.b1.shape[0]) \
            or found.w2.shape != (found.b1.shape[0], 10) or found.b2.shape != (10,):
        raise ValueError(f"{path}: its weights do not fit a judge of {size}x{size} images")
    if found.checksum != stored:
        raise ValueError(f"{path}: its weights do not match the checksum stored with them "
                         f"(the file was changed or damaged)")
    return found


def accuracy(judge: Judge, pixels: int, seed: int = 0, part: str = "debate"
             ) -> tuple[float, int]:
    """The judge's ten-way accuracy on one part of the digits (default: the debate part,
    which it was not trained on) from ``pixels`` random nonzero pixels of each image, drawn
    with ``seed``; returns ``(accuracy, images)``."""
    images, labels = digits(part, judge.size)
    mask = random_reveals(images, pixels, np.random.default_rng(seed))
    return float(np.mean(judge.classify(mask, images) == labels)), len(labels)


_JUDGES: dict[tuple[int, int, int], Judge] = {}


def cache_dir() -> Path:
    """Where trained judges are kept: ``$PSRO_CACHE`` or ``~/.cache/psro-toolkit``."""
    return Path(os.environ.get("PSRO_CACHE") or Path.home() / ".cache" / "psro-toolkit")


def cache_file(size: int, pixels: int, seed: int) -> Path:
    """The cache file of one judge configuration."""
    return cache_dir() / "judges" / f"judge-v{VERSION}-size{size}-pixels{pixels}-seed{seed}.npz"


def _load(path: Path, size: int, pixels: int, seed: int) -> Judge | None:
    """The cached judge in ``path``, or None where the file is missing, unreadable, damaged
    (emptied, cut short, not an ``.npz``) or fails its checksum: the judge is trained again."""
    try:
        with np.load(path) as saved:
            found = Judge(size, pixels, seed, saved["w1"], saved["b1"], saved["w2"],
                          saved["b2"])
            stored = str(saved["checksum"])
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile):
        return None
    return found if found.checksum == stored else None


def cached_judge(size: int = 8, pixels: int = 6, seed: int = 0) -> Judge | None:
    """The judge of a configuration as its cache file holds it, None where it holds none
    that can be used (the file is then replaced when :func:`judge` trains it again)."""
    return _load(cache_file(size, pixels, seed), size, pixels, seed)


def _save(path: Path, trained: Judge) -> None:
    try:
        save(trained, path)
    except OSError:
        pass  # a read-only home: the judge is kept in memory only


def judge(size: int = 8, pixels: int = 6, seed: int = 0) -> Judge:
    """The judge of a configuration: from memory, the cache (if its checksum holds) or
    trained and cached (module docstring)."""
    key = (size, pixels, seed)
    if key not in _JUDGES:
        path = cache_file(*key)
        found = _load(path, *key)
        if found is None:
            found = train_judge(*key)
            _save(path, found)
        _JUDGES[key] = found
    return _JUDGES[key]

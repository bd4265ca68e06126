"""The handwritten digits the debate game is played on, shipped with the package.

``games/data/digits.csv.gz`` is the 8x8 optical-recognition digits set of Alpaydin and Kaynak
(UCI Machine Learning Repository, "Optical Recognition of Handwritten Digits", CC BY 4.0), in
the copy scikit-learn ships: 1,797 images, pixel values 0..16, 64 pixel columns and the label
in the last column. Nothing is downloaded.

The images are split once, by a fixed seeded permutation, into a *judge* part (what the judge
is trained on) and a *debate* part (what debates are played on), so that no debate is held
over an image the judge has seen.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
from pathlib import Path

import numpy as np

DATA = Path(__file__).with_name("data") / "digits.csv.gz"
SHA256 = "09f66e6debdee2cd2b5ae59e0d6abbb73fc2b0e0185d2e1957e9ebb51e23aa22"
"""Checksum of the shipped file (checked on load)."""
JUDGE_IMAGES = 1000
"""Images of the judge part; the other 797 form the debate part."""
SPLIT_SEED = 20181002
"""Seed of the fixed permutation that splits the images."""
SIZES = (8, 4)
"""Image sides: the original 8x8, or 4x4 (each pixel the mean of a 2x2 block, rounded)."""
MAX_VALUE = 16
"""Largest pixel value."""


class DigitsError(ValueError):
    """The shipped digits file is missing or altered."""


@functools.cache
def _all() -> tuple[np.ndarray, np.ndarray]:
    try:
        raw = DATA.read_bytes()
    except OSError as err:
        raise DigitsError(f"the digits data {DATA} cannot be read: {err}") from None
    if hashlib.sha256(raw).hexdigest() != SHA256:
        raise DigitsError(f"the digits data {DATA} does not match its checksum (reinstall the "
                          f"package)")
    table = np.loadtxt(gzip.decompress(raw).decode().splitlines(), delimiter=",",
                       dtype=np.int64)
    images, labels = table[:, :64].reshape(-1, 8, 8), table[:, 64]
    order = np.random.default_rng(SPLIT_SEED).permutation(len(labels))
    return images[order], labels[order]


def downsample(images: np.ndarray, size: int) -> np.ndarray:
    """Images of shape (n, 8, 8) at side ``size`` (8: unchanged; 4: the rounded mean of each
    2x2 block), flattened to (n, size * size), values 0..16."""
    if size not in SIZES:
        raise DigitsError(f"image size must be one of {', '.join(map(str, SIZES))}; got {size}")
    if size == 8:
        return images.reshape(len(images), 64)
    blocks = images.reshape(len(images), 4, 2, 4, 2).mean(axis=(2, 4))
    return np.rint(blocks).astype(np.int64).reshape(len(images), 16)


def digits(part: str, size: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """``(images, labels)`` of one part (``"judge"`` or ``"debate"``): images of shape
    (n, size * size) with values 0..16 (row-major pixels), labels 0..9."""
    images, labels = _all()
    if part == "judge":
        chosen = slice(0, JUDGE_IMAGES)
    elif part == "debate":
        chosen = slice(JUDGE_IMAGES, None)
    else:
        raise DigitsError(f"part must be judge or debate; got {part!r}")
    return downsample(images[chosen], size), labels[chosen].copy()

"""Handwritten digits from a file: 8 × 8 grey images, read into tensors and split.

The file is the UCI "Optical Recognition of Handwritten Digits" test set (Alpaydin and
Kaynak, 1998; CC BY 4.0) as scikit-learn bundles it, shipped inside this package
(``tensorbook/data/digits.csv.gz``, 57,523 bytes): 1,797 lines, each 64 pixel values
from 0 to 16, row by row, then the digit. Reading it needs no network and no
scikit-learn.
"""

from __future__ import annotations

import gzip
from importlib.resources import files
from pathlib import Path

import numpy as np
import torch

from tensorbook.classification import Points, Splits, Standardize

__all__ = [
    "CLASSES",
    "DIGITS_FILE",
    "SIDE",
    "Normalize",
    "confusion_matrix",
    "digit_splits",
    "read_digits",
]

CLASSES = 10
"""The digits 0 to 9."""
SIDE = 8
"""Each image is ``SIDE`` × ``SIDE`` pixels."""
DIGITS_FILE = Path(str(files("tensorbook") / "data" / "digits.csv.gz"))
"""The digits file inside the installed package."""


def read_digits(path: Path = DIGITS_FILE) -> tuple[torch.Tensor, torch.Tensor]:
    """Every image in the file as uint8 ``(N, 1, 8, 8)``, and its digit as int64 ``(N,)``.

    Raises
    ------
    ValueError
        If a line does not hold 64 pixels and a digit.

    Examples
    --------
    >>> images, labels = read_digits()
    >>> tuple(images.shape), images.dtype, labels[:5].tolist()
    ((1797, 1, 8, 8), torch.uint8, [0, 1, 2, 3, 4])
    """
    with gzip.open(path, "rt", encoding="ascii") as lines:
        table = np.loadtxt(lines, delimiter=",", dtype=np.uint8, ndmin=2)
    if table.shape[1] != SIDE * SIDE + 1:
        msg = (
            f"{path}: {table.shape[1]} values a line, expected {SIDE * SIDE + 1} "
            f"({SIDE * SIDE} pixels, then the digit)"
        )
        raise ValueError(msg)
    data = torch.from_numpy(table)
    images = data[:, :-1].reshape(-1, 1, SIDE, SIDE)
    return images, data[:, -1].long()


class Normalize(Standardize):
    """Turn a uint8 image into float32 and standardize each channel with fixed statistics.

    ``mean`` and ``std`` hold one number per channel, shaped ``(C, 1, 1)`` so that they
    broadcast over an image's ``(C, H, W)``.

    Examples
    --------
    >>> normalize = Normalize.fit(torch.tensor([[[[0, 4], [4, 8]]]], dtype=torch.uint8))
    >>> normalize.mean.flatten().tolist(), normalize.std.flatten().tolist()
    ([4.0], [2.8284270763397217])
    >>> normalize(torch.tensor([[[4, 8]]], dtype=torch.uint8)).tolist()
    [[[0.0, 1.4142135381698608]]]
    """

    @classmethod
    def fit(cls, points: torch.Tensor) -> Normalize:
        """Each channel's mean and deviation over every image and pixel of ``points``."""
        pixels = points.float().transpose(0, 1).flatten(start_dim=1)  # (C, N·H·W)
        mean = pixels.mean(dim=1).reshape(-1, 1, 1)
        std = pixels.std(dim=1, correction=0).reshape(-1, 1, 1)
        return cls(mean, std)

    def __call__(self, point: torch.Tensor) -> torch.Tensor:
        """The image as float32, minus each channel's mean, over its deviation."""
        return (point.float() - self.mean) / self.std


def digit_splits(
    *, train: int | None = None, validation: int = 300, test: int = 300, seed: int = 0
) -> Splits:
    """Shuffle the digits and deal them into training, validation and test datasets.

    The images stay uint8; each split's transform, :class:`Normalize` with the training
    split's statistics, makes each image float32 as it is read. ``train`` keeps only
    that many training images (all that are left by default).

    Raises
    ------
    ValueError
        If the sizes ask for more images than the file holds.

    Examples
    --------
    >>> splits = digit_splits()
    >>> len(splits.train), len(splits.validation), len(splits.test)
    (1197, 300, 300)
    >>> image, label = splits.train[0]
    >>> tuple(image.shape), image.dtype, label.dtype
    ((1, 8, 8), torch.float32, torch.int64)
    >>> digit_splits(train=1500)
    Traceback (most recent call last):
    ...
    ValueError: 1500 training, 300 validation and 300 test images: the file holds 1797
    """
    images, labels = read_digits()
    held = validation + test
    kept = len(labels) - held if train is None else train
    if min(kept, validation, test) < 1 or kept + held > len(labels):
        msg = (
            f"{kept} training, {validation} validation and {test} test images: "
            f"the file holds {len(labels)}"
        )
        raise ValueError(msg)
    order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(seed))
    images, labels = images[order], labels[order]
    ends = (validation, held, held + kept)
    normalize = Normalize.fit(images[held : ends[2]])
    return Splits(
        train=Points(images[held : ends[2]], labels[held : ends[2]], normalize),
        validation=Points(images[:validation], labels[:validation], normalize),
        test=Points(images[validation:held], labels[validation:held], normalize),
        scale=normalize,
    )


def confusion_matrix(
    labels: torch.Tensor, predictions: torch.Tensor, classes: int = CLASSES
) -> torch.Tensor:
    """How often each true class (a row) was predicted as each class (a column).

    Examples
    --------
    >>> confusion_matrix(torch.tensor([0, 0, 1, 2]), torch.tensor([0, 1, 1, 2]), classes=3)
    tensor([[1, 1, 0],
            [0, 1, 0],
            [0, 0, 1]])
    """
    pairs = labels.cpu() * classes + predictions.cpu()
    return torch.bincount(pairs, minlength=classes * classes).reshape(classes, classes)

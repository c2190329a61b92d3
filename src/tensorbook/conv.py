"""A convolution computed by hand, and a small convolutional network for 8 × 8 digits.

:func:`conv2d_by_hand` slides the kernel over the image with two loops and gives what
``torch.nn.functional.conv2d`` gives; :func:`output_size` is the rule for the size it
gives. :func:`make_cnn` and :func:`make_dense` are the two networks the images chapter
trains on the same digits.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

__all__ = [
    "conv2d_by_hand",
    "count_parameters",
    "make_cnn",
    "make_dense",
    "output_size",
]


def output_size(size: int, kernel: int, *, stride: int = 1, padding: int = 0) -> int:
    """The output's height (or width) for an input ``size`` pixels high (or wide).

    It is ⌊(size + 2·padding − kernel) / stride⌋ + 1: the places the kernel fits.

    Raises
    ------
    ValueError
        If the kernel does not fit in the padded input.

    Examples
    --------
    >>> output_size(8, 3), output_size(8, 3, padding=1), output_size(8, 3, stride=2)
    (6, 8, 3)
    >>> output_size(2, 5)
    Traceback (most recent call last):
    ...
    ValueError: a kernel of 5 does not fit in 2 pixels padded by 0: pad more or use a smaller kernel
    """
    if size + 2 * padding < kernel:
        msg = (
            f"a kernel of {kernel} does not fit in {size} pixels padded by {padding}: "
            "pad more or use a smaller kernel"
        )
        raise ValueError(msg)
    return (size + 2 * padding - kernel) // stride + 1


def conv2d_by_hand(
    images: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    *,
    stride: int = 1,
    padding: int = 0,
) -> torch.Tensor:
    """Slide ``weight`` over ``images``, as ``torch.nn.functional.conv2d`` does.

    ``images`` is ``(N, C, H, W)`` and ``weight`` ``(O, C, kh, kw)``; the result is
    ``(N, O, H', W')``. Each output pixel is the sum, over every input channel, of the
    patch under the kernel times the kernel, plus the output channel's bias.

    Raises
    ------
    ValueError
        If the images' channels are not the kernel's.

    Examples
    --------
    >>> image = torch.arange(16.0).reshape(1, 1, 4, 4)
    >>> conv2d_by_hand(image, torch.ones(1, 1, 2, 2), stride=2)
    tensor([[[[10., 18.],
              [42., 50.]]]])
    >>> conv2d_by_hand(image, torch.ones(1, 3, 2, 2))
    Traceback (most recent call last):
    ...
    ValueError: the images have 1 channels but the kernel expects 3: give (N, C, H, W) images
    """
    out_channels, in_channels, kh, kw = weight.shape
    if images.shape[1] != in_channels:
        msg = (
            f"the images have {images.shape[1]} channels but the kernel expects "
            f"{in_channels}: give (N, C, H, W) images"
        )
        raise ValueError(msg)
    padded = nn.functional.pad(images, (padding, padding, padding, padding))
    height = output_size(images.shape[2], kh, stride=stride, padding=padding)
    width = output_size(images.shape[3], kw, stride=stride, padding=padding)
    out = torch.zeros(images.shape[0], out_channels, height, width, dtype=images.dtype)
    for i in range(height):
        for j in range(width):
            top, left = i * stride, j * stride
            patch = padded[:, :, top : top + kh, left : left + kw]  # (N, C, kh, kw)
            # each output channel: the patch times its kernel, summed over C, kh and kw
            out[:, :, i, j] = (patch[:, None] * weight[None]).sum(dim=(2, 3, 4))
    if bias is not None:
        out += bias.reshape(1, -1, 1, 1)
    return out


def make_cnn(channels: Sequence[int] = (8, 16), *, classes: int = 10, seed: int = 0) -> nn.Module:
    """Two 3 × 3 convolutions, each with ReLU and 2 × 2 max pooling, then one linear layer.

    Padding 1 keeps each convolution's output the size of its input, and each pooling
    halves it: an 8 × 8 image reaches the linear layer as ``channels[1]`` maps of 2 × 2.

    Examples
    --------
    >>> make_cnn()
    Sequential(
      (0): Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
      (1): ReLU()
      (2): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
      (3): Conv2d(8, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
      (4): ReLU()
      (5): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
      (6): Flatten(start_dim=1, end_dim=-1)
      (7): Linear(in_features=64, out_features=10, bias=True)
    )
    """
    first, second = channels
    with torch.random.fork_rng(devices=[]):  # the weights depend on seed alone
        torch.manual_seed(seed)
        return nn.Sequential(
            nn.Conv2d(1, first, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(first, second, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(second * 2 * 2, classes),
        )


def make_dense(
    hidden: int = 64, *, pixels: int = 64, classes: int = 10, seed: int = 0
) -> nn.Module:
    """The classification chapter's network, two hidden ReLU layers, on flattened images.

    Examples
    --------
    >>> make_dense(8)
    Sequential(
      (0): Flatten(start_dim=1, end_dim=-1)
      (1): Linear(in_features=64, out_features=8, bias=True)
      (2): ReLU()
      (3): Linear(in_features=8, out_features=8, bias=True)
      (4): ReLU()
      (5): Linear(in_features=8, out_features=10, bias=True)
    )
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(pixels, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, classes),
        )


def count_parameters(model: nn.Module) -> int:
    """The number of numbers the optimizer trains: every parameter's elements.

    Examples
    --------
    >>> count_parameters(nn.Linear(64, 10))
    650
    """
    return sum(parameter.numel() for parameter in model.parameters())

"""Draw conf/_static/social-card.png, the picture a link to the book shows when shared.

Run it again after changing the favicon's design. It is 1200 x 630 pixels, the size
social sites show large; one card serves both editions.
"""

from __future__ import annotations

from pathlib import Path

from tensorbook_build.settings import LAYOUT

CARD = LAYOUT.conf / "_static" / "social-card.png"
BLUE = "#1f5fa8"


def draw(path: Path = CARD) -> Path:
    """Draw the card into ``path``."""
    import matplotlib as mpl

    mpl.use("Agg")  # a file, never a window
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    figure = plt.figure(figsize=(12, 6.3), dpi=100, facecolor=BLUE)
    axes = figure.add_axes((0, 0, 1, 1))
    axes.set_xlim(0, 1200)
    axes.set_ylim(0, 630)
    axes.axis("off")
    # the favicon's 3 x 3 tensor, fading along both axes
    for row in range(3):
        for column in range(3):
            axes.add_patch(
                FancyBboxPatch(
                    (110 + 120 * column, 375 - 120 * row),
                    100,
                    100,
                    boxstyle="round,pad=0,rounding_size=14",
                    facecolor="white",
                    alpha=(1.0, 0.8, 0.6, 0.4, 0.25)[row + column],
                    linewidth=0,
                )
            )
    axes.text(550, 375, "tensorbook", color="white", fontsize=64, weight="bold")
    axes.text(552, 285, "PyTorch from the ground up", color="white", fontsize=30)
    axes.text(552, 215, "tensors · autograd · CUDA", color="white", fontsize=24, alpha=0.85)
    figure.savefig(path, dpi=100, facecolor=BLUE, metadata={"Software": None})
    plt.close(figure)
    return path


if __name__ == "__main__":
    print(draw())

"""The words inside the book's pictures, each a template kept here once.

A picture writes each of its words as an element marked ``data-w="<key>"``, filled
in from ``WORDS[key]`` (:func:`tensorbook.wording.fill`); the book's build reads the
fields back (:func:`tensorbook.wording.parse`) and fills in the edition's translation
of the same template, so numbers and torch's own names stay as they are. The
templates are listed for the catalogs in ``conf/_templates/picture-wording.html``.
This module imports nothing but :mod:`tensorbook.wording`, so the build reads it
cheaply.

Examples
--------
>>> from tensorbook.wording import fill, parse
>>> text = fill(WORDS["layout_contiguous"], stride="(4, 1)", offset=0)
>>> text, parse(WORDS["layout_contiguous"], text)
('stride (4, 1) · offset 0 · contiguous', {'stride': '(4, 1)', 'offset': '0'})
"""

from __future__ import annotations

__all__ = ["WORDS"]

WORDS: dict[str, str] = {
    # broadcasting
    "broadcast_title": "Broadcasting {shapes} to {result}",
    "broadcast_desc": (
        "Shapes {shapes}, aligned from the right, broadcast to {result}; "
        "{stretched} size-1 or missing dimensions are stretched."
    ),
    "dim": "dim {dim}",
    "result": "result",
    "stretched": "stretched",
    "missing": "missing",
    # memory and strides
    "memory_title": "Storage and strides of {names}",
    "memory_desc": (
        "{tensors} tensors read {storages} storage strips: each grid cell shows the "
        "storage index it reads, offset + row × stride[0] + column × stride[1]."
    ),
    "storage": "storage {number}",
    "layout_contiguous": "stride {stride} · offset {offset} · contiguous",
    "layout_strided": "stride {stride} · offset {offset} · not contiguous",
    "reads": "reads, in order",
    # the float grid
    "grid_title": "The {dtype} numbers around {center}",
    "grid_desc": (
        "{count} {dtype} numbers on either side of {center}, at their true values: the "
        "gap is {below} below it and {above} above. Each arrow is an exact step; the "
        "dashed line falls on the number it rounds to."
    ),
    "grid_gap": "gap {gap}",
    "grid_step": "{center} {sign} {step} → {result}",
    # cat and stack
    "join_title": "{joins} of {names}",
    "join_desc": "The inputs {names} as blocks, and where each lands in {joins}.",
    # the autograd graph
    "graph_title": "Backward graph of {output}",
    "graph_desc": (
        "{count} backward nodes reachable from {output}.grad_fn; {leaves} leaves, "
        "{filled} of them with .grad filled in."
    ),
    "gets_grad": "gets .grad",
    "grad_filled": ".grad {shape}",
    "grad_values": ".grad = {values}",
    "gradient_flow": "gradients flow this way",
    # the two-layer network
    "network_title": "The two-layer network: forward and backward",
    "network_desc": (
        "Forward: x {x} times w1 {w1} gives h {h}, ReLU gives h_relu, times w2 {w2} "
        "gives y_pred {y_pred}. Backward: each gradient line beside the arrow it "
        "computes."
    ),
    "forward": "forward",
    "backward": "backward",
    # the step's timeline
    "timeline_title": "One training step on the {device}, as the profiler traced it",
    "timeline_desc": (
        "{ops} operators over {total} µs of one step, one row per operator; "
        "measured while this page was built, so the times change from build to build."
    ),
    "gpu_row": "GPU",
    "microseconds": "{time} µs",
    "measured": "measured in this build",
    # a classifier's decision boundary
    "boundary_title": "Decision boundary of {name}",
    "boundary_desc": (
        "A line where the predicted class changes, found on a {grid} grid over the "
        "plane; {points} points in the colour of their true class, {wrong} of them on "
        "the wrong side of it."
    ),
    "class": "class {number}",
    # loss curves over epochs
    "curves_title": "Training and validation loss of {name} over {epochs} epochs",
    "curves_desc": (
        "The mean cross-entropy after each epoch, training loss in blue and validation "
        "loss in orange. The validation loss is lowest after epoch {best} ({low}) and "
        "ends at {last}; the training loss ends at {train}."
    ),
    "epoch_axis": "epoch",
    "lowest_epoch": "lowest validation loss: epoch {epoch}",
    "training_loss": "training loss",
    "validation_loss": "validation loss",
    # images, filters and a confusion matrix (tensorbook.draw.digits)
    "digits_title": "{count} images of {name}, with their labels",
    "digits_desc": (
        "{count} images, each drawn from its pixels, stronger in colour where a pixel's "
        "value is higher; under each, its label."
    ),
    "mistakes_title": "{count} images {name} gets wrong",
    "mistakes_desc": (
        "Each image drawn from its pixels; under it, its label, then the digit {name} predicted."
    ),
    "filters_title": "The {count} learned filters of {name}, {size} each",
    "filters_desc": (
        "Each filter's weights, blue where positive and orange where negative, stronger "
        "the larger; the largest weight is {largest} in size."
    ),
    "confusion_title": "Confusion matrix of {name}",
    "confusion_desc": (
        "A row for each true digit and a column for each predicted one; each cell counts "
        "the images, {right} of {total} on the diagonal, where the prediction is right."
    ),
    "true_digit": "true digit",
    "predicted_digit": "predicted digit",
    # loss against the step (tensorbook.plots)
    "loss_title": "The loss of {names} at each step, on a log scale",
    "loss_desc": (
        "The loss L = Σ(ŷ − y)² against the step t over {steps} steps, on a log scale; "
        "at the last step: {ends}."
    ),
    "loss_against_desc": (
        "The loss L = Σ(ŷ − y)² against the step t over {steps} steps, on a log scale; "
        "at the last step: {ends}. Below, how far each other curve is from {against}, "
        "|L / L₀ − 1|, on a log scale, from the first step where the two part."
    ),
    # the speed chapter's sweep
    "speedup_title": "Speed-up over {baseline} against the work in a step",
    "speedup_desc": (
        "For {runs}: the time {baseline} takes for a step over the time each takes, "
        "against the step's floating-point operations, both on log scales; "
        "a dashed line marks 50."
    ),
}
"""Every template, by the key a picture's elements carry."""

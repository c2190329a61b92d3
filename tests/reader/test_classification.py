"""The classification chapter's module: its data, dataset, loss, training and pictures."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from tensorbook import classification
from tensorbook.draw.boundary import boundary_picture
from tensorbook.draw.curves import curves_picture


def test_the_spirals_are_seeded_balanced_and_the_same_on_every_call():
    first = classification.spirals(300, generator=torch.Generator().manual_seed(3))
    second = classification.spirals(300, generator=torch.Generator().manual_seed(3))
    other = classification.spirals(300, generator=torch.Generator().manual_seed(4))
    assert torch.equal(first[0], second[0])
    assert torch.equal(first[1], second[1])
    assert not torch.equal(first[0], other[0])
    assert torch.bincount(first[1]).tolist() == [100, 100, 100]
    assert first[0].norm(dim=1).max() <= 1.0 + 1e-6  # the arms end at radius 1


def test_the_splits_are_standardized_with_the_training_statistics_only():
    splits = classification.spiral_splits(seed=0)
    train = torch.stack([splits.train[i][0] for i in range(len(splits.train))])
    held = torch.stack([splits.validation[i][0] for i in range(len(splits.validation))])
    torch.testing.assert_close(train.mean(0), torch.zeros(2), atol=1e-6, rtol=0)
    torch.testing.assert_close(train.std(0, correction=0), torch.ones(2), atol=1e-5, rtol=0)
    # the validation split's own statistics would have made its mean 0 too
    assert held.mean(0).abs().max() > 1e-3
    raw = splits.validation.points
    torch.testing.assert_close(held, (raw - splits.scale.mean) / splits.scale.std)


def test_the_dataset_reads_through_its_transform_and_refuses_mismatched_labels():
    data = classification.Points(torch.ones(4, 2), torch.arange(4), transform=lambda p: p * 3)
    assert len(data) == 4
    point, label = data[2]
    assert point.tolist() == [3.0, 3.0]
    assert label.item() == 2
    with pytest.raises(ValueError, match="one label per point"):
        classification.Points(torch.ones(4, 2), torch.arange(3))


def test_cross_entropy_is_minus_the_log_of_the_right_class_probability(device):
    logits = torch.tensor([[2.0, 0.0, -1.0], [0.0, 3.0, 0.0]], device=device)
    labels = torch.tensor([0, 2], device=device)
    expected = -(logits.softmax(1)[torch.arange(2), labels]).log().mean()
    torch.testing.assert_close(nn.functional.cross_entropy(logits, labels), expected)


def test_evaluate_scores_loss_and_accuracy_and_keeps_the_mode(device):
    model = nn.Linear(2, 3).to(device)
    nn.init.zeros_(model.weight)
    with torch.no_grad():
        model.bias.copy_(torch.tensor([5.0, 0.0, 0.0]))
    data = classification.Points(torch.zeros(4, 2), torch.tensor([0, 0, 0, 1]))
    score = classification.evaluate(model, data, device)
    assert score.accuracy == 0.75  # it always says class 0
    right, wrong = -math.log(math.exp(5) / (math.exp(5) + 2)), -math.log(1 / (math.exp(5) + 2))
    assert score.loss == pytest.approx((3 * right + wrong) / 4, rel=1e-5)
    assert model.training


def test_a_classifier_learns_the_spirals(device):
    splits = classification.spiral_splits(seed=0)
    model = classification.make_classifier(seed=0).to(device)
    before = classification.evaluate(model, splits.validation, device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    history = classification.fit(model, splits, optimizer, device, epochs=30)
    after = classification.evaluate(model, splits.test, device)
    assert before.accuracy < 0.5
    assert after.accuracy > 0.75
    assert history.train_loss[-1] < history.train_loss[0] / 2
    assert len(history.validation) == len(history.learning_rate) == 30
    assert history.kept == 29  # without patience, the last epoch's weights


def test_early_stopping_restores_the_best_weights(device):
    splits = classification.spiral_splits(seed=0)
    model = classification.make_classifier(seed=0).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    history = classification.fit(model, splits, optimizer, device, epochs=100, patience=5)
    losses = history.validation_loss
    assert len(losses) < 100  # this run overfits, so it stops
    assert len(losses) - 1 - history.kept == 5
    assert losses[history.kept] == min(losses)
    score = classification.evaluate(model, splits.validation, device)
    assert score.loss == pytest.approx(losses[history.kept], rel=1e-6)


def test_the_scheduler_steps_once_an_epoch(device):
    splits = classification.spiral_splits(train=30, validation=30, test=30, seed=0)
    model = classification.make_classifier(seed=0).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    history = classification.fit(model, splits, optimizer, device, epochs=5, scheduler=scheduler)
    assert history.learning_rate == pytest.approx([0.1, 0.1, 0.05, 0.05, 0.025])


@pytest.mark.parametrize(
    ("options", "message"),
    [({"epochs": 0}, "at least one epoch"), ({"epochs": 3, "patience": 0}, "patience=0")],
)
def test_fit_refuses_what_cannot_train(options, message):
    splits = classification.spiral_splits(train=30, validation=30, test=30, seed=0)
    model = classification.make_classifier(seed=0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match=message):
        classification.fit(model, splits, optimizer, torch.device("cpu"), **options)


def test_the_boundary_picture_counts_the_points_on_the_wrong_side():
    points = torch.tensor([[-1.0, 0.0], [-0.5, 0.3], [1.0, 0.0], [0.5, -0.2]])
    labels = torch.tensor([0, 1, 1, 1])
    picture = boundary_picture(lambda p: (p[:, 0] > 0).long(), points, labels, name="x > 0")
    (desc,) = (text for key, text in picture.words if key == "boundary_desc")
    assert "4 points" in desc
    assert "1 of them on the wrong side" in desc
    with pytest.raises(ValueError, match=r"\(n, 2\) points"):
        boundary_picture(lambda p: p[:, 0].long(), torch.zeros(3, 3), torch.zeros(3), name="x")


def test_the_curves_picture_marks_the_lowest_validation_loss():
    picture = curves_picture([3.0, 2.0, 1.0, 0.5], [3.0, 1.5, 2.0, 2.5], name="model")
    assert picture.title == "Training and validation loss of model over 4 epochs"
    assert ("lowest_epoch", "lowest validation loss: epoch 1") in picture.words
    (desc,) = (text for key, text in picture.words if key == "curves_desc")
    assert "lowest after epoch 1 (1.500) and ends at 2.500" in desc
    with pytest.raises(ValueError, match="finite"):
        curves_picture([1.0, math.nan], [1.0, 1.0], name="model")

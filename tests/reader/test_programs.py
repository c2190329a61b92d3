"""Each ``python -m tensorbook.<program>`` runs and prints what it promises."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tensorbook import speed
from tensorbook.__main__ import PROGRAMS
from tensorbook.environment import DEVICE_VARIABLE

TRAINING_PROGRAMS = [
    "numpy_net",
    "manual_net",
    "autograd_net",
    "custom_relu",
    "nn_net",
    "module_net",
]
LOSS_LINE = re.compile(r"^step +(\d+)  loss (\d\.\d{6}e[+-]\d{2})$", re.MULTILINE)


def run(*args: str, device: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop(DEVICE_VARIABLE, None)
    if device is not None:
        env[DEVICE_VARIABLE] = device
    return subprocess.run(
        [sys.executable, "-m", *args],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.mark.parametrize("program", TRAINING_PROGRAMS)
def test_training_program_prints_the_loss_every_100_steps(program, device):
    if program == "numpy_net" and device.type != "cpu":
        pytest.skip("NumPy runs on the CPU only")
    result = run(f"tensorbook.{program}", "--device", str(device), "--steps", "250")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Executed on "), result.stdout
    steps = [int(step) for step, _ in LOSS_LINE.findall(result.stdout)]
    assert steps == [0, 100, 200, 249]
    losses = [float(loss) for _, loss in LOSS_LINE.findall(result.stdout)]
    assert losses[-1] < losses[0] / 1e4
    if program == "custom_relu":
        assert f"gradcheck of MyReLU on {device}: passed" in result.stdout


def test_the_default_is_the_books_500_steps():
    result = run("tensorbook.numpy_net", "--device", "cpu")
    assert result.returncode == 0, result.stderr
    assert [int(s) for s, _ in LOSS_LINE.findall(result.stdout)] == [0, 100, 200, 300, 400, 499]


def test_the_device_comes_from_the_environment_without_a_flag():
    result = run("tensorbook.manual_net", "--steps", "1", device="cpu")
    assert result.returncode == 0, result.stderr
    assert "Executed on CPU" in result.stdout


def test_an_unknown_device_is_a_one_line_error():
    result = run("tensorbook.manual_net", "--device", "tpu")
    assert result.returncode == 2
    assert "error: unknown device 'tpu'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without CUDA")
def test_cuda_without_cuda_is_a_one_line_error():
    result = run("tensorbook.autograd_net", "--device", "cuda")
    assert result.returncode == 2
    assert "error: CUDA was asked for ('cuda', from --device)" in result.stderr
    assert "Traceback" not in result.stderr


def test_numpy_refuses_a_gpu_flag():
    result = run("tensorbook.numpy_net", "--device", "cuda")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "--device cpu" in result.stderr or "CUDA was asked for" in result.stderr


@pytest.mark.parametrize("steps", ["0", "-3", "many"])
def test_steps_must_be_a_positive_integer(steps):
    result = run("tensorbook.nn_net", "--device", "cpu", "--steps", steps)
    assert result.returncode == 2
    assert "expected a positive integer" in result.stderr


def test_compare_writes_a_picture_of_every_network(tmp_path):
    output = tmp_path / "losses.svg"
    result = run("tensorbook.compare", "--device", "cpu", "--steps", "101", "--output", str(output))
    assert result.returncode == 0, result.stderr
    assert len(LOSS_LINE.findall(result.stdout)) == 5 * 2
    svg = output.read_text(encoding="utf-8")
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" class="tb-picture"')
    assert svg.count("<polyline") >= 5  # a line for each network


def test_graph_prints_the_tree_and_writes_a_png(tmp_path):
    output = tmp_path / "graph.png"
    result = run("tensorbook.graph", "--device", "cpu", "--output", str(output))
    assert result.returncode == 0, result.stderr
    assert "SumBackward0\n└── AddBackward0" in result.stdout
    assert "b (3,) (the same node as above)" in result.stdout
    assert output.read_bytes().startswith(b"\x89PNG")


def test_the_index_names_exactly_the_programs_that_print_every_100_steps():
    index = (Path(__file__).parents[2] / "docs" / "index.md").read_text(encoding="utf-8")
    sentence = index[index.index("The six that train") :].split("every 100 steps")[0]
    named = re.findall(r"`(\w+)`", sentence.split("also take")[0])
    assert named == TRAINING_PROGRAMS
    assert "`--steps`" in sentence


def test_the_package_lists_every_program():
    result = run("tensorbook")
    assert result.returncode == 0, result.stderr
    for program in PROGRAMS:
        assert re.search(rf"^  {program} +\S", result.stdout, re.MULTILINE), program


def test_the_device_check_that_the_build_sessions_run_first():
    ok = run("tensorbook.device", "cpu")
    assert ok.returncode == 0
    assert ok.stdout.startswith("cpu: Executed on CPU")
    bad = run("tensorbook.device", "tpu")
    assert bad.returncode == 2
    assert bad.stderr.strip() == (
        "python -m tensorbook.device: unknown device 'tpu' (from the argument): "
        "expected 'auto', 'cpu', 'cuda' or 'cuda:N'"
    )
    if not torch.cuda.is_available():
        missing = run("tensorbook.device", "cuda")
        assert missing.returncode == 2
        assert "CUDA was asked for" in missing.stderr


def test_the_speed_program_prints_its_table(device):
    result = run("tensorbook.speed", "--device", str(device))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Executed on ")
    assert lines[1].startswith("sizes (N, D_in, H, D_out)")
    extra = [f"torch {device}"] if device.type == "cuda" else []
    expected = len(speed.CPU_SWEEP) * (2 + len(extra))
    if device.type == "cuda":  # NumPy and the GPU only, past the CPU's sizes
        expected += (len(speed.GPU_SWEEP) - len(speed.CPU_SWEEP)) * 2
    assert len(lines[2:]) == expected
    assert lines[2].startswith("64, 1000, 100, 10          NumPy")
    assert all(line.rstrip().endswith("x") for line in lines[2:])


def test_the_classification_program_prints_each_epoch_and_the_test_accuracy(device):
    result = run(
        "tensorbook.classification", "--device", str(device), "--epochs", "40", "--patience", "5"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Executed on ")
    epoch_line = r"^epoch +(\d+)  training loss \d\.\d{4}  validation loss"
    epochs = re.findall(epoch_line, result.stdout, re.MULTILINE)
    assert epochs
    assert [int(e) for e in epochs] == list(range(len(epochs)))
    kept = re.fullmatch(r"kept the weights of epoch (\d+): test accuracy (\d+\.\d)%", lines[-1])
    assert kept, lines[-1]
    assert int(kept[1]) == len(epochs) - 1 - 5  # stopped five epochs after its best
    assert float(kept[2]) > 70


def test_the_classification_program_refuses_a_negative_weight_decay():
    result = run("tensorbook.classification", "--device", "cpu", "--weight-decay", "-1")
    assert result.returncode == 2
    assert "expected a number of at least 0, got -1.0" in result.stderr
    assert "Traceback" not in result.stderr

"""The device helper: every accepted spelling, and each refusal."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest
import torch

from tensorbook.device import (
    DeviceUnavailableError,
    choose_device,
    describe_device,
    resolve_device,
)
from tensorbook.environment import DEVICE_VARIABLE

HAS_CUDA = torch.cuda.is_available()
needs_no_cuda = pytest.mark.skipif(
    HAS_CUDA, reason="checks the errors of a machine without CUDA; this one has it"
)
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device; none on this machine")


@pytest.mark.parametrize("spec", ["cpu", "CPU", " cpu ", torch.device("cpu")])
def test_cpu_spellings(spec):
    assert resolve_device(spec) == torch.device("cpu")


def test_none_reads_the_environment_variable(monkeypatch):
    monkeypatch.setenv(DEVICE_VARIABLE, "cpu")
    assert resolve_device(None) == torch.device("cpu")
    monkeypatch.setenv(DEVICE_VARIABLE, "tpu")
    with pytest.raises(ValueError, match=r"unknown device 'tpu'"):
        resolve_device(None)


def test_none_without_the_variable_means_auto(monkeypatch):
    monkeypatch.delenv(DEVICE_VARIABLE, raising=False)
    assert resolve_device(None) == resolve_device("auto")


@pytest.mark.parametrize(
    ("given", "environ", "source"),
    [
        ("cpu", {DEVICE_VARIABLE: "tpu"}, "--device"),  # the argument, not the variable, is read
        (None, {DEVICE_VARIABLE: " cpu "}, f"environment variable {DEVICE_VARIABLE}"),
        (None, {DEVICE_VARIABLE: " "}, "the default"),
        (None, {}, "the default"),
    ],
)
def test_a_choice_names_its_source(given, environ, source):
    assert choose_device(given, environ, given_by="--device", default="cpu") == ("cpu", source)


@pytest.mark.parametrize(
    ("given", "environ", "source"),
    [
        ("tpu", {DEVICE_VARIABLE: "cuda:99"}, "--device"),
        (None, {DEVICE_VARIABLE: "cuda:99"}, f"environment variable {DEVICE_VARIABLE}"),
        (None, {}, "the default"),
    ],
)
def test_a_refusal_names_its_source_and_no_other(given, environ, source):
    with pytest.raises((ValueError, DeviceUnavailableError)) as error:
        choose_device(given, environ, given_by="--device", default="tpu")
    message = str(error.value)
    assert f"from {source})" in message
    assert message.count("from") == 1, message


def test_the_cpu_is_chosen_without_importing_torch():
    """The book's build, on the CPU by default, chooses its device in a blink."""
    code = (
        "import sys; from tensorbook.device import choose_device; choose_device('cpu'); "
        "print(sorted({'numpy', 'torch'} & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout == "[]\n"


@pytest.mark.parametrize("spec", ["gpu", "cuda:", "cuda:x", "cuda:-1", "", "mps", "cpu:0"])
def test_unknown_strings_are_refused_with_the_accepted_spellings(spec):
    with pytest.raises(ValueError, match=r"expected 'auto', 'cpu', 'cuda' or 'cuda:N'"):
        resolve_device(spec)


def test_unsupported_device_type_is_refused():
    with pytest.raises(ValueError, match="unsupported device type 'meta'"):
        resolve_device(torch.device("meta"))


def test_wrong_type_is_refused():
    with pytest.raises(TypeError, match="not int"):
        resolve_device(0)


@needs_no_cuda
def test_auto_falls_back_to_the_cpu_and_says_so(caplog):
    with caplog.at_level(logging.WARNING, logger="tensorbook.device"):
        assert resolve_device("auto") == torch.device("cpu")
    assert "no CUDA device" in caplog.text
    assert "running on the CPU" in caplog.text


@needs_no_cuda
@pytest.mark.parametrize("spec", ["cuda", "cuda:0", "CUDA:1"])
def test_explicit_cuda_without_cuda_is_an_error_not_a_fallback(spec):
    with pytest.raises(DeviceUnavailableError) as error:
        resolve_device(spec)
    message = str(error.value)
    assert repr(spec) in message  # what was asked for
    assert torch.__version__ in message  # what is available
    assert "ask for 'cpu' or 'auto'" in message


@needs_no_cuda
def test_cuda_from_the_environment_names_the_variable(monkeypatch):
    monkeypatch.setenv(DEVICE_VARIABLE, "cuda")
    with pytest.raises(DeviceUnavailableError, match=f"environment variable {DEVICE_VARIABLE}"):
        resolve_device()


@needs_cuda
def test_cuda_resolves_to_an_indexed_device():
    device = resolve_device("cuda")
    assert device.type == "cuda"
    assert device.index == torch.cuda.current_device()
    assert resolve_device("cuda:0") == torch.device("cuda", 0)
    assert resolve_device("auto").type == "cuda"


@needs_cuda
def test_a_cuda_index_past_the_last_gpu_is_an_error():
    count = torch.cuda.device_count()
    with pytest.raises(DeviceUnavailableError, match=f"'cuda:{count}'"):
        resolve_device(f"cuda:{count}")


@needs_cuda
def test_describe_names_the_gpu():
    line = describe_device(resolve_device("cuda"))
    assert torch.cuda.get_device_name(0) in line
    assert line.startswith("Executed on GPU ")


def test_describe_cpu_line():
    line = describe_device(torch.device("cpu"))
    assert line.startswith("Executed on CPU (")
    assert f"torch {torch.__version__}" in line
    assert f"{torch.get_num_threads()} CPU thread" in line

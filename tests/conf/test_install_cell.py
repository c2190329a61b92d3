"""A download's first cell on the readers' machines: what it says, and what it installs.

The cell (``tensorbook_build.downloads.install_code``) runs here with pip replaced by a
recorder and the machine's facts (the installed versions, an NVIDIA driver, the
operating system) set by each case, up to the line that imports the package.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import os
import shutil
import subprocess
import sys

import pytest

from tensorbook_build.downloads import (
    CPU_INDEX,
    CPU_TORCH_SIZE,
    CUDA_TORCH_SIZE,
    WHEEL_KB_AT_MOST,
    install_code,
)

WHEEL = "https://example.org/book/wheels/tensorbook-9.9.9-py3-none-any.whl"


def run_cell(
    monkeypatch: pytest.MonkeyPatch,
    *,
    torch: str | None,
    tensorbook: str | None = "9.9.9",
    nvidia: bool = False,
    platform: str = "linux",
    build: str = "auto",
) -> tuple[str, list[list[str]]]:
    """What the cell printed, and each pip command it ran (its arguments after ``install``)."""
    code = install_code(WHEEL, "9.9.9")
    code = code.replace('TORCH_BUILD = "auto"', f"TORCH_BUILD = {build!r}", 1)
    code = code[: code.index("\nimport tensorbook\n")]  # the package is not what is tested
    installs: list[list[str]] = []
    versions = {"torch": torch, "tensorbook": tensorbook}

    def version(name: str) -> str:
        if versions.get(name) is None:
            raise importlib.metadata.PackageNotFoundError(name)
        return str(versions[name])

    def check_call(command: list[str]) -> int:
        assert command[:4] == [sys.executable, "-m", "pip", "install"], command
        installs.append(command[4:])
        return 0

    driver = "/proc/driver/nvidia"
    real_exists = os.path.exists
    printed = io.StringIO()
    with monkeypatch.context() as patch:
        patch.setattr(importlib.metadata, "version", version)
        patch.setattr(subprocess, "check_call", check_call)
        patch.setattr(shutil, "which", lambda _name: "/usr/bin/nvidia-smi" if nvidia else None)
        patch.setattr(os.path, "exists", lambda p: nvidia if p == driver else real_exists(p))
        patch.setattr(sys, "platform", platform)
        with contextlib.redirect_stdout(printed):
            exec(compile(code, "first-cell", "exec"), {})  # noqa: S102 (the cell under test)
    return printed.getvalue(), installs


def test_a_suitable_torch_and_the_package_installed_install_nothing(monkeypatch):
    printed, installs = run_cell(monkeypatch, torch="2.13.0+cu130")
    assert installs == []
    assert "torch 2.13.0+cu130 is installed: this cell installs no torch." in printed
    assert "tensorbook 9.9.9 is installed: this cell installs nothing more." in printed


@pytest.mark.parametrize("torch", [None, "2.10.0", "1.13.1"])
def test_without_a_gpu_on_linux_the_cpu_only_torch_is_installed_and_said(monkeypatch, torch):
    printed, installs = run_cell(monkeypatch, torch=torch)
    assert installs == [["torch>=2.11", "--index-url", CPU_INDEX]]
    assert printed.startswith("No NVIDIA GPU was found: installing torch's CPU-only build")
    assert CPU_TORCH_SIZE in printed  # how large, before it downloads
    assert CUDA_TORCH_SIZE in printed  # and the other choice, with its size
    assert "set TORCH_BUILD = 'cuda'" in printed


def test_with_a_gpu_on_linux_pypis_cuda_build_is_installed_and_said(monkeypatch):
    printed, installs = run_cell(monkeypatch, torch=None, nvidia=True)
    assert installs == [["torch>=2.11"]]
    assert printed.startswith("An NVIDIA GPU was found: installing PyPI's torch, with NVIDIA's")
    assert CUDA_TORCH_SIZE in printed
    assert "set TORCH_BUILD = 'cpu'" in printed


def test_the_reader_may_choose_the_cpu_only_build_on_a_gpu_machine(monkeypatch):
    _, installs = run_cell(monkeypatch, torch=None, nvidia=True, build="cpu")
    assert installs == [["torch>=2.11", "--index-url", CPU_INDEX]]


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_elsewhere_pypis_torch_has_no_cuda_and_is_installed_as_it_is(monkeypatch, platform):
    printed, installs = run_cell(monkeypatch, torch=None, platform=platform)
    assert installs == [["torch>=2.11"]]
    assert f"whose build for {platform} has no CUDA libraries" in printed


@pytest.mark.parametrize("tensorbook", [None, "0.0.1"])
def test_the_package_is_installed_from_the_site_where_it_is_not_the_books(monkeypatch, tensorbook):
    printed, installs = run_cell(monkeypatch, torch="2.11.0", tensorbook=tensorbook)
    assert installs == [[WHEEL]]
    assert f"Installing tensorbook 9.9.9 (under {WHEEL_KB_AT_MOST} kB)" in printed

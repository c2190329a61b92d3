"""A download's first cell on the readers' machines: what it says, and what it installs.

The cell (``conf/tensorbook_build/reader/install_cell.py``, filled by
``tensorbook_build.downloads.install_code``) runs here with pip replaced by a recorder and
the machine's facts (the installed versions, an NVIDIA driver, the operating system) set
by each case, up to the line that imports the package.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.metadata
import io
import itertools
import pathlib
import shutil
import subprocess
import sys

import pytest
from packaging.requirements import Requirement

import tensorbook
from tensorbook_build.downloads import INSTALL_CELL, install_code

WHEEL = "https://example.org/book/wheels/tensorbook-9.9.9-py3-none-any.whl"
CELL = {
    node.targets[0].id: ast.literal_eval(node.value)
    for node in itertools.takewhile(
        lambda node: isinstance(node, ast.Assign),
        ast.parse(INSTALL_CELL.read_text(encoding="utf-8")).body,
    )
    if isinstance(node.targets[0], ast.Name)
}
"""The cell's own constants, as it assigns them at its top, before its imports."""
CPU_INDEX, SIZES = CELL["CPU_INDEX"], CELL["TORCH_SIZES"]


def _code(build: str = "auto", version: str = "9.9.9") -> str:
    return install_code(
        {"TORCH_BUILD": build, "TENSORBOOK_VERSION": version, "TENSORBOOK_WHEEL": WHEEL}
    )


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
    code = _code(build)
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

    driver = pathlib.Path("/proc/driver/nvidia")
    real_exists = pathlib.Path.exists
    printed = io.StringIO()
    with monkeypatch.context() as patch:
        patch.setattr(importlib.metadata, "version", version)
        patch.setattr(subprocess, "check_call", check_call)
        patch.setattr(shutil, "which", lambda _name: "/usr/bin/nvidia-smi" if nvidia else None)
        patch.setattr(pathlib.Path, "exists", lambda p: nvidia if p == driver else real_exists(p))
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
    assert SIZES["cpu"] in printed  # how large, before it downloads
    assert SIZES["cuda"] in printed  # and the other choice, with its size
    assert "set TORCH_BUILD = 'cuda'" in printed


def test_with_a_gpu_on_linux_pypis_cuda_build_is_installed_and_said(monkeypatch):
    printed, installs = run_cell(monkeypatch, torch=None, nvidia=True)
    assert installs == [["torch>=2.11"]]
    assert printed.startswith("An NVIDIA GPU was found: installing PyPI's torch, with NVIDIA's")
    assert SIZES["cuda"] in printed
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
    assert f"Installing tensorbook 9.9.9 (under {CELL['WHEEL_KB_AT_MOST']} kB)" in printed


def test_the_cell_asks_for_the_torch_the_package_asks_for():
    """Its TORCH_MINIMUM is the floor of the package's own torch requirement."""
    floor = next(
        Requirement(r)
        for r in importlib.metadata.requires("tensorbook") or []
        if r.startswith("torch")
    )
    minimum = ".".join(map(str, CELL["TORCH_MINIMUM"]))
    assert str(floor.specifier) == f">={minimum}"


def test_a_kernel_that_imports_another_tensorbook_is_told_to_restart(monkeypatch):
    """The cell's last lines: the package Python imports is the one the chapter was made
    with, or the cell stops with one line that says what to do."""
    with monkeypatch.context() as patch:
        patch.setattr(
            importlib.metadata, "version", lambda name: {"torch": "2.13.0"}.get(name, "9.9.9")
        )
        with contextlib.redirect_stdout(io.StringIO()), pytest.raises(RuntimeError) as raised:
            exec(compile(_code(version="9.9.9"), "first-cell", "exec"), {})  # noqa: S102
    assert str(raised.value) == (
        f"this chapter was made with tensorbook 9.9.9, and Python imports "
        f"{tensorbook.__version__}: restart the kernel and run this cell again"
    )
    with contextlib.redirect_stdout(io.StringIO()) as printed:  # the book's own: nothing to do
        exec(compile(_code(version=tensorbook.__version__), "first-cell", "exec"), {})  # noqa: S102
    assert "this cell installs nothing more" in printed.getvalue()

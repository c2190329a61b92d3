# This chapter needs a recent torch and tensorbook, the package that made the book's pages,
# at the versions below. This cell installs whichever is missing, and nothing else.
# Where torch is missing, TORCH_BUILD says which build to install:
# "cpu": the CPU-only build, from PyTorch's CPU index;
# "cuda": PyPI's default build, which on Linux brings NVIDIA's CUDA libraries;
# "auto": "cuda" where an NVIDIA GPU is found, else "cpu".
TORCH_BUILD = "auto"
TORCH_SIZES = {"cpu": "about 200 MB", "cuda": "about 3 GB, over 5 GB once installed"}
TORCH_MINIMUM = (2, 11)
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
TENSORBOOK_VERSION = ""
TENSORBOOK_WHEEL = ""
WHEEL_KB_AT_MOST = 200

import importlib
import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path


def installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def recent_enough(version: str) -> bool:
    numbers = version.split("+", maxsplit=1)[0].split(".")[:2]
    major_minor = tuple(int("".join(c for c in n if c.isdigit()) or 0) for n in numbers)
    return major_minor >= TORCH_MINIMUM


def pip_install(*arguments: str) -> None:
    subprocess.check_call([sys.executable, "-m", "pip", "install", *arguments])
    importlib.invalidate_caches()


TORCH = installed("torch")
if TORCH is not None and recent_enough(TORCH):
    print(f"torch {TORCH} is installed: this cell installs no torch.")
else:
    nvidia = shutil.which("nvidia-smi") is not None or Path("/proc/driver/nvidia").exists()
    build = TORCH_BUILD if TORCH_BUILD != "auto" else "cuda" if nvidia else "cpu"
    found = "An NVIDIA GPU was found" if nvidia else "No NVIDIA GPU was found"
    index: list[str] = []
    if build == "cpu" and sys.platform.startswith("linux"):
        print(
            f"{found}: installing torch's CPU-only build from PyTorch's CPU index,\n"
            f"{TORCH_SIZES['cpu']} to download. For PyPI's build with CUDA instead\n"
            f"({TORCH_SIZES['cuda']}), set TORCH_BUILD = 'cuda' and run this cell again."
        )
        index = ["--index-url", CPU_INDEX]
    elif sys.platform.startswith("linux"):
        print(
            f"{found}: installing PyPI's torch, with NVIDIA's CUDA libraries,\n"
            f"{TORCH_SIZES['cuda']}. For the CPU-only build instead\n"
            f"({TORCH_SIZES['cpu']}), set TORCH_BUILD = 'cpu' and run this cell again."
        )
    else:
        print(f"Installing PyPI's torch, whose build for {sys.platform} has no CUDA libraries.")
    pip_install(f"torch>={'.'.join(map(str, TORCH_MINIMUM))}", *index)

if installed("tensorbook") != TENSORBOOK_VERSION:
    print(
        f"Installing tensorbook {TENSORBOOK_VERSION} (under {WHEEL_KB_AT_MOST} kB) from the "
        "book's site,\nwith NumPy and Matplotlib where they are missing."
    )
    pip_install(TENSORBOOK_WHEEL)
else:
    print(f"tensorbook {TENSORBOOK_VERSION} is installed: this cell installs nothing more.")

import tensorbook

if tensorbook.__version__ != TENSORBOOK_VERSION:
    message = (
        f"this chapter was made with tensorbook {TENSORBOOK_VERSION}, and Python imports "
        f"{tensorbook.__version__}: restart the kernel and run this cell again"
    )
    raise RuntimeError(message)

"""The reader's own code that a download carries as it is, kept as files ruff and mypy read.

``install_cell.py`` is a download's first code cell, whose values
:func:`tensorbook_build.downloads.install_code` fills. It runs on the reader's machine
before the package is there, so it is not part of ``tensorbook``; it is never imported
(the root ``conftest.py`` keeps pytest from importing it: it would install). What torch
weighs, as its ``TORCH_SIZES`` tell the reader: torch 2.13.0 for CPython 3.11 on Linux
x86-64 from PyTorch's CPU index is a 192 MB wheel; PyPI's build depends on NVIDIA's
CUDA 13 libraries, about 3 GB more to download, and a fresh environment with it took
5.6 GB. A reader's machine differs, hence "about".
"""

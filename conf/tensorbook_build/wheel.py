"""The package as the site serves it to its readers: a wheel of ``tensorbook`` alone.

A downloaded chapter installs the exact version that produced the book's pages, from
the site itself (``<base URL>wheels/``). The project's own wheel would also carry the
build's tooling (``tensorbook_build``), which a reader does not run, so this one is
written here, from ``src/tensorbook`` and ``pyproject.toml``'s metadata: a pure-Python
wheel (PEP 427), every file stamped with one fixed time and listed in one order, so
that two builds of one source write the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import zipfile
from pathlib import Path

__all__ = ["FOLDER", "wheel_name", "write_wheel"]

FOLDER = "wheels"
"""The folder at the site's root that holds the wheel."""
_STAMP = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip file can say
_PACKAGE = "tensorbook"


def wheel_name(version: str) -> str:
    """The wheel's file name.

    Examples
    --------
    >>> wheel_name("0.1.0")
    'tensorbook-0.1.0-py3-none-any.whl'
    """
    return f"{_PACKAGE}-{version}-py3-none-any.whl"


def _metadata(version: str) -> tuple[str, str]:
    """The wheel's METADATA and entry points: the installed project's, at ``version``.

    The project is installed (editable) wherever the book is built, so its metadata is
    what ``pyproject.toml`` says, without reading a file a copy of the book may lack.
    """
    installed = importlib.metadata.distribution(_PACKAGE)
    meta = installed.metadata
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {meta['Name']}",
        f"Version: {version}",
        f"Summary: {meta.json.get('summary', '')}",  # PackageMetadata has get only from 3.12
        f"Requires-Python: {meta.json.get('requires_python', '>=3')}",
        *(f"Requires-Dist: {requirement}" for requirement in meta.get_all("Requires-Dist") or []),
    ]
    scripts = sorted(
        f"{entry.name} = {entry.value}\n"
        for entry in installed.entry_points
        if entry.group == "console_scripts"
    )
    entries = f"[console_scripts]\n{''.join(scripts)}" if scripts else ""
    return "\n".join(lines) + "\n", entries


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(src: Path, version: str, folder: Path) -> Path:
    """Write ``tensorbook``'s wheel (from ``src/tensorbook``) into ``folder``; its path."""
    package = src / _PACKAGE
    files = {
        f"{_PACKAGE}/{path.relative_to(package).as_posix()}": path.read_bytes()
        for path in sorted(package.rglob("*.py"))
    }
    info = f"{_PACKAGE}-{version}.dist-info"
    metadata, entries = _metadata(version)
    files[f"{info}/METADATA"] = metadata.encode()
    if entries:
        files[f"{info}/entry_points.txt"] = entries.encode()
    files[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: tensorbook_build.wheel\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n"
    )
    record = [_record_line(name, data) for name, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / wheel_name(version)
    partial = target.with_suffix(".part")  # never a half-written wheel under its name
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, date_time=_STAMP)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            wheel.writestr(entry, data)
    partial.replace(target)
    return target

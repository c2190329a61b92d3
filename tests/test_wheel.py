"""The wheel the site serves to its readers: the package alone, the same bytes every time."""

from __future__ import annotations

import base64
import hashlib
import zipfile

import tensorbook
from tensorbook_build.settings import LAYOUT
from tensorbook_build.wheel import wheel_name, write_wheel


def test_the_wheel_holds_the_package_alone_and_is_the_same_bytes_each_time(tmp_path):
    first = write_wheel(LAYOUT.src, tensorbook.__version__, tmp_path / "a")
    second = write_wheel(LAYOUT.src, tensorbook.__version__, tmp_path / "b")
    assert first.name == wheel_name(tensorbook.__version__)
    assert first.read_bytes() == second.read_bytes()
    with zipfile.ZipFile(first) as wheel:
        names = wheel.namelist()
        info = f"tensorbook-{tensorbook.__version__}.dist-info/"
        assert all(n.startswith(("tensorbook/", info)) for n in names), names
        assert "tensorbook/__init__.py" in names
        assert not any("tensorbook_build" in n for n in names)
        assert not list(first.parent.glob("*.part"))  # nothing half-written left
        for line in wheel.read(info + "RECORD").decode().splitlines():
            name, digest, size = line.split(",")
            if name.endswith("RECORD"):
                continue
            data = wheel.read(name)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == f"sha256={expected.decode()}", name
            assert int(size) == len(data), name
        metadata = wheel.read(info + "METADATA").decode()
        assert f"Version: {tensorbook.__version__}" in metadata
        assert "Requires-Dist: torch>=2.11" in metadata

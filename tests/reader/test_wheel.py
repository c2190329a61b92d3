"""The wheel the site serves to its readers: the package alone, the same bytes every time."""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile

from tests.support.book import copy_of_the_book

import tensorbook
from tensorbook_build.settings import wheel_name
from tensorbook_build.site import write_wheel


def test_the_wheel_holds_the_package_alone_and_is_the_same_bytes_each_time(tmp_path, monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)  # the build sets it itself
    first = write_wheel(tmp_path / "a")
    # a second source, as another clone is: the same files, written at another time
    copy = copy_of_the_book(tmp_path, parts=["src"])
    for path in copy.rglob("*"):
        os.utime(path, (1e9, 1e9))  # 2001: no checkout's files are that old
    second = write_wheel(tmp_path / "b", copy)
    assert first.name == wheel_name(tensorbook.__version__)
    assert first.read_bytes() == second.read_bytes()
    assert [path.name for path in first.parent.iterdir()] == [first.name]  # nothing half-written
    with zipfile.ZipFile(first) as wheel:
        names = wheel.namelist()
        assert {entry.date_time for entry in wheel.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        info = f"tensorbook-{tensorbook.__version__}.dist-info/"
        assert all(n.startswith(("tensorbook/", info)) for n in names), names
        assert "tensorbook/__init__.py" in names
        assert "tensorbook/__main__.py" in names  # python -m tensorbook
        # the images chapter's data, and its licence, travel with the package
        assert "tensorbook/data/digits.csv.gz" in names
        assert "tensorbook/data/digits-LICENSE.txt" in names
        assert not any("tensorbook_build" in n for n in names)
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
        # the reader's only entry point is the package's own command, none of the build's
        entry_points = wheel.read(info + "entry_points.txt").decode()
        assert entry_points.split() == ["[console_scripts]", "tensorbook=tensorbook.__main__:main"]

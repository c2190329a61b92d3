"""The npm packages the browser suite installs run on the Node.js the README names.

``npm ci --prefix tests/browser`` installs what ``tests/browser/package-lock.json``
lists; a package whose ``engines.node`` range leaves out the README's oldest Node.js
makes npm warn (``EBADENGINE``) there, and may not run. Lighthouse 13, for one, asks
for Node.js 22.19.
"""

from __future__ import annotations

import json
import re

import pytest
from tests.support.book import ROOT

LOCK = ROOT / "tests" / "browser" / "package-lock.json"

Version = tuple[int, int, int]
_PARTIAL = re.compile(r"v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:[-+].*)?")


def _partial(text: str) -> list[int]:
    """The given numbers of a version, up to the first wildcard: "1.2.x" is [1, 2]."""
    match = _PARTIAL.fullmatch(text)
    if match is None:
        msg = f"not a version: {text!r}"
        raise ValueError(msg)
    numbers: list[int] = []
    for part in match.groups():
        if part is None or not part.isdigit():
            break
        numbers.append(int(part))
    return numbers


def _padded(numbers: list[int]) -> Version:
    major, minor, patch = [*numbers, 0, 0, 0][:3]
    return major, minor, patch


def _next(numbers: list[int]) -> Version:
    """The first version after every version that starts with ``numbers``."""
    return _padded([*numbers[:-1], numbers[-1] + 1])


def _bounds(comparator: str) -> list[tuple[str, Version]]:
    """One comparator of an npm range as plain bounds: ``^1.2`` is >= 1.2.0 and < 2.0.0."""
    op, text = re.fullmatch(r"(>=|<=|>|<|=|\^|~)?(.*)", comparator).groups()
    numbers = _partial(text) if text not in ("", "*", "x", "X") else []
    if not numbers:
        return [] if op in (None, "=", ">=", "<=", "^", "~") else [("<", (0, 0, 0))]
    exact = len(numbers) == 3
    if op == "^":
        significant = next((i for i, n in enumerate(numbers) if n), len(numbers) - 1)
        return [(">=", _padded(numbers)), ("<", _next(numbers[: significant + 1]))]
    if op == "~":
        return [
            (">=", _padded(numbers)),
            ("<", _next(numbers[:2] if len(numbers) > 1 else numbers)),
        ]
    if op == ">":
        return [(">", _padded(numbers))] if exact else [(">=", _next(numbers))]
    if op == "<=":
        return [("<=", _padded(numbers))] if exact else [("<", _next(numbers))]
    if op in (">=", "<"):
        return [(op, _padded(numbers))]
    return [("=", _padded(numbers))] if exact else [(">=", _padded(numbers)), ("<", _next(numbers))]


def accepts(spec: str, version: Version) -> bool:
    """Whether npm's range ``spec`` (``^18.19.0 || >=20.6.0``, ``6.* || >= 10.*``,
    ``1.2 - 2``...) accepts ``version``, as node-semver reads it (prereleases aside)."""
    checks = {
        ">=": lambda a, b: a >= b,
        ">": lambda a, b: a > b,
        "<=": lambda a, b: a <= b,
        "<": lambda a, b: a < b,
        "=": lambda a, b: a == b,
    }
    for alternative in spec.split("||"):
        hyphen = re.fullmatch(r"\s*(\S+)\s+-\s+(\S+)\s*", alternative)
        if hyphen:
            comparators = [f">={hyphen[1]}", f"<={hyphen[2]}"]
        else:
            comparators = re.sub(r"(>=|<=|>|<|=|\^|~)\s+", r"\1", alternative).split()
        bounds = [bound for comparator in comparators for bound in _bounds(comparator)]
        if all(checks[op](version, limit) for op, limit in bounds):
            return True
    return False


@pytest.mark.parametrize(
    ("spec", "version", "expected"),
    [
        ("*", (20, 0, 0), True),
        (">=22.19", (20, 0, 0), False),
        (">= 10.*", (20, 0, 0), True),
        ("6.* || 8.* || >= 10.*", (9, 1, 0), False),
        ("^18.19.0 || >=20.6.0", (20, 0, 0), False),
        ("^18.19.0 || >=20.6.0", (18, 20, 0), True),
        (">=20.19.0 <22.0.0 || >=22.12.0", (22, 1, 0), False),
        (">=16 || 14 >=14.17", (14, 18, 0), True),
        (">=16 || 14 >=14.17", (15, 0, 0), False),
        ("^0.2.3", (0, 3, 0), False),
        ("~1.2", (1, 2, 9), True),
        (">1.2", (1, 2, 9), False),
        ("<=1.2", (1, 2, 9), True),
        ("1.2 - 2", (2, 9, 0), True),
        ("4.x || >=6.0.0", (5, 0, 0), False),
    ],
)
def test_the_range_reader_reads_npm_ranges_as_npm_does(spec, version, expected):
    assert accepts(spec, version) is expected


def test_every_locked_package_runs_on_the_oldest_node_the_readme_names():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    named = re.search(r"Node\.js (\d+(?:\.\d+){0,2}) or newer", readme)
    assert named is not None, "the README no longer names the Node.js the tests need"
    oldest = _padded(_partial(named[1]))
    packages = json.loads(LOCK.read_text(encoding="utf-8"))["packages"]
    refusing = {
        f"{path.removeprefix('node_modules/')}@{package['version']}": package["engines"]["node"]
        for path, package in packages.items()
        if path and "node" in package.get("engines", {})
        if not accepts(package["engines"]["node"], oldest)
    }
    assert refusing == {}, f"these ask for another Node.js than the README's {named[1]}"

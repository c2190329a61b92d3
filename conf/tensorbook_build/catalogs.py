"""The build's one reader of ``.po`` catalogs, strict where Sphinx is lenient.

Sphinx's Babel prints a problem to stdout and drops the message, so a typo would
quietly turn a sentence back into English.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import PoFileError, read_po

# A line of a catalog is a comment, a keyword with a quoted string, or a quoted string
# continuing the one before; Babel accepts a string without its closing quote.
_PO_LINE = re.compile(
    r'^\s*(?:#.*|(?:msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?)\s+"(?:[^"\\]|\\.)*"'
    r'|"(?:[^"\\]|\\.)*")?\s*$'
)


def read_catalog(po_path: Path) -> Catalog:
    """A catalog as Babel reads it, refusing what Babel can tell is invalid."""
    with po_path.open("rb") as file:
        return read_po(file, abort_invalid=True)


def catalog_folders(srcdir: str | Path, locale_dirs: Iterable[str], language: str) -> list[Path]:
    """One language's catalog folders, in Sphinx's order of precedence (``locale_dirs``)."""
    return [Path(srcdir, d, language, "LC_MESSAGES") for d in locale_dirs]


def page_translations(folders: list[Path], domain: str) -> dict[str, str]:
    """One page's translations (``domain``: its catalog's name), the first folder's winning."""
    found: dict[str, str] = {}
    for folder in reversed(folders):
        found |= translations(folder / f"{domain}.po")
    return found


def translations(po_path: Path) -> dict[str, str]:
    """A catalog's translations as Sphinx uses them (not fuzzy, not empty); ``{}`` for none."""
    if not po_path.is_file():
        return {}
    return {
        m.id: m.string
        for m in read_catalog(po_path)
        if m.id and isinstance(m.id, str) and m.string and isinstance(m.string, str) and not m.fuzzy
    }


def catalog_errors(po_path: Path) -> list[str]:
    """``file:line: problem`` for each problem that makes a catalog unreadable, or [].

    Lines are checked first, as msgfmt would, then Babel reads the whole file.
    """
    try:
        lines = po_path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        return [f"{po_path}: not UTF-8: {error}"]
    errors: list[str] = []
    previous = None  # the last keyword of the entry being read
    unanswered = 0  # the line of a msgid still waiting for its msgstr
    for number, line in enumerate([*lines, ""], 1):  # a blank line closes the last entry
        if not _PO_LINE.match(line):
            errors.append(
                f"{po_path}:{number}: not a comment, keyword or quoted string: {line.strip()!r}"
            )
            continue
        keyword = line.split(None, 1)[0].split("[")[0] if line.startswith("msg") else None
        if keyword is None and not line.lstrip().startswith('"'):  # blank or comment
            previous = None
        if keyword in {None, "msgctxt", "msgid"} and previous is None and unanswered:
            errors.append(f"{po_path}:{unanswered}: msgid without a msgstr after it")
            unanswered = 0
        if keyword == "msgstr" and previous not in {"msgid", "msgid_plural", "msgstr"}:
            errors.append(f"{po_path}:{number}: msgstr without a msgid before it")
        if keyword == "msgid":
            unanswered = number
        elif keyword == "msgstr":
            unanswered = 0
        previous = keyword or previous
    if errors:
        return errors
    try:
        read_catalog(po_path)
    except PoFileError as error:
        # Babel counts lines from 0
        return [f"{po_path}:{error.lineno + 1}: {error}: {error.line.strip()!r}"]
    return []

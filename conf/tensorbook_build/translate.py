"""The catalogs' refresh after an English edit, and the staleness gate (``nox -s translate``).

``python -m tensorbook_build.translate --update`` extracts the English messages, merges
them into every translation's catalogs (:func:`tensorbook_build.build.catalog_update_command`)
and ends with the gate; without ``--update`` it runs the gate alone, as the tests do, on
messages it extracts into a temporary folder unless ``--pot-dir`` holds them. The gate
compares the messages of the English pages (the ``.pot`` files that Sphinx's gettext
builder writes) with each translation's catalogs, and reports with the catalog's file
and line and the English text each message that is untranslated or fuzzy, missing from
its catalog or no longer in the English (live, or kept as an obsolete ``#~`` entry), and
each page without a catalog or catalog without a page.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tensorbook_build.build import catalog_update_command, gettext_command
from tensorbook_build.catalogs import read_catalog
from tensorbook_build.settings import LANGUAGES, LAYOUT, SOURCE_LANGUAGE


@dataclass(frozen=True)
class StaleMessage:
    """One message that keeps a translation from being complete and current."""

    catalog: Path
    line: int  # of the message in the catalog; 0 where the catalog lacks it
    problem: str
    english: str

    def __str__(self) -> str:
        """``catalog:line: problem: 'English'``, as the gate prints it."""
        english = " ".join(self.english.split())
        if len(english) > 100:
            english = english[:97] + "..."
        where = f"{_shown(self.catalog)}:{self.line}" if self.line else _shown(self.catalog)
        return f"{where}: {self.problem}: {english!r}"


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(LAYOUT.root))
    except ValueError:
        return str(path)


def catalog_problems(po_path: Path, english: set[str] | None = None) -> list[StaleMessage]:
    """What is wrong inside one catalog.

    With ``english`` (the page's messages), also which messages the English no longer has,
    and which English ones the catalog lacks.

    The header entry (empty msgid) is not a message and is never reported.
    """
    catalog = read_catalog(po_path)
    problems = []
    for message in catalog:
        if not message.id:
            continue
        text = message.id if isinstance(message.id, str) else message.id[0]
        if english is not None and text not in english:
            problems.append(
                StaleMessage(po_path, message.lineno or 0, "no longer in the English", text)
            )
        elif message.fuzzy:
            problems.append(StaleMessage(po_path, message.lineno or 0, "fuzzy", text))
        elif not message.string:
            problems.append(StaleMessage(po_path, message.lineno or 0, "untranslated", text))
    for message in catalog.obsolete.values():
        text = message.id if isinstance(message.id, str) else message.id[0]
        problems.append(
            StaleMessage(po_path, message.lineno or 0, "obsolete (#~), remove it", text)
        )
    if english is not None:
        translated = {m.id for m in catalog if m.id}
        problems.extend(
            StaleMessage(po_path, 0, "not in the catalog; run nox -s translate", text)
            for text in sorted(english - translated)
        )
    return problems


def stale_messages(pot_dir: Path, locale_dir: Path, languages: list[str]) -> list[StaleMessage]:
    """Every message of every translation that does not follow the English pages."""
    problems = []
    english = {
        pot.stem: {m.id for m in read_catalog(pot) if m.id and isinstance(m.id, str)}
        for pot in sorted(pot_dir.glob("*.pot"))
    }
    for language in languages:
        catalogs = locale_dir / language / "LC_MESSAGES"
        for page, messages in english.items():
            po_path = catalogs / f"{page}.po"
            if not po_path.exists():
                problems.append(
                    StaleMessage(po_path, 0, "no catalog for this page; run nox -s translate", page)
                )
                continue
            problems.extend(catalog_problems(po_path, messages))
        for po_path in sorted(catalogs.glob("*.po")):
            if po_path.stem not in english:
                problems.append(StaleMessage(po_path, 0, "catalog of a page that is gone", ""))
    return problems


def main(argv: list[str] | None = None) -> int:
    """Run the gate (after refreshing the catalogs, with ``--update``); 1 if anything is stale."""
    parser = argparse.ArgumentParser(
        prog="python -m tensorbook_build.translate", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--update", action="store_true", help="refresh every translation's catalogs first"
    )
    parser.add_argument("--pot-dir", type=Path, help="extracted messages (default: extract now)")
    parser.add_argument("--docs", type=Path, default=LAYOUT.docs)
    parser.add_argument("--conf", type=Path, default=LAYOUT.conf)
    args = parser.parse_args(argv)

    translations = [code for code in LANGUAGES if code != SOURCE_LANGUAGE]
    locale_dir = args.docs / LAYOUT.locales.relative_to(LAYOUT.docs)
    with tempfile.TemporaryDirectory(prefix="tensorbook-pot-") as scratch:
        pot_dir = args.pot_dir
        if pot_dir is None:
            # the catalogs record each message's place relative to the extracted files, so
            # a refresh extracts beside the checkout's build, where every refresh does
            where = args.docs.parent / "build" if args.update else Path(scratch)
            pot_dir = where / "gettext"
            command = gettext_command(pot_dir, docs=args.docs, conf=args.conf)
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(
                    f"extracting the messages failed:\n{done.stdout}{done.stderr}", file=sys.stderr
                )
                return 1
        if args.update:
            for language in translations:
                subprocess.run(
                    catalog_update_command(pot_dir, locale_dir, language),
                    check=True,
                    stdout=subprocess.DEVNULL,
                )
        problems = stale_messages(pot_dir, locale_dir, translations)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} messages do not follow the English ({', '.join(translations)})")
        return 1
    print(f"every message is translated and current ({', '.join(translations)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The catalogs' refresh after an English edit, and the staleness gate (``nox -s translate``).

``--update`` extracts the English messages and merges them into every translation's
catalogs (:func:`tensorbook_build.build.catalog_update_command`), then runs the gate,
which is all that runs without it. The gate names, by catalog, line and English text,
each message that is untranslated, fuzzy, missing or no longer in the English, and each
page without a catalog or catalog without a page.
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
        catalog = self.catalog
        if catalog.is_relative_to(LAYOUT.root):
            catalog = catalog.relative_to(LAYOUT.root)
        where = f"{catalog}:{self.line}" if self.line else str(catalog)
        return f"{where}: {self.problem}: {english!r}"


def catalog_problems(po_path: Path, english: set[str] | None = None) -> list[StaleMessage]:
    """What is wrong inside one catalog, and, given the page's ``english``, beside it."""
    catalog = read_catalog(po_path)
    problems = []
    for message in catalog:
        if not message.id:  # the header
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
    args = parser.parse_args(argv)

    translations = [code for code in LANGUAGES if code != SOURCE_LANGUAGE]
    with tempfile.TemporaryDirectory(prefix="tensorbook-pot-") as scratch:
        pot_dir = args.pot_dir
        if pot_dir is None:
            # the catalogs record each message's place relative to the extracted files, so
            # a refresh extracts beside the checkout's build, where every refresh does
            where = LAYOUT.root / "build" if args.update else Path(scratch)
            pot_dir = where / "gettext"
            done = subprocess.run(
                gettext_command(pot_dir), capture_output=True, text=True, check=False
            )
            if done.returncode != 0:
                print(
                    f"extracting the messages failed:\n{done.stdout}{done.stderr}", file=sys.stderr
                )
                return 1
        if args.update:
            for language in translations:
                subprocess.run(
                    catalog_update_command(pot_dir, LAYOUT.locales, language),
                    check=True,
                    stdout=subprocess.DEVNULL,
                )
        problems = stale_messages(pot_dir, LAYOUT.locales, translations)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} messages do not follow the English ({', '.join(translations)})")
        return 1
    print(f"every message is translated and current ({', '.join(translations)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

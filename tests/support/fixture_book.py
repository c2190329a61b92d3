"""Fixture books: a page or two of Markdown and their catalogs, built by the book's driver.

The adapters' fixture tier (``tests/conf/test_*_fixture.py``): each test writes the
least book that exercises one adapter and builds it with
:func:`tensorbook_build.build.build_site`, exactly as ``nox -s docs`` builds the real one
(the checkout's ``conf/`` and ``src/``, every edition, the files around them), in
seconds. A page is a notebook that executes only where its text begins with
:data:`NOTEBOOK`; a plain page starts no kernel.
"""

from __future__ import annotations

import shutil
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tensorbook_build.build import build_site
from tensorbook_build.settings import LAYOUT, SOURCE_LANGUAGE, Layout
from tests.support.book import copy_of_the_book

TRANSLATION = "zh_CN"
"""The translated edition the fixture books are given catalogs for."""

NOTEBOOK = (
    "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n\n"
)
"""The front matter that makes a page a notebook the build executes, as the chapters'."""

__all__ = ["NOTEBOOK", "TRANSLATION", "Built", "FixtureBook", "catalog"]


def catalog(messages: Mapping[str, str], *, fuzzy: Collection[str] = ()) -> str:
    """A page's ``.po`` catalog: each English message with its translation, one a line.

    The messages named in ``fuzzy`` are marked so, as ``nox -s translate`` marks a
    message whose English changed.
    """
    header = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
    entries = [
        ("#, fuzzy\n" if english in fuzzy else "")
        + f'msgid "{_quoted(english)}"\nmsgstr "{_quoted(translated)}"\n'
        for english, translated in messages.items()
    ]
    return "\n".join([header, *entries])


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


@dataclass(frozen=True)
class Built:
    """How a fixture book's build ended: the failed step's status (else 0), and everything
    each step printed, in order."""

    returncode: int
    output: str


class FixtureBook:
    """A book of the given pages in ``root/tree``, built into ``root/tree/build``.

    ``pages`` maps each page's name (``index``, ``part/page``) to its Markdown (``index``
    lists the others in its toctree); ``catalogs`` maps a page's name to the text of its
    :data:`TRANSLATION` catalog (:func:`catalog`). The translated edition's words for the
    theme and the programs (its ``sphinx.po``) are the real book's.
    """

    def __init__(
        self, root: Path, pages: Mapping[str, str], catalogs: Mapping[str, str] = {}
    ) -> None:
        self.layout = Layout(copy_of_the_book(root, parts=("conf", "src")))
        files = {self.layout.docs / f"{name}.md": text for name, text in pages.items()}
        files |= {self.catalog(name): text for name, text in catalogs.items()}
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        shutil.copy(LAYOUT.catalogs(TRANSLATION) / "sphinx.po", self.catalog("sphinx"))

    @property
    def site(self) -> Path:
        """The built site: ``<language>/``, ``index.html``, ``404.html``, ``sitemap.xml``."""
        return self.layout.site

    def catalog(self, name: str) -> Path:
        """The :data:`TRANSLATION` catalog of the page ``name``."""
        return self.layout.catalogs(TRANSLATION) / f"{name}.po"

    def build(
        self,
        languages: Sequence[str] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        device: str = "cpu",
    ) -> Built:
        """Build every edition (or ``languages``) with the driver, as ``nox -s docs`` does.

        ``env`` is added to this process's environment for the build (the base URL, the
        commit...); ``device`` is the build's ``--device``.
        """
        steps = build_site(
            self.site, languages, device=device, layout=self.layout, env=env, capture=True
        )
        return Built(steps[-1].returncode, "".join(step.output for step in steps))

    def page(self, name: str, language: str = SOURCE_LANGUAGE) -> str:
        """A built page's HTML."""
        return (self.site / language / f"{name}.html").read_text(encoding="utf-8")

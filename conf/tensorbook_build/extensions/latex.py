"""Sphinx adapter for the PDFs (``nox -s pdf``): their chapters, words and punctuation.

Each page is a chapter (:class:`LiftChapters`); a translation's PDF says "Contents" and
"Chapter" in its language, which babel may not know (Chinese); outside the CJK editions,
quotation marks, dashes and ellipses stay in the Latin font, where xeCJK, loaded by
every edition, would set them full width.
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.locale import get_translation
from sphinx.transforms.post_transforms import SphinxPostTransform

from tensorbook_build.extensions import hooks
from tensorbook_build.settings import SOURCE_LANGUAGE, edition

LATIN_PUNCTUATION = r"""
\xeCJKDeclareCharClass{Default}{"2013, "2014, "2018, "2019, "201C, "201D, "2026}
"""


def _preamble(app: Sphinx, config: Config) -> None:
    added = ""
    if config.language != SOURCE_LANGUAGE:
        translate = get_translation("sphinx")
        added += (  # once the document begins, after babel has set its own
            f"\\AtBeginDocument{{\\renewcommand{{\\contentsname}}{{{translate('Contents')}}}"
            f"\\renewcommand{{\\chaptername}}{{{translate('Chapter')}}}}}\n"
        )
    if not edition(config.language).cjk:
        added += LATIN_PUNCTUATION
    preamble = config.latex_elements.get("preamble", "") + added
    config.latex_elements = {**config.latex_elements, "preamble": preamble}


class LiftChapters(SphinxPostTransform):
    """Each page a chapter of the PDF, not a section of the root page's "Chapters".

    The pages move out of the section that holds the root page's toctree, after it.
    """

    default_priority = 900
    builders = ("latex",)

    def run(self, **_kwargs: object) -> None:
        """Move every toctree of pages in a section of the root page up one level."""
        moved: list[nodes.Element] = []
        for page in list(self.document.findall(addnodes.start_of_file)):
            # the builder puts the pages in place of the toctree, in its wrapper
            unit = page.parent if isinstance(page.parent, nodes.compound) else page
            section = unit.parent
            if any(unit is done for done in moved) or not isinstance(section, nodes.section):
                continue
            container = section.parent
            if not isinstance(container, nodes.section) or isinstance(
                container.parent, nodes.section
            ):
                continue  # a chapter already, or a page's own toctree, kept where it is
            section.remove(unit)
            after = container.index(section) + 1
            while after < len(container) and any(container[after] is done for done in moved):
                after += 1  # after the pages moved before it, in their order
            container.insert(after, unit)
            moved.append(unit)


def setup(app: Sphinx) -> dict[str, object]:
    """Add to the preamble once the language is known; lift the chapters."""
    hooks.connect(app, __name__)
    app.add_post_transform(LiftChapters)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

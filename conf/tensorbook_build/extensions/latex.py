"""Sphinx adapter for the PDFs (``nox -s pdf``): each page is a chapter.

The preamble's words and punctuation for the edition's language are
:mod:`tensorbook_build.extensions.configuration`'s.
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform


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
    """Lift the chapters."""
    app.add_post_transform(LiftChapters)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

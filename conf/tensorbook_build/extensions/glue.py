"""Sphinx adapter: glued figures in translated prose need no executed outputs to extract.

A sentence that states a computed figure takes it from the executed page with
MyST-NB's ``{glue:text}`page.md::key:s``` (the ``page.md::`` form, because a
translated paragraph is parsed on its own, where the short form finds no notebook).
That form is resolved after reading, from the outputs the build executed. The
gettext build (``nox -s translate``) executes nothing and needs only the sentence's
source, so here each pending figure is replaced by its key, before MyST-NB would warn
that the outputs are missing. Every other builder resolves the figures as usual, and a
missing one still fails the build.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

from tensorbook_build.upstream import PendingGlueReference


class KeepGlueKeysForCatalogs(SphinxPostTransform):
    """In the gettext build, each pending glued figure becomes its key."""

    default_priority = 4  # before MyST-NB's ReplacePendingGlueReferences (5)
    builders = ("gettext",)

    def run(self, **_kwargs: object) -> None:
        """Replace every pending figure of the page by its key."""
        for node in list(self.document.findall(PendingGlueReference)):
            node.replace_self(nodes.Text(node["key"]))


def setup(app: Sphinx) -> dict[str, object]:
    """Register the post-transform."""
    app.add_post_transform(KeepGlueKeysForCatalogs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

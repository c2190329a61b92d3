"""The book's math as MathML, made while building, so no script is needed to read it.

Sphinx's default renderer, MathJax, is a large script fetched from a CDN at read
time; the book must load nothing from another host. Browsers render MathML Core
natively, so the TeX in the pages is converted once, with latex2mathml.
"""

from __future__ import annotations

import re

# latex2mathml lays out `split` as an aligned table but not the amsmath
# environments that mean the same thing in a display, so those are renamed.
_ALIGN_ENVIRONMENTS = re.compile(r"\\(begin|end)\{(?:aligned|align\*?|eqnarray\*?)\}")


def display_parts(tex: str) -> list[str]:
    r"""A display's equations, each as latex2mathml lays it out best.

    Examples
    --------
    >>> display_parts(r"a &= b \\ c &= d" "\n\n" r"\begin{aligned}x\end{aligned}")
    ['\\begin{split}a &= b \\\\ c &= d\\end{split}', '\\begin{split}x\\end{split}']
    """
    tex = _ALIGN_ENVIRONMENTS.sub(lambda m: rf"\{m.group(1)}{{split}}", tex)
    parts = []
    for part in (p for p in tex.split("\n\n") if p.strip()):
        lines = r"\\" in part and r"\begin{" not in part
        parts.append(r"\begin{split}" + part + r"\end{split}" if lines else part)
    return parts

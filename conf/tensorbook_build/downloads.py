"""Each chapter as a notebook (.ipynb) and a script (.py), made from its page.

The page's own MyST source is read with jupytext, so the downloads hold exactly the
code the page ran, after a first cell that installs the package the code imports.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jupytext
import nbformat

FOLDER = "downloads"  # in each edition's folder
TAUGHT_ERROR = "raises-exception"
COMPARE = "reader-compare"  # a cell whose figures a download sets beside the reader's
DEVICE_DEPENDENT = "device-dependent"  # tensorbook_build.ledger.TAG, without importing it
HIDDEN = "remove-cell"


def is_build_check(cell: Mapping[str, Any]) -> bool:
    """Whether a cell checks the page's claim on the build's machine.

    It is a hidden (``remove-cell``) or ``device-dependent`` code cell that asserts.

    Examples
    --------
    >>> is_build_check({"cell_type": "code", "source": "assert 1 < 2", "metadata": {}})
    False
    """
    tags = cell.get("metadata", {}).get("tags", [])
    if cell.get("cell_type") != "code" or not {HIDDEN, DEVICE_DEPENDENT} & set(tags):
        return False
    try:
        tree = ast.parse(str(cell.get("source", "")))
    except SyntaxError:
        return False
    return any(isinstance(node, ast.Assert) for node in ast.walk(tree))


def verdict_code(source: str, book: str, words: Mapping[str, str]) -> str:
    """A build check as a verdict for the reader's machine: it prints, and never raises.

    ``book`` is what the book's build printed just before the check (its figures);
    ``words`` are the edition's sentences: ``measured``, ``holds`` and ``fails``.
    """
    body = textwrap.indent(source, "    ")
    return f"""\
# In the book, this cell is the build's own check of what the page says. Here it
# is a verdict for this machine: it says whether the claim holds, and never stops.
print({words["measured"]!r})
print({book!r})
try:
{body}
except AssertionError as error:
    print({words["fails"]!r})
    print(str(error) or "(the check gave no figures)")
else:
    print({words["holds"]!r})"""


def install_code(wheel_url: str, version: str) -> str:
    """The first code cell of a download: the package that made the pages, from the site.

    It installs the wheel at ``wheel_url`` unless ``version`` is installed already, then
    stops, saying what to do, if another version is what Python imports.
    """
    return textwrap.dedent(
        f"""\
        # tensorbook {version}, the version that made the book's pages, from the book's site
        import importlib
        import importlib.metadata
        import subprocess
        import sys

        WANTED = "{version}"
        try:
            INSTALLED = importlib.metadata.version("tensorbook")
        except importlib.metadata.PackageNotFoundError:
            INSTALLED = None
        if INSTALLED != WANTED:
            subprocess.check_call([sys.executable, "-m", "pip", "install", "{wheel_url}"])
            importlib.invalidate_caches()

        import tensorbook

        if tensorbook.__version__ != WANTED:
            raise RuntimeError(
                f"this chapter was made with tensorbook {{WANTED}}, and Python imports "
                f"{{tensorbook.__version__}}: restart the kernel and run this cell again"
            )"""
    )


def comparison_cells(
    page: nbformat.NotebookNode, book: Sequence[str], words: tuple[str, str]
) -> list[nbformat.NotebookNode]:
    """The closing cells that set the book's figures beside the reader's own.

    ``book`` is what the book's build printed: its device line, then the output of each
    cell of ``page`` tagged :data:`COMPARE`. The cells print it, then run those cells
    again on the reader's machine; ``words`` are the two Markdown cells that introduce
    them, in the edition's language. No tagged cell, no closing cells.

    Examples
    --------
    >>> page = nbformat.v4.new_notebook(cells=[
    ...     nbformat.v4.new_code_cell("print(2 + 2)", metadata={"tags": [COMPARE]})])
    >>> cells = comparison_cells(page, ["Executed on CPU", "4"], ("A", "B"))
    >>> [c.source if c.cell_type == "markdown" else c.source.splitlines()[-1] for c in cells]
    ['A', 'print(BOOK.strip())', 'B', 'print(2 + 2)']
    """
    compared = [c for c in page.cells if COMPARE in c.metadata.get("tags", [])]
    if not compared:
        return []
    before, after = words
    printed = "\n".join(book)
    # as it reads, in a triple-quoted string, where it can be
    if '"""' in printed or "\\" in printed:
        printing = f"print({printed!r})"
    else:
        printing = f'BOOK = """\n{printed}\n"""\nprint(BOOK.strip())'
    return [
        nbformat.v4.new_markdown_cell(before),
        nbformat.v4.new_code_cell(printing),
        nbformat.v4.new_markdown_cell(after),
        *(nbformat.v4.new_code_cell(cell.source) for cell in compared),
    ]


def download_name(docname: str) -> str:
    """The file name of a page's downloads (``a/b``: ``tensorbook-a-b``), without its suffix.

    The hyphen keeps a script from being importable: ``cuda.py`` would shadow NVIDIA's
    ``cuda`` package.
    """
    return f"tensorbook-{docname.replace('/', '-')}"


# what comes before the words of a heading or a list item
_MARKER = re.compile(r"^(\s*(?:#{1,6}|[-*+]|\d+\.)\s+)(.*)$")


def translate_markdown(text: str, messages: dict[str, str]) -> str:
    r"""Replace each paragraph, heading, list item and table cell that the catalog has.

    The catalogs hold Sphinx's messages, one per block of prose with its lines joined
    by spaces, so a block is matched the same way; code fences and directives are left.

    >>> translate_markdown("## Tensors\n\nA tensor\nis an array.\n\n- one\n- two",
    ...                    {"Tensors": "张量", "A tensor is an array.": "张量是数组。", "one": "一"})
    '## 张量\n\n张量是数组。\n\n- 一\n- two'
    """
    blocks = []
    fenced = False
    for block in text.split("\n\n"):
        if fenced or block.lstrip().startswith(("```", ":::")):
            fences = sum(line.lstrip().startswith(("```", ":::")) for line in block.splitlines())
            fenced ^= fences % 2 == 1  # a fence that a blank line splits stays open
            blocks.append(block)
            continue
        joined = " ".join(line.strip() for line in block.splitlines())
        if joined in messages:
            blocks.append(messages[joined])
            continue
        lines: list[str] = []  # a list item's continuation lines joined to it
        for line in block.splitlines():
            if lines and line.startswith(" ") and not _MARKER.match(line):
                lines[-1] = f"{lines[-1]} {line.strip()}"
            else:
                lines.append(line)
        blocks.append("\n".join(_translate_line(line, messages) for line in lines))
    return "\n\n".join(blocks)


def _translate_line(line: str, messages: dict[str, str]) -> str:
    if line.startswith("|") and line.rstrip().endswith("|"):
        cells = line.strip().strip("|").split("|")
        return "| " + " | ".join(messages.get(c.strip(), c.strip()) for c in cells) + " |"
    marker = _MARKER.match(line)
    if marker and marker[2].strip() in messages:
        return marker[1] + messages[marker[2].strip()]
    return messages.get(line.strip(), line)


def notebook_for(
    source: Path,
    intro: str,
    messages: dict[str, str] | None = None,
    *,
    install: str = "",
    closing: Sequence[nbformat.NotebookNode] = (),
    checks: Mapping[str, str] | None = None,
    verdict_words: Mapping[str, str] | None = None,
) -> nbformat.NotebookNode:
    """The page as a notebook: ``intro``, ``install``, the page, then ``closing``.

    With ``messages`` (a catalog), its prose is in that language. Each build check
    becomes a verdict, with what the book printed before it from ``checks`` (keyed by
    the check's stripped source).
    """
    notebook: nbformat.NotebookNode = jupytext.read(source, fmt="md:myst")
    in_solution = False  # an exercise's solution stays checked, as the page checks it
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            if "{solution-start}" in cell.source or "{solution-end}" in cell.source:
                in_solution = cell.source.rfind("{solution-start}") > cell.source.rfind(
                    "{solution-end}"
                )
            if messages:
                cell.source = translate_markdown(cell.source, messages)
        elif verdict_words is not None and not in_solution and is_build_check(cell):
            book = (checks or {}).get(cell.source.strip(), "")
            cell.source = verdict_code(cell.source, book, verdict_words)
    for key in ("jupytext", "mystnb", "file_format"):
        notebook.metadata.pop(key, None)
    opening = [nbformat.v4.new_markdown_cell(intro)]
    if install:
        opening.append(nbformat.v4.new_code_cell(install))
    notebook.cells[:0] = opening
    notebook.cells.extend(closing)
    # the page's title is in the first cell now; leave it out of the page's own text
    for cell in notebook.cells[len(opening) :]:
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith("# "):
            lines = cell.source.lstrip().split("\n", 1)
            cell.source = lines[1].lstrip("\n") if len(lines) > 1 else ""
            break
    notebook.cells = [c for c in notebook.cells if c.source.strip()]
    notebook.nbformat, notebook.nbformat_minor = 4, 5
    for number, cell in enumerate(notebook.cells):
        cell.id = f"cell-{number}"  # numbered, so that two builds write the same file
    nbformat.validate(notebook)
    return notebook


def script_for(notebook: nbformat.NotebookNode) -> str:
    """The notebook as a py:percent script; a cell tagged ``raises-exception`` prints its error."""
    copy = nbformat.from_dict(notebook)
    for cell in copy.cells:
        if cell.cell_type == "code" and TAUGHT_ERROR in cell.metadata.get("tags", []):
            cell.source = (
                "# The page shows this error on purpose; here it is printed, and the script "
                "goes on.\n"
                f"try:\n{textwrap.indent(cell.source, '    ')}\n"
                "except Exception as error:\n"
                '    print(f"{type(error).__name__}: {error}")'
            )
    script: str = jupytext.writes(copy, fmt="py:percent")  # jupytext is unannotated
    return script

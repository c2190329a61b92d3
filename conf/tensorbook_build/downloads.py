"""Each chapter as a notebook (.ipynb) and a script (.py), made from its page.

The page is read as the build reads it to execute it (:mod:`tensorbook_build.execute`), so
the downloads hold exactly the code the page ran, after a first cell that installs the
package the code imports.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jupytext
import nbformat

from tensorbook import receipt
from tensorbook.recording import BOOK, PAGE_CELLS
from tensorbook_build.execute import HIDDEN, Cell, Page

FOLDER = "downloads"  # in each edition's folder
TAUGHT_ERROR = "raises-exception"
COMPARE = "reader-compare"  # a cell whose figures a download sets beside the reader's
DEVICE_DEPENDENT = receipt.TAG
PAGE_ONLY = "page-only"
"""A Markdown cell's tag (``+++ {"tags": ["page-only"]}``): prose about the page itself (its
download links), which the downloads leave out."""
SCRIPT_TEXT = "tensorbook_script_text"
"""A Markdown cell's metadata: its text in the script, where it differs from the notebook's
(a command typed in a terminal, not in a notebook's cell)."""


def is_build_check(cell: Cell) -> bool:
    """Whether a cell checks the page's claim on the build's machine.

    It is a hidden (``remove-cell``) or ``device-dependent`` code cell that asserts.

    Examples
    --------
    >>> is_build_check(Cell(0, "code", "assert 1 < 2", {}, 1))
    False
    """
    if cell.kind != "code" or not {HIDDEN, DEVICE_DEPENDENT} & set(cell.tags):
        return False
    try:
        tree = ast.parse(cell.source)
    except SyntaxError:
        return False
    return any(isinstance(node, ast.Assert) for node in ast.walk(tree))


def verdict_code(source: str, book: str, words: Mapping[str, str]) -> str:
    r"""A build check as a verdict for the reader's machine (:func:`tensorbook.verdict.verdict`).

    ``book`` is what the book's build printed just before the check (its figures);
    ``words`` are the edition's sentences: ``measured``, ``holds`` and ``fails``. A
    value the cell ends with (a picture) is still the cell's value, shown after the
    verdict, as the page shows it.

    >>> print(verdict_code("assert 1 < 2\nf(1)", "", {"measured": "m", "holds": "h", "fails": "f"}))
    # In the book, ...
    from tensorbook.verdict import verdict
    <BLANKLINE>
    shown_value = None
    with verdict(
        "",
        measured="m",
        holds="h",
        fails="f",
    ):
        assert 1 < 2
        shown_value = f(1)
    shown_value
    """
    kept = shown(source, "shown_value = ", "")
    shown_value = ("shown_value = None\n", "\nshown_value") if kept != source else ("", "")
    told = "".join(
        f"    {word}={_literal(words[word])},\n" for word in ("measured", "holds", "fails")
    )
    return f"""\
# In the book, this cell is the build's own check of what the page says. Here it
# is a verdict for this machine: it says whether the claim holds, and never stops.
from tensorbook.verdict import verdict

{shown_value[0]}with verdict(
    {_literal(book)},
{told}):
{textwrap.indent(kept, "    ")}{shown_value[1]}"""


def _literal(text: str) -> str:
    """``text`` as a Python string in double quotes, as ruff formats code (JSON's is one)."""
    return json.dumps(text, ensure_ascii=False)


INSTALL_CELL = Path(__file__).with_name("reader") / "install_cell.py"
"""A download's first code cell: it installs torch and tensorbook where they are missing."""


def install_code(values: Mapping[str, str], cell: Path = INSTALL_CELL) -> str:
    """The install cell, each top-level ``NAME = ...`` that ``values`` names set to its value.

    The build gives it ``TENSORBOOK_VERSION`` and ``TENSORBOOK_WHEEL`` (the wheel's
    address on the book's site).

    >>> code = install_code({"TENSORBOOK_VERSION": "9.9.9"})
    >>> [line for line in code.splitlines() if line.startswith("TENSORBOOK_VERSION")]
    ['TENSORBOOK_VERSION = "9.9.9"']
    >>> install_code({"WANTED": "9.9.9"})
    Traceback (most recent call last):
    ValueError: .../install_cell.py assigns no WANTED at its top level: ...
    """
    source = cell.read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    left = dict(values)
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        name, value = node.targets[0], node.value
        one_line = node.end_lineno == node.lineno and value.end_col_offset is not None
        if not isinstance(name, ast.Name) or name.id not in left or not one_line:
            continue
        line = lines[node.lineno - 1]
        new = _literal(left.pop(name.id))
        lines[node.lineno - 1] = line[: value.col_offset] + new + line[value.end_col_offset :]
    if left:
        msg = f"{cell} assigns no {', '.join(left)} at its top level: assign each on one line"
        raise ValueError(msg)
    return "".join(lines).rstrip("\n")


def comparison_cells(
    page: Sequence[Cell], book: Sequence[str], words: tuple[str, str]
) -> list[nbformat.NotebookNode]:
    """The closing cells that set the book's figures beside the reader's own.

    ``book`` is what the book's build printed: its device line, then the output of each
    cell of ``page`` tagged :data:`COMPARE`. The cells print it, then run those cells
    again on the reader's machine; ``words`` are the two Markdown cells that introduce
    them, in the edition's language. No tagged cell, no closing cells.

    Examples
    --------
    >>> page = [Cell(0, "code", "print(2 + 2)", {"tags": [COMPARE]}, 1)]
    >>> cells = comparison_cells(page, ["Executed on CPU", "4"], ("A", "B"))
    >>> [c.source if c.cell_type == "markdown" else c.source.splitlines()[-1] for c in cells]
    ['A', 'print(BOOK.strip())', 'B', 'print(2 + 2)']
    """
    compared = [c for c in page if COMPARE in c.tags]
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


# a fold's opening marker ({solution-start}, {deeper-start}), whose one line is its label
_FOLD_LABEL = re.compile(r"```\{[a-z]+-start\}\n(?P<label>[^\n]+)\n```")


def translate_markdown(text: str, messages: dict[str, str]) -> str:
    r"""Replace each paragraph, heading, list item and table cell that the catalog has.

    The catalogs hold Sphinx's messages, one per block of prose with its lines joined
    by spaces, so a block is matched the same way; code fences and directives are left.

    >>> translate_markdown("## Tensors\n\nA tensor\nis an array.\n\n- one\n- two",
    ...                    {"Tensors": "张量", "A tensor is an array.": "张量是数组。", "one": "一"})
    '## 张量\n\n张量是数组。\n\n- 一\n- two'
    >>> translate_markdown("```{deeper-start}\nDeeper: more\n```", {"Deeper: more": "深入：更多"})
    '```{deeper-start}\n深入：更多\n```'
    """
    blocks = []
    fenced = False
    for block in text.split("\n\n"):
        label = _FOLD_LABEL.fullmatch(block.strip())
        if not fenced and label and label["label"] in messages:  # a fold's label is prose
            blocks.append(block.replace(label["label"], messages[label["label"]]))
            continue
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


_DIRECTIVE = re.compile(
    r"^```\{(?P<name>[a-z-]+)\}(?P<argument>[^\n]*)\n(?P<body>.*?)^```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_ROLE = re.compile(r"\{(?P<role>glue:text|glue|recorded|doc)\}`(?P<target>[^`]*)`")


def plain_markdown(
    text: str,
    values: Mapping[str, str],
    titles: Mapping[str, str],
    source: Callable[[str, str], str | None],
) -> str:
    r"""A page's Markdown as a notebook shows it: the book's directives and roles made plain.

    A ``{pysource}`` block becomes the Python it shows (``source(path, pyobject)``); a
    fold's start becomes its label in bold and its end goes; a glued figure
    (``{glue:text}``) and a recorded one (``{recorded}``) become their value from
    ``values`` (the latter keyed ``recorded:<name>``), and ``{doc}`` the page's title.

    >>> plain_markdown("On {glue:text}`a.md::n:s` runs\n\n```{deeper-start}\nMore\n```\n",
    ...                {"n": "3"}, {}, lambda path, name: None)
    'On 3 runs\n\n**More**\n'
    >>> plain_markdown("```{pysource} ../src/m.py\n:pyobject: f\n```", {}, {},
    ...                lambda path, name: f"def {name}(): ...")
    '```python\ndef f(): ...\n```'
    """

    def directive(match: re.Match[str]) -> str:
        name, argument, body = match["name"], match["argument"].strip(), match["body"]
        if name == "pysource":
            option = re.search(r"^:pyobject:\s*(\S+)", body, re.MULTILINE)
            code = source(argument, option[1]) if option else None
            return f"```python\n{code}\n```" if code is not None else match[0]
        if name.endswith("-start"):
            return f"**{body.strip()}**"
        if name.endswith("-end"):
            return ""
        return match[0]

    def role(match: re.Match[str]) -> str:
        kind, target = match["role"], match["target"]
        if kind == "doc":
            return titles.get(target, target)
        key = f"recorded:{target}" if kind == "recorded" else target.split("::")[-1].split(":")[0]
        return values.get(key, match[0])

    return _ROLE.sub(role, _DIRECTIVE.sub(directive, text))


def _translate_line(line: str, messages: dict[str, str]) -> str:
    if line.startswith("|") and line.rstrip().endswith("|"):
        cells = line.strip().strip("|").split("|")
        return "| " + " | ".join(messages.get(c.strip(), c.strip()) for c in cells) + " |"
    marker = _MARKER.match(line)
    if marker and marker[2].strip() in messages:
        return marker[1] + messages[marker[2].strip()]
    return messages.get(line.strip(), line)


def notebook_for(
    page: Page,
    intro: str,
    messages: dict[str, str] | None = None,
    *,
    install: str = "",
    closing: Sequence[nbformat.NotebookNode] = (),
    checks: Mapping[str, str] | None = None,
    verdict_words: Mapping[str, str] | None = None,
    plain: Callable[[str], str] | None = None,
) -> nbformat.NotebookNode:
    """The page as a notebook: ``intro``, ``install``, the page, then ``closing``.

    A Markdown cell tagged :data:`PAGE_ONLY` is left out.
    With ``messages`` (a catalog), its prose is in that language; ``plain`` makes each
    Markdown cell what a notebook can show (:func:`plain_markdown`). Each build check
    becomes a verdict, with what the book printed before it from ``checks`` (keyed by
    the check's stripped source).
    """
    cells = [nbformat.v4.new_markdown_cell(intro)]
    if install:
        cells.append(nbformat.v4.new_code_cell(install))
    origins: dict[int, dict[str, Any]] = {}  # by position in cells: the page's code cell it is
    in_solution = False  # an exercise's solution stays checked, as the page checks it
    titled = False  # the page's title is in the intro, the first cell: not in the page's text
    for cell in page.cells:
        text = cell.source
        if cell.kind == "markdown":
            if PAGE_ONLY in cell.tags:
                continue
            if "{solution-start}" in text or "{solution-end}" in text:
                in_solution = text.rfind("{solution-start}") > text.rfind("{solution-end}")
            if messages:
                text = translate_markdown(text, messages)
            if plain is not None:
                text = plain(text)
            if not titled and text.lstrip().startswith("# "):
                text, titled = text.lstrip().partition("\n")[2].lstrip("\n"), True
        elif verdict_words is not None and not in_solution and is_build_check(cell):
            text = verdict_code(text, (checks or {}).get(text.strip(), ""), verdict_words)
        if cell.kind == "code":
            origins[len(cells)] = {
                "index": cell.index,
                **({"code": cell.source} if text != cell.source else {}),
            }
        cells.append(getattr(nbformat.v4, f"new_{cell.kind}_cell")(text, metadata=cell.metadata))
    # the build's settings, and where the prose's recorded figures come from (ledger.FIGURES)
    build_only = ("mystnb", "file_format", "recorded_figures")
    metadata = {k: v for k, v in page.metadata.items() if k not in build_only}
    kept = [(n, c) for n, c in enumerate([*cells, *closing]) if c.source.strip()]
    notebook: nbformat.NotebookNode = nbformat.v4.new_notebook(
        cells=[c for _, c in kept], metadata=metadata
    )
    page_cells = []  # which of the page's code cells each is (PAGE_CELLS), for a receipt
    for number, cell in enumerate(notebook.cells):
        cell.id = f"cell-{number}"  # numbered, so that two builds write the same file
        if (position := kept[number][0]) in origins:
            page_cells.append({"id": cell.id, **origins[position]})
    notebook.metadata[PAGE_CELLS] = page_cells
    nbformat.validate(notebook)
    return notebook


SHOW = "show"
"""What a script calls with a cell's last expression, which a notebook would display."""
SHOW_CODE = f"""\
# A notebook displays the value of a cell's last expression; this script hands it to
# {SHOW}() (and display() is {SHOW}() too), which saves a picture or a figure as a file
# beside the script, printing its name, and prints any other value.
from tensorbook.script import ScriptDisplay

{SHOW} = display = ScriptDisplay(__file__)"""


def shown(source: str, before: str = f"{SHOW}(", after: str = ")") -> str:
    r"""A cell's code with its last expression handed to :data:`SHOW`, as a script runs it.

    A notebook displays that value; a script would drop it. A call of ``print`` or of
    ``display``, and a line that ends in ``;`` (which hides it in a notebook), are left.
    ``before`` and ``after`` are what the value is put between.

    >>> shown("x = 1\nx + 1")
    'x = 1\nshow(x + 1)'
    >>> shown("print(x)"), shown("x;")
    ('print(x)', 'x;')
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    if not tree.body or not isinstance(last := tree.body[-1], ast.Expr):
        return source
    called = last.value.func if isinstance(last.value, ast.Call) else None
    if isinstance(called, ast.Name) and called.id in {"print", "display", SHOW}:
        return source
    if source.rstrip().endswith(";"):
        return source
    lines = source.splitlines(keepends=True)
    start = sum(map(len, lines[: last.lineno - 1])) + last.col_offset
    end = sum(map(len, lines[: (last.end_lineno or last.lineno) - 1])) + (last.end_col_offset or 0)
    return f"{source[:start]}{before}{source[start:end]}{after}{source[end:]}"


def script_for(notebook: nbformat.NotebookNode) -> str:
    """The notebook as a py:percent script.

    A cell tagged ``raises-exception`` prints its error; a cell's last expression is
    handed to :data:`SHOW` (:func:`shown`), defined in a cell after the first code cell
    (the one that installs the package). A cell with a :data:`SCRIPT_TEXT` says that.
    """
    copy = nbformat.from_dict(notebook)
    for key in (PAGE_CELLS, BOOK):  # what a receipt reads: not the script's
        copy.metadata.pop(key, None)
    for cell in copy.cells:
        if SCRIPT_TEXT in cell.metadata:
            cell.source = cell.metadata.pop(SCRIPT_TEXT)
    for cell in (c for c in copy.cells if c.cell_type == "code"):
        cell.source = shown(cell.source)
        if TAUGHT_ERROR in cell.metadata.get("tags", []):
            cell.source = (
                "# The page shows this error on purpose; here it is printed, and the script "
                "goes on.\n"
                f"try:\n{textwrap.indent(cell.source, '    ')}\n"
                "except Exception as error:\n"
                '    print(f"{type(error).__name__}: {error}")'
            )
    first = next((i for i, c in enumerate(copy.cells) if c.cell_type == "code"), -1)
    copy.cells.insert(first + 1, nbformat.v4.new_code_cell(SHOW_CODE))
    script: str = jupytext.writes(copy, fmt="py:percent")  # jupytext is unannotated
    return script

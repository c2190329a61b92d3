"""Each chapter as a notebook (.ipynb) and a script (.py), made from its page at build time.

The page's own MyST source is read with jupytext, so the downloads hold exactly the
code the page ran. A first cell says how to install the package the code imports. In
the script, a cell that fails on purpose (tagged ``raises-exception``) prints its error
instead of stopping the script, since the page teaches that error and goes on.

The files go to ``<edition>/downloads/tensorbook-<page>.ipynb`` and ``.py``: the hyphen
keeps a script from being importable, so that ``cuda.py`` beside another program can
never shadow NVIDIA's ``cuda`` package (it did, in this suite). The article header
links to them (``conf/_templates/downloads.html``). ``tests/test_downloads.py`` runs every
notebook in a fresh kernel of an environment that holds only the package.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import jupytext
import nbformat
from babel.messages.pofile import read_po
from sphinx.application import Sphinx

FOLDER = "downloads"


def download_name(docname: str) -> str:
    """``cuda`` -> ``tensorbook-cuda``: the file name, without its suffix."""
    return f"tensorbook-{docname.replace('/', '-')}"


INSTALL = {
    "en": (
        "# {title}\n\n"
        "This notebook is a chapter of *tensorbook*. Its code imports the `tensorbook` "
        "package, which brings PyTorch (2.11 or newer), NumPy and Matplotlib. In a copy "
        "of the book's repository, install it into the environment that runs this "
        "notebook:\n\n"
        "```bash\npip install .\n```\n\n"
        "A machine with a CUDA build of PyTorch keeps it; the chapter runs on the GPU "
        "when there is one, and on the CPU otherwise."
    ),
    "zh_CN": (
        "# {title}\n\n"
        "这个笔记本是 *tensorbook* 的一章。它的代码导入 `tensorbook` 包，这个包会带来 "
        "PyTorch（2.11 或更新版本）、NumPy 和 Matplotlib。在本书仓库的副本中，把它安装到"
        "运行这个笔记本的环境里：\n\n"
        "```bash\npip install .\n```\n\n"
        "已经装有 CUDA 版 PyTorch 的机器会保留它；有 GPU 时本章在 GPU 上运行，否则在 CPU 上运行。"
    ),
}
LABELS = {
    "en": {"download": "Download", "notebook": "Notebook (.ipynb)", "script": "Script (.py)"},
    "zh_CN": {"download": "下载", "notebook": "笔记本 (.ipynb)", "script": "脚本 (.py)"},
}
TAUGHT_ERROR = "raises-exception"


_LIST_ITEM = re.compile(r"^(\s*(?:[-*+]|\d+\.)\s+)(.*)$")
_HEADING = re.compile(r"^(#{1,6}\s+)(.*)$")


def catalog(path: Path) -> dict[str, str]:
    """A page's translations, as Sphinx uses them: no fuzzy or empty ones."""
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        messages = read_po(handle)
    return {
        m.id: m.string
        for m in messages
        if m.id and isinstance(m.id, str) and m.string and not m.fuzzy
    }


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
        blocks.append("\n".join(_translate_line(line, messages) for line in _items(block)))
    return "\n\n".join(blocks)


def _items(block: str) -> list[str]:
    """A block's lines, with a list item's continuation lines joined to it."""
    lines: list[str] = []
    for line in block.splitlines():
        if (
            lines
            and line.startswith(" ")
            and not _LIST_ITEM.match(line)
            and not line.startswith("|")
        ):
            lines[-1] = f"{lines[-1]} {line.strip()}"
        else:
            lines.append(line)
    return lines


def _translate_line(line: str, messages: dict[str, str]) -> str:
    for pattern in (_HEADING, _LIST_ITEM):
        match = pattern.match(line)
        if match and match.group(2).strip() in messages:
            return match.group(1) + messages[match.group(2).strip()]
    if line.startswith("|") and line.rstrip().endswith("|"):
        cells = line.strip().strip("|").split("|")
        return "| " + " | ".join(messages.get(c.strip(), c.strip()) for c in cells) + " |"
    return messages.get(line.strip(), line)


def notebook_for(
    source: Path, title: str, language: str, messages: dict[str, str] | None = None
) -> nbformat.NotebookNode:
    """The page as a notebook, opening with how to install what it imports; with
    ``messages`` (a catalog), its prose in the catalog's language."""
    notebook = jupytext.read(source, fmt="md:myst")
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and messages:
            cell.source = translate_markdown(cell.source, messages)
    notebook.metadata.pop("jupytext", None)
    notebook.metadata.pop("mystnb", None)
    notebook.metadata.pop("file_format", None)
    install = nbformat.v4.new_markdown_cell(INSTALL[language].format(title=title))
    notebook.cells.insert(0, install)
    # the page's title is in the first cell now; leave it out of the page's own text
    for cell in notebook.cells[1:]:
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
    """The notebook as a py:percent script that runs from top to bottom."""
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
    return jupytext.writes(copy, fmt="py:percent")


def is_chapter(app: Sphinx, docname: str) -> bool:
    """Whether a page runs code: it has a kernelspec in its front matter."""
    return "kernelspec" in app.env.metadata.get(docname, {})


def chapters(app: Sphinx) -> list[str]:
    """The pages that run code, sorted."""
    return sorted(docname for docname in app.env.found_docs if is_chapter(app, docname))


def _write_downloads(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    folder = Path(app.outdir, FOLDER)
    if folder.exists():
        shutil.rmtree(folder)  # a page that is gone leaves no download behind
    folder.mkdir()
    language = app.config.language
    for docname in chapters(app):
        title = app.env.titles[docname].astext()
        messages = None
        if language != app.config.tensorbook_source_language:
            messages = catalog(
                Path(app.srcdir, "locales", language, "LC_MESSAGES", f"{docname}.po")
            )
        notebook = notebook_for(Path(app.env.doc2path(docname)), title, language, messages)
        name = download_name(docname)
        nbformat.write(notebook, folder / f"{name}.ipynb")
        (folder / f"{name}.py").write_text(script_for(notebook), encoding="utf-8")


def _add_links(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if not is_chapter(app, pagename):
        context["tensorbook_downloads"] = None
        return
    prefix = "../" * pagename.count("/")
    context["tensorbook_downloads"] = {
        "labels": LABELS.get(app.config.language, LABELS["en"]),
        "notebook": f"{prefix}{FOLDER}/{download_name(pagename)}.ipynb",
        "script": f"{prefix}{FOLDER}/{download_name(pagename)}.py",
    }


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("html-page-context", _add_links)
    # before the link check (950), which then finds the files the pages link to
    app.connect("build-finished", _write_downloads, priority=800)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

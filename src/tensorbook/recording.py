r"""A chapter's executed cells as the book's device ledger records them.

What :mod:`tensorbook.receipt` writes on a reader's machine: per code cell, a hash of
its code, the hashes of the package's modules it and the cells before it import, and
what it printed. The book's build computes the same from its own runs, so that the two
can be lined up cell by cell; a test checks that both compute the same values.

Examples
--------
>>> source_hash("x = 1\n") == source_hash("\nx = 1") != source_hash("x = 2")
True
>>> shown_outputs([{"output_type": "stream", "text": "a\n"},
...                {"output_type": "stream", "text": "b\n"}])
[{'text': 'a\nb'}]
"""

from __future__ import annotations

import ast
import base64
import contextlib
import functools
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tensorbook.wording import DEVICE_LINE, parse

GLUED = "application/papermill.record/"  # the MIME prefix of a glued value, not shown
PAGE_CELLS = "tensorbook_page_cells"
"""A download's notebook metadata: each code cell that is one of the page's, by its id
(``{"id", "index"}``: its index in the page, markdown counted), with ``"code"``, the
page's, where the download changed the code (a check made a verdict)."""
BOOK = "tensorbook_book"
"""A download's notebook metadata: ``page``, ``commit`` (the book's, which the site was
built from), ``version`` (of this package) and ``figures``: each of the prose's
recorded figures, ``{"cell", "pattern", "label", "at", "book", "book_at", "source"}``
(the page's cell that prints it, where in its text, what it is in a reader's words with
``{}`` for the figure, a pattern of where it was measured or ``""``, the book's value,
where the book measured it, and the machine, torch and date the book's value is from),
``repository``, where a receipt is sent, or ``""``, and ``built_on_gpu``: whether the
site's build ran on a GPU (else the other figures the prose quotes are from its CPU)."""


def source_hash(code: str) -> str:
    """A short hash of a cell's code, blind to surrounding blank lines."""
    return hashlib.sha256(code.strip().encode()).hexdigest()[:16]


def shown_outputs(outputs: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """A cell's outputs as a page shows them: text, an SVG picture, or a PNG (base64).

    Consecutive streams are joined: how printed text is chunked depends on when the
    kernel flushed. A path's folders in the text are written ``…`` (:func:`private_paths`).
    """
    shown: list[dict[str, str]] = []
    streaming = False  # whether shown[-1] is a stream's text, which a next stream goes on
    for output in outputs:
        kind, data = output.get("output_type"), output.get("data", {})
        if kind == "stream" and streaming:
            shown[-1]["text"] += output["text"]
        elif kind == "stream":
            shown.append({"text": output["text"]})
        elif kind == "error":
            shown.append({"text": f"{output['ename']}: {output['evalue']}"})
        elif any(mime.startswith(GLUED) for mime in data):
            continue
        elif "image/svg+xml" in data:
            shown.append({"svg": data["image/svg+xml"]})
        elif "image/png" in data:
            shown.append({"png": data["image/png"]})
        elif "text/plain" in data:
            shown.append({"text": data["text/plain"]})
        else:
            continue
        streaming = kind == "stream"
    return [{"text": private_paths(item["text"]).rstrip("\n")} if "text" in item else item
            for item in shown]  # fmt: skip


_POSIX_FOLDER = r"[^/\s'\"`()<>|:;,]+(?: [^/\s'\"`()<>|:;,]+)*/"
_WINDOWS_FOLDER = r"[^\\\s'\"`()<>|:;,]+(?: [^\\\s'\"`()<>|:;,]+)*\\"
PATH = re.compile(rf"(?<![\w.~:/\\-])(?:/(?:{_POSIX_FOLDER})+|[A-Za-z]:\\(?:{_WINDOWS_FOLDER})+)")
"""The folders of an absolute path (POSIX or Windows), up to its last part: not a URL's,
whose ``/`` follows ``:`` or ``/``, nor a ratio's (``km/s``), whose ``/`` follows a letter.
A folder's name may hold single spaces (``C:\\Users\\Ada Lovelace\\``): a word that a space
and then a ``/`` follow is taken for one, so prose such as ``/a and b/c`` loses ``and b`` too."""


def python_folders() -> dict[str, str]:
    """Each folder of this Python's installation that a file in a message may be under.

    By the folder, the name a path inside it keeps (``site-packages``, ``python3.12``):
    its part inside the installation names no one.
    """
    import sysconfig

    found = {}
    for key in ("purelib", "platlib", "stdlib", "platstdlib"):
        folder = sysconfig.get_paths().get(key)
        if folder:
            found[str(Path(folder))] = Path(folder).name
    return found


def private_paths(text: str, installed: Mapping[str, str] | None = None) -> str:
    r"""``text`` with the folders of each absolute path written ``…``.

    An error's message or a warning often names a file (``/home/ada/.venv/...``,
    ``/scratch/ada/x.py``), and a recording is published: of a path, only the file's name
    is kept, and a file of the Python installation (``installed``: by default
    :func:`python_folders`) keeps its part inside it.

    >>> private_paths("No such file: '/scratch/ada/data.csv'; C:\\Users\\ada\\x.py; "
    ...               "/v/lib/site-packages/torch/nn.py:3; https://pytorch.org/docs/x",
    ...               {"/v/lib/site-packages": "site-packages"})
    "No such file: '…/data.csv'; …\\x.py; …/site-packages/torch/nn.py:3; https://pytorch.org/docs/x"
    """
    folders = python_folders() if installed is None else installed
    for folder in sorted(folders, key=len, reverse=True):  # the deepest first
        # "\0" and "\1" stand for "…/" and "…\\": PATH passes by a name that follows them
        kept = ("\1" if "\\" in folder else "\0") + folders[folder]
        text = re.sub(rf"(?<![\w.~:/\\-]){re.escape(folder)}(?=[/\\])", kept, text)
    text = PATH.sub(lambda found: "…" + found[0][-1], text)
    return text.replace("\0", "…/").replace("\1", "…\\")


def output_digest(shown: Sequence[Mapping[str, str]]) -> str:
    """A digest of a cell's :func:`shown_outputs`, but for the device line pages print first."""
    digest = hashlib.sha256()
    for item in shown:
        if "text" in item:
            kept = [x for x in item["text"].split("\n") if parse(DEVICE_LINE, x) is None]
            digest.update(("text\0" + "\n".join(kept) + "\0").encode())
        elif "svg" in item:
            digest.update(b"svg\0" + item["svg"].encode() + b"\0")
        else:
            digest.update(b"image\0" + base64.b64decode(item["png"]) + b"\0")
    return digest.hexdigest()[:16]


def package_files(package: Path) -> dict[str, Path]:
    """Each module of the package in folder ``package`` (``.../tensorbook``) by dotted name."""
    return {
        ".".join(path.relative_to(package.parent).with_suffix("").parts).removesuffix(
            ".__init__"
        ): path
        for path in sorted(package.rglob("*.py"))
    }


def _imports(tree: ast.AST, known: Iterable[str]) -> set[str]:
    """The modules of ``known`` that the syntax tree imports."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names & set(known)


def _parse(code: str) -> ast.AST | None:
    # IPython magics and shell escapes are not Python; they import nothing of ours
    kept = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
    for text in (code, "\n".join(kept)):
        with contextlib.suppress(SyntaxError):
            return ast.parse(text)
    return None


def module_hashes(codes: Sequence[str], package: Path) -> list[dict[str, str]]:
    """For each cell of ``codes``: the hash of every module it or a cell before it imports.

    Imports are followed through the package's own modules (and a module's parent
    packages, which importing it runs); a hash is of the file's bytes, read once.
    """
    files, graph, hashes = _package(package)
    found: set[str] = set()
    result = []
    for code in codes:
        cell = _parse(code)
        pending = _imports(cell, files) - found if cell is not None else set()
        while pending:
            name = pending.pop()
            found.add(name)
            pending |= graph[name] - found
        result.append({name: hashes[name] for name in sorted(found)})
    return result


@functools.cache  # a build keys every page on one package: each file is read once
def _package(package: Path) -> tuple[dict[str, Path], dict[str, set[str]], dict[str, str]]:
    """The package's files, what each module imports of it, and each file's hash."""
    files = package_files(package)
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parts = name.split(".")
        parents = {".".join(parts[:i]) for i in range(1, len(parts))}
        graph[name] = (_imports(tree, files) | parents) - {name}
    hashes = {
        name: hashlib.sha256(path.read_bytes()).hexdigest()[:16] for name, path in files.items()
    }
    return files, graph, hashes

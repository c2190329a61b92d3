"""The adapters' order: the table in extensions/hooks.py is the order Sphinx calls them."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from operator import attrgetter

import pytest
from sphinx.application import Sphinx
from sphinx.events import core_events
from tests.support.sphinx_app import configured_sphinx

from tensorbook_build.extensions.hooks import HOOKS
from tensorbook_build.settings import LAYOUT
from tensorbook_build.spec import resolve_spec

ADAPTERS = LAYOUT.conf / "tensorbook_build" / "extensions"


@pytest.fixture(scope="module")
def app(tmp_path_factory) -> Iterator[Sphinx]:
    """Sphinx with the book's configuration, set up and not built: its handlers connected."""
    root = tmp_path_factory.mktemp("hooks")
    spec = resolve_spec("cpu", given_by="test", work=root).to_json()
    with configured_sphinx(root, tensorbook_spec=spec) as configured:
        yield configured


def _connected(app: Sphinx, event: str) -> list[tuple[str, int]]:
    """The adapters' handlers of ``event``, as ``adapter.function``, in the order called."""
    called = sorted(app.events.listeners[event], key=attrgetter("priority"))
    return [
        (f"{listener.handler.__module__.rsplit('.', 1)[-1]}.{listener.handler.__name__}",
         listener.priority)
        for listener in called
        if listener.handler.__module__.startswith("tensorbook_build.extensions.")
    ]  # fmt: skip


def test_the_table_lists_every_handler_in_the_order_sphinx_calls_them(app):
    events = list(dict.fromkeys(hook.event for hook in HOOKS))
    for event in events:
        listed = [(h.handler, h.priority) for h in HOOKS if h.event == event]
        assert _connected(app, event) == listed, event
    unlisted = [e for e in app.events.listeners if e not in events and _connected(app, e)]
    assert not unlisted, f"handlers connected outside extensions/hooks.py's table: {unlisted}"


def test_the_table_is_in_the_order_of_the_events():
    order = [*core_events]
    order.insert(order.index("doctree-resolved") + 1, "html-page-context")
    events = list(dict.fromkeys(hook.event for hook in HOOKS))
    assert events == sorted(events, key=order.index)
    assert all(hook.why for hook in HOOKS)


def test_no_adapter_connects_a_handler_itself():
    for path in ADAPTERS.glob("*.py"):
        if path.name == "hooks.py":
            continue
        calls = [
            node.lineno
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Attribute) and node.attr == "connect"
            and not (isinstance(node.value, ast.Name) and node.value.id == "hooks")
        ]  # fmt: skip
        assert not calls, f"{path.name}:{calls} connects a handler; list it in hooks.HOOKS"

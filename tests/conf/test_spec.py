"""The build spec: resolved once by the driver, read as given by each edition's Sphinx."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch
from tests.support.sphinx_app import configured_sphinx

from tensorbook.device import DeviceUnavailableError
from tensorbook_build.spec import BuildSpec, resolve_spec


def test_sphinx_takes_the_driver_s_spec_as_given(tmp_path):
    # a kind no CPU would resolve to: had Sphinx resolved the device again, it would say cpu
    given = dataclasses.replace(resolve_spec("cpu", given_by="test"), kind="nvidia-h200")
    with configured_sphinx(tmp_path, tensorbook_spec=given.to_json()) as app:
        assert BuildSpec.from_json(app.config.tensorbook_spec) == given


def test_a_plain_sphinx_build_is_told_to_let_the_driver_execute_the_pages_first(tmp_path):
    with pytest.raises(SystemExit), configured_sphinx(tmp_path) as _:
        pass


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{", "is not JSON"),
        ('{"device": "cpu"}', "missing kind, src, torch"),
        (json.dumps({"device": "cpu", "kind": "cpu", "torch": "2", "src": "/s", "gpu": 1}),
         "unknown ['gpu']"),
        (json.dumps({"device": "cpu", "kind": "cpu", "torch": "2", "src": "/s", "threads": "1"}),
         "threads must be a int, not '1'"),
    ],
)  # fmt: skip
def test_a_broken_spec_is_refused_saying_what_is_wrong(text, problem):
    with pytest.raises(ValueError, match="tensorbook_spec") as refused:
        BuildSpec.from_json(text)
    assert problem in str(refused.value)


def test_cuda_where_there_is_none_is_refused_naming_where_it_was_asked_for(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # as on a GPU machine
    with pytest.raises(DeviceUnavailableError, match=r"\('cuda:7', from --device\)"):
        resolve_spec("cuda:7", given_by="--device")

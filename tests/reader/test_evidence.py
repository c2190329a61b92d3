"""What a GPU did, replayed on the CPU: the code that reads a profile or the sync debug
mode is checked against every device's evidence in ``tests/evidence`` (where and when
each was recorded is in its ``provenance``), so a GPU's first run finds nothing the
tests could have found."""

from __future__ import annotations

import json
import warnings

import pytest
import torch
from tests.support.book import ROOT
from tests.support.evidence import Evidence, EvidenceError, load, main

from tensorbook.draw.timeline import find_mark, step_spans
from tensorbook.speed import waits
from tensorbook.trace import is_runtime_call

FILES = sorted((ROOT / "tests" / "evidence").glob("*.json"))
WAITING = ("cudaMemcpyAsync", "cudaStreamSynchronize")


@pytest.fixture(params=FILES, ids=[path.stem for path in FILES])
def evidence(request) -> Evidence:
    return load(request.param)


def test_there_is_evidence_from_a_gpu():
    gpus = {load(path).provenance["gpu"] for path in FILES}
    assert any(name.startswith("NVIDIA") for name in gpus), gpus


def test_the_mask_lists_show_the_operators_and_the_wait(evidence):
    """What speed.md says of its profile holds on the device that recorded it."""
    lines = {s: waits.operator_lines(events) for s, events in evidence.mask_events.items()}
    assert list(lines) == list(waits.MASK_SPELLINGS)
    counting = [s for s, names in lines.items() if any("nonzero" in n for n in names)]
    assert counting == ["g[m]", "g[m] = v[m]"]
    # the scalar write is masked_fill_, called by index_put_'s implementation, and the
    # direct call is that operator alone: no launch or query is listed as an operator
    assert [n.strip() for n in lines["g[m] = 0"]][-1] == "aten::masked_fill_"
    assert [n.strip() for n in lines["g.masked_fill_(m, 0)"]] == ["aten::masked_fill_"]
    for names in lines.values():
        calls = [n.strip() for n in names if is_runtime_call(n.strip())]
        assert set(calls) <= set(WAITING), calls
    # on a GPU, the wait is visible under nonzero: a copy of the count, then a sync
    if evidence.provenance["gpu"]:
        for spelling in counting:
            names = [n.strip() for n in lines[spelling]]
            at = names.index("aten::nonzero")
            assert names[at + 1 : at + 3] == list(WAITING), names


def test_the_profile_and_the_sync_debug_mode_agree(evidence):
    """A spelling waits under the sync debug mode exactly where its profile syncs."""
    if not evidence.waits:
        pytest.fail(f"{evidence.path.name} has no waits measured")
    for spelling, events in evidence.mask_events.items():
        syncs = any("Synchronize" in n for n in waits.operator_lines(events))
        assert evidence.waits[spelling] == syncs, spelling


def test_the_timeline_takes_the_cpu_range_of_its_mark(evidence):
    """On a GPU the mark is listed twice, its CPU range and its GPU annotation."""
    marks = evidence.step_marks
    step = find_mark(marks, "tensorbook.step")
    assert marks[step].lane == "cpu"
    assert sum(m.name == "tensorbook.step" for m in marks) == 2  # the GPU's annotation too
    if evidence.step_events is None:
        return
    spans = step_spans(evidence.step_events)
    cpu = [s.name for s in spans if s.lane == "cpu"]
    gpu = [s.name for s in spans if s.lane == "gpu"]
    assert cpu[-1] == "aten::item", cpu
    assert "aten::mm" in cpu, cpu
    assert all("::" in name for name in cpu), cpu
    assert gpu, "the GPU's kernels"
    assert not {"tensorbook.step", "tensorbook.warm_up"} & set(gpu), gpu


def test_the_sync_debug_mode_is_restored_and_its_warning_kept(evidence, monkeypatch):
    """torch warns when the mode is set (the recorded warning); under the suite's
    filterwarnings=error that raised after the mode was set, and left it at "error"."""
    assert evidence.sync_debug_warnings, "the recording kept what torch warned"
    mode = {"now": "default"}

    def set_mode(value):
        mode["now"] = value
        if value == "error":
            for message in evidence.sync_debug_warnings:
                warnings.warn(message, UserWarning, stacklevel=2)

    monkeypatch.setattr(torch.cuda, "set_sync_debug_mode", set_mode)
    monkeypatch.setattr(torch.cuda, "get_sync_debug_mode", lambda: mode["now"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with waits.sync_errors():
            assert mode["now"] == "error"
        assert mode["now"] == "default"
        with pytest.raises(KeyError), waits.sync_errors():
            {}["a key the block lacks"]  # the block fails
    assert mode["now"] == "default"


def test_the_mode_is_restored_when_setting_it_raises(monkeypatch):
    mode = {"now": "warn"}

    def set_mode(value):
        if value == "error":
            msg = "refused"
            raise RuntimeError(msg)
        mode["now"] = value

    monkeypatch.setattr(torch.cuda, "set_sync_debug_mode", set_mode)
    monkeypatch.setattr(torch.cuda, "get_sync_debug_mode", lambda: mode["now"])
    with pytest.raises(RuntimeError, match="refused"), waits.sync_errors():
        pass
    assert mode["now"] == "warn"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["provenance"].pop("commit"), "provenance"),
        (lambda d: d["mask_events"]["g[m]"][1].update(parent=7), "mask_events"),
        (lambda d: d["waits"].update({"g[m]": "yes"}), "waits"),
        (
            lambda d: d.update(step_marks=[{"name": "m", "lane": "tpu", "parent": None}]),
            "step_marks",
        ),
    ],
    ids=["provenance", "parent", "waits", "lane"],
)
def test_a_broken_evidence_file_names_its_field(tmp_path, change, field):
    data = json.loads(FILES[0].read_text(encoding="utf-8"))
    change(data)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(EvidenceError, match=field):
        load(broken)


def test_the_kit_s_rehearsal_on_the_cpu_writes_evidence_that_says_so(tmp_path):
    """``--device cpu`` rehearses the GPU's step: it writes evidence that reads back,
    labelled as no GPU's (a rehearsal of the kit once failed here, its file refused)."""
    out = tmp_path / "evidence.json"
    assert main(["--device", "cpu", "--out", str(out)]) == 0
    written = load(out)
    assert written.provenance["gpu"] == "none: a rehearsal on the CPU"
    assert written.mask_events  # each mask spelling's profile, as on a GPU

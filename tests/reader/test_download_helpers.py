"""What a chapter's download calls from the package: a script's show(), a check's verdict."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from tensorbook.script import ScriptDisplay
from tensorbook.verdict import verdict

WORDS = {"measured": "In the book:", "holds": "Holds here.", "fails": "Not here:"}


class _Pretty:
    """A value IPython prints with its own printer, as tensorbook's tables are."""

    def _repr_pretty_(self, printer, _cycle):
        printer.text(str(self))

    def __str__(self):
        return "a table"


def test_a_script_saves_a_figure_as_png_and_a_second_run_writes_the_same_file(tmp_path, capsys):
    figure = Figure(figsize=(2, 1))
    figure.subplots().plot([1, 2])
    for _ in range(2):  # two runs of the script, each with its own show()
        show = ScriptDisplay(tmp_path / "tensorbook-demo.py")
        show(figure, _Pretty(), "a word")
    assert capsys.readouterr().out.splitlines() == 2 * [
        "[figure saved as tensorbook-demo-figure-1.png]",
        "a table",  # as IPython shows it, not its repr
        "'a word'",
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["tensorbook-demo-figure-1.png"]
    assert (tmp_path / "tensorbook-demo-figure-1.png").read_bytes().startswith(b"\x89PNG")


def test_a_verdict_reports_a_failed_claim_and_the_cell_goes_on(capsys):
    # the checks run as a notebook runs them: pytest rewrites the asserts of its own modules
    with verdict("ratio 0.7", **WORDS):
        exec('ratio = 1.4\nassert ratio < 1, f"ratio {ratio}"\nprint("not reached")')  # noqa: S102
    with verdict("ratio 0.7", **WORDS):
        exec("assert 1.4 > 1")  # noqa: S102
    assert capsys.readouterr().out.splitlines() == [
        "In the book:",
        "ratio 0.7",
        "Not here:",
        "ratio 1.4",
        "In the book:",
        "ratio 0.7",
        "Holds here.",
    ]


def test_a_check_that_breaks_is_an_error_not_a_verdict(capsys):
    with pytest.raises(NameError), verdict("", **WORDS):
        assert undefined_name > 0  # noqa: F821 (a check with a fault of its own)
    assert "Holds here." not in capsys.readouterr().out

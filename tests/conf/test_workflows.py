"""The GitHub Actions workflows, checked offline: against the workflow schema
(check-jsonschema's copy), and for what they run. Every nox command in them must name
a session that noxfile.py defines, so a renamed session breaks this file, not a
contributor's pull request; the suite is the README's own command.
"""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from tests.support.book import ROOT, readme_command

from tensorbook_build.settings import LAYOUT

WORKFLOWS = ROOT / ".github" / "workflows"
CHECKS = WORKFLOWS / "checks.yml"
GPU = WORKFLOWS / "gpu.yml"
COMPAT = WORKFLOWS / "compat.yml"
NEW = [CHECKS, GPU, COMPAT]
NOXFILE = ROOT / "noxfile.py"
PYTHONS = ["3.11", "3.12"]


def _load(path: Path) -> dict:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as True
    workflow["on"] = workflow.pop(True, workflow.get("on"))
    return workflow


def _validate(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema",
         "vendor.github-workflows", str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def nox_sessions(noxfile: Path = NOXFILE) -> set[str]:
    """The sessions a noxfile defines: functions decorated with ``nox.session``."""
    names = set()
    for node in ast.parse(noxfile.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            if ast.unparse(call.func if call else decorator) != "nox.session":
                continue
            given = [k.value for k in (call.keywords if call else []) if k.arg == "name"]
            names.add(ast.literal_eval(given[0]) if given else node.name)
    return names


def nox_calls(script: str) -> list[list[str]]:
    """The arguments of every nox command (``nox ...`` or ``python3 -m nox ...``) in a
    shell script, one list per command."""
    calls = []
    for line in script.splitlines():
        command: list[str] = []
        for word in [*shlex.split(line, comments=True), ";"]:
            if re.match(r"\d*[<>]", word):  # a redirection such as 2>&1
                continue
            if word not in {"&&", "||", "|", ";"}:
                command.append(word)
                continue
            if command[:1] == ["nox"]:
                calls.append(command[1:])
            elif command[1:3] == ["-m", "nox"]:
                calls.append(command[3:])
            command = []
    return calls


def sessions_named(arguments: list[str]) -> list[str]:
    """The sessions a nox command line selects with -s/--session (before ``--``)."""
    names, taking = [], False
    for word in arguments:
        if word == "--":
            break
        if word in {"-s", "--session", "--sessions"}:
            taking = True
        elif word.startswith("-"):
            taking = False
        elif taking:
            names.append(word)
    return names


def _steps(workflow: dict) -> list[tuple[str, dict]]:
    return [(job, step) for job, spec in workflow["jobs"].items() for step in spec["steps"]]


def _nox_steps(workflow: dict, job: str | None = None) -> list[tuple[dict, list[str]]]:
    return [
        (step, call)
        for name, step in _steps(workflow)
        if job in (None, name)
        for call in nox_calls(step.get("run", ""))
    ]


def _sessions(workflow: dict, job: str | None = None) -> set[str]:
    return {s for _, call in _nox_steps(workflow, job) for s in sessions_named(call)}


def _device(arguments: list[str]) -> str:
    after = arguments[arguments.index("--") + 1 :] if "--" in arguments else []
    return after[after.index("--device") + 1] if "--device" in after else "cpu"


@pytest.mark.parametrize("path", sorted(WORKFLOWS.glob("*.yml")), ids=lambda p: p.name)
def test_workflow_matches_the_github_workflow_schema(path):
    checked = _validate(path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("path", NEW, ids=lambda p: p.name)
def test_schema_check_catches_a_job_without_a_runner(path, tmp_path):
    broken = _load(path)
    del broken["jobs"][next(iter(broken["jobs"]))]["runs-on"]
    copy = tmp_path / path.name
    copy.write_text(yaml.safe_dump(broken))
    assert _validate(copy).returncode != 0


@pytest.mark.parametrize("path", NEW, ids=lambda p: p.name)
def test_every_job_has_a_time_limit(path):
    for job, spec in _load(path)["jobs"].items():
        assert isinstance(spec.get("timeout-minutes"), int), f"{path.name}: {job}"


def test_nox_calls_are_found_in_shell_lines():
    script = (
        "python3 -m pip install nox && python3 -m nox -s docs -- --device cuda\n"
        "nox -R -s lint tests  # two at once\n"
        "python3 -m nox --session doctest 2>&1 | tee logs/doctest.log\n"
    )
    calls = nox_calls(script)
    assert calls == [
        ["-s", "docs", "--", "--device", "cuda"],
        ["-R", "-s", "lint", "tests"],
        ["--session", "doctest"],
    ]
    assert [sessions_named(c) for c in calls] == [["docs"], ["lint", "tests"], ["doctest"]]
    assert _device(calls[0]) == "cuda"


def test_workflows_run_only_sessions_the_noxfile_defines():
    defined = nox_sessions()
    assert {"lint", "doctest", "tests", "docs"} <= defined
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for step, call in _nox_steps(_load(path)):
            named = sessions_named(call)
            # without -s nox runs its default sessions, which the noxfile may change
            assert named, f"{path.name}: {step['run']!r} names no session"
            assert set(named) <= defined, f"{path.name}: {step['run']!r}"


def test_a_renamed_session_breaks_the_workflow_check(tmp_path):
    renamed = tmp_path / "noxfile.py"
    renamed.write_text(NOXFILE.read_text().replace("def doctest(", "def doctests("))
    run = set().union(*(_sessions(_load(path)) for path in NEW))
    assert "doctest" in run
    assert "doctest" in nox_sessions()
    assert "doctest" not in nox_sessions(renamed)
    assert run - nox_sessions(renamed) == {"doctest"}


def test_checks_run_on_every_push_and_pull_request_and_deploy_nothing():
    workflow = _load(CHECKS)
    assert {"push", "pull_request"} <= set(workflow["on"])
    assert workflow["permissions"] == {"contents": "read"}
    jobs = workflow["jobs"]
    assert _sessions(workflow, "lint") == {"lint"}
    assert _sessions(workflow, "doctest") == {"doctest"}
    assert _sessions(workflow, "tests") == {"tests"}
    assert _sessions(workflow, "book") == {"docs"}
    assert all(_device(call) == "cpu" for _, call in _nox_steps(workflow))
    # the suite is run exactly as the README tells a contributor to run it
    assert readme_command("tests") in [s.get("run") for s in jobs["tests"]["steps"]]
    assert readme_command("docs") in [s.get("run") for s in jobs["book"]["steps"]]
    for job in ("doctest", "tests", "book"):
        assert jobs[job]["strategy"]["matrix"]["python"] == PYTHONS
    # the book is kept for review, never published from here
    upload = next(s for s in jobs["book"]["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == LAYOUT.site.relative_to(ROOT).as_posix()
    for job, step in _steps(workflow):
        assert "pages" not in step.get("uses", ""), job
        assert "pages" not in jobs[job].get("permissions", {}), job
    assert workflow["env"]["PIP_INDEX_URL"].endswith("/whl/cpu")


def _caches(job: dict) -> dict[str, dict]:
    return {s["with"]["path"]: s["with"] for s in job["steps"] if "cache@" in s.get("uses", "")}


def test_checks_cache_pip_wheels_and_the_executed_outputs_under_the_right_keys():
    jobs = _load(CHECKS)["jobs"]
    for name in ("doctest", "tests", "book"):
        pip = _caches(jobs[name])["~/.cache/pip"]
        assert "matrix.python" in pip["key"]
        assert re.search(r"hashFiles\([^)]*'conf/constraints\.txt'", pip["key"]), name
    book = _caches(jobs["book"])
    # where nox -s docs keeps them (conf/book_build.py): beside the site
    outputs = (LAYOUT.site.parent / ".jupyter_cache").relative_to(ROOT).as_posix()
    assert set(book) == {"~/.cache/pip", outputs}  # never doctrees or html
    key, prefix = book[outputs]["key"], book[outputs]["restore-keys"]
    hashed = " ".join(re.findall(r"hashFiles\(([^)]*)\)", key))
    for inputs in ("'src/**'", "'docs/**'", "'conf/constraints.txt'"):
        assert inputs in hashed, inputs
    # an older cache is restored only for the same Python and the same pins (torch)
    assert "matrix.python" in prefix
    assert "hashFiles('conf/constraints.txt')" in prefix
    assert key.startswith(prefix)


def test_gpu_job_is_opt_in_and_runs_everything_on_cuda():
    workflow = _load(GPU)
    [job] = workflow["jobs"].values()
    condition = " ".join(job["if"].split())
    assert "vars.TENSORBOOK_GPU_RUNNER != ''" in condition
    # never on a pull request from a fork: the runner is the repository's own machine
    assert "github.event.pull_request.head.repo.full_name == github.repository" in condition
    assert job["runs-on"] == "${{ vars.TENSORBOOK_GPU_RUNNER }}"
    assert _sessions(workflow) == {"doctest", "tests", "docs"}
    assert {_device(call) for _, call in _nox_steps(workflow)} == {"cuda"}
    assert "PIP_INDEX_URL" not in {**workflow.get("env", {}), **job.get("env", {})}


def test_compat_runs_weekly_against_the_oldest_promised_torch_and_the_newest():
    workflow = _load(COMPAT)
    assert {"schedule", "workflow_dispatch"} <= set(workflow["on"])
    [job] = workflow["jobs"].values()
    matrix = job["strategy"]["matrix"]
    assert matrix["python"] == PYTHONS
    oldest, newest = matrix["torch"]
    assert newest == "newest"
    pyproject = (ROOT / "pyproject.toml").read_text()
    floor = SpecifierSet(re.search(r'"torch(>=[\d.]+)"', pyproject)[1])
    assert Version(oldest) in floor
    assert Version(oldest).release[:2] == Version(next(iter(floor)).version).release[:2]
    # the noxfile reads this variable to replace conf/constraints.txt's torch pin
    override = next(
        ast.literal_eval(node.value)
        for node in ast.parse(NOXFILE.read_text()).body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "TORCH_OVERRIDE"
    )
    assert job["env"][override] == "${{ matrix.torch }}"
    assert job["env"]["PIP_INDEX_URL"].endswith("/whl/cpu")
    nox_steps = _nox_steps(workflow)
    assert _sessions(workflow) == {"doctest", "tests", "docs"}
    for step, _ in nox_steps:
        warnings = step["env"]["PYTHONWARNINGS"].split(",")
        assert {"error::DeprecationWarning", "error::FutureWarning"} <= set(warnings)
    summary = next(s for _, s in _steps(workflow) if "GITHUB_STEP_SUMMARY" in s.get("run", ""))
    for step, _ in nox_steps:
        assert f"steps.{step['id']}.outcome" in summary["run"]


def test_compat_summary_lists_each_result_and_every_warning(tmp_path):
    """Run the summary step's script on made-up logs, as the runner would."""
    workflow = _load(COMPAT)
    summary = next(s for _, s in _steps(workflow) if "GITHUB_STEP_SUMMARY" in s.get("run", ""))
    outcomes = {"doctest": "success", "tests": "failure", "book": "success"}
    values = {f"steps.{k}.outcome": v for k, v in outcomes.items()} | {"matrix.python": "3.12"}
    script = re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: values[m[1]], summary["run"])
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "tests.log").write_text(
        "E   DeprecationWarning: torch.foo is deprecated\n"
        "tests/x.py:3: FutureWarning: torch.bar will change\n"
        "nox > Session tests failed.\n"
    )
    (tmp_path / "logs" / "book.log").write_text("WARNING: a page said something on stderr\n")
    out = tmp_path / "summary.md"
    env = {"GITHUB_STEP_SUMMARY": str(out), "TENSORBOOK_TORCH": "2.11.0", "PATH": "/usr/bin:/bin"}
    subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=tmp_path, env=env, check=True)
    text = out.read_text()
    assert "TENSORBOOK_TORCH=2.11.0" in text
    assert "Python 3.12" in text
    for check, outcome in [("doctests", "success"), ("tests", "failure"), ("book", "success")]:
        assert f"| {check} | {outcome} |" in text
    assert "DeprecationWarning: torch.foo is deprecated" in text
    assert "FutureWarning: torch.bar will change" in text
    assert "WARNING: a page said something on stderr" in text
    assert "nox > Session tests failed." in text


def test_readme_names_the_workflows_and_how_to_enable_the_gpu_job():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for path in NEW:
        assert f".github/workflows/{path.name}" in readme, path.name
    assert "TENSORBOOK_GPU_RUNNER" in readme
    assert "TENSORBOOK_TORCH=" in readme


def test_checks_build_the_pdfs_with_the_packages_the_pdf_build_names():
    """The PDF job installs exactly the Debian packages tensorbook_build.pdf installs."""
    from tensorbook_build.pdf import DEBIAN_PACKAGES

    job = _load(CHECKS)["jobs"]["pdf"]
    assert _sessions(_load(CHECKS), "pdf") == {"pdf"}
    install = next(s["run"] for s in job["steps"] if "apt-get install" in s.get("run", ""))
    named = install.split("--no-install-recommends", 1)[1].split()
    assert sorted(named) == sorted(DEBIAN_PACKAGES)

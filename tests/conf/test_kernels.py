"""Warm kernels: forked from a server that imported torch, never CUDA, and never left behind."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch
from jupyter_client.kernelspec import NoSuchKernel
from jupyter_client.manager import AsyncKernelManager
from tests.support.book import CUDA_MISSING, SOURCE_LANGUAGE, copy_of_the_book

from tensorbook_build.forkserver import request, running
from tensorbook_build.kernels import ReadyClient, kernel_manager

SLOW_PAGE = """---
file_format: mystnb
kernelspec:
  name: python3
  display_name: Python 3
---

# Slow

```{code-cell} ipython3
import time
time.sleep(60)
```
"""


@pytest.fixture
def fork_server(tmp_path):
    """A fork server, as the execute stage starts it, and a kernel manager bound to it."""
    with running(tmp_path, os.environ) as socket:  # from the pages' folder, as the build
        server = int(request(socket, {"status": True}).split('"pid": ')[1].split(",")[0])
        yield server, socket, kernel_manager(socket, tmp_path / "kernel.log")
    assert not socket.exists()  # the server is gone, and its folder with it


def _run_apart(coroutine_function, *args):
    """Run a coroutine in a thread of its own, with its own event loop: the suite's
    browser tests keep one running in the main thread, where asyncio.run refuses to."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(coroutine_function(*args))).result()


async def _printed(manager_class: type[AsyncKernelManager], code: str, cwd: Path) -> str:
    """Start a kernel as nbclient does, run ``code``, and return what it printed."""
    manager = manager_class(kernel_name="python3")
    await manager.start_kernel(cwd=str(cwd))
    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        asked, printed = client.execute(code), []
        while True:
            message = await client.get_iopub_msg(timeout=60)
            if message["parent_header"].get("msg_id") != asked:
                continue
            if message["msg_type"] == "stream":
                printed.append(message["content"]["text"])
            elif message["msg_type"] == "error":
                raise RuntimeError(message["content"]["evalue"])
            elif (
                message["msg_type"] == "status" and message["content"]["execution_state"] == "idle"
            ):
                return "".join(printed).strip()
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(now=True)


def _run(manager_class: type[AsyncKernelManager], code: str, cwd: Path | None = None) -> str:
    return _run_apart(_printed, manager_class, code, cwd or Path.cwd())


def test_the_server_never_initialises_cuda(fork_server):
    """A GPU build works because the kernels initialise CUDA themselves, after the fork."""
    _, socket, _ = fork_server
    status = request(socket, {"status": True})
    assert '"cuda_initialized": false' in status


def test_a_kernel_is_forked_from_the_server_over_ipc(fork_server):
    server, _, manager = fork_server
    code = "import os, torch\nprint(os.getppid(), torch.get_num_threads())"
    parent, threads = _run(manager, code).split()
    assert int(parent) == server
    assert int(threads) == int(os.environ.get("OMP_NUM_THREADS", threads))


def test_the_book_s_kernel_spec_is_the_only_one_and_names_no_file():
    with pytest.raises(NoSuchKernel):
        kernel_manager(None, None)(kernel_name="python2").kernel_spec  # noqa: B018
    spec = kernel_manager(None, None)(kernel_name="python3").kernel_spec
    assert spec.metadata["kernel_provisioner"]["provisioner_name"] == "tensorbook-warm"


def test_a_forked_kernel_computes_what_a_fresh_one_does(fork_server, tmp_path):
    _, _, manager = fork_server
    code = "import torch\ntorch.manual_seed(0)\nprint(torch.randn(3).tolist(), (torch.randn(64, 64) @ torch.randn(64, 64)).sum().item())"
    code += "\nimport os, sys\nprint(os.getcwd(), sys.path)"  # and from where it imports
    forked = _run(manager, code, tmp_path)
    assert _run(kernel_manager(None, None), code, tmp_path) == forked


def test_a_kernel_s_own_output_goes_to_its_log_not_the_build_s(fork_server, tmp_path, capfd):
    _, _, manager = fork_server
    code = "import os\nos.write(2, b'from C\\n')\nprint('to the page')"
    assert _run(manager, code) == "to the page"
    assert (tmp_path / "kernel.log").read_text(encoding="utf-8").splitlines()[-1] == "from C"
    assert "from C" not in capfd.readouterr().err


async def _ready_then_print(manager_class: type[AsyncKernelManager]) -> tuple[type, str]:
    """Start a kernel as nbclient does, and print from it the moment it is ready."""
    manager = manager_class(kernel_name="python3")
    await manager.start_kernel()
    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        asked = client.execute("print('ready')")
        while True:  # its output comes on IOPub, which must already be connected
            message = await client.get_iopub_msg(timeout=10)
            if message["parent_header"].get("msg_id") == asked and message["msg_type"] == "stream":
                return type(client), message["content"]["text"]
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(now=True)


def test_the_build_s_kernels_are_ready_once_they_answer_and_lose_no_output(fork_server):
    """The provisioner gives nbclient's manager the client that skips the quiet wait;
    what the kernel prints right after is received, several starts in a row."""
    _, _, manager = fork_server
    for _ in range(5):
        client, printed = _run_apart(_ready_then_print, manager)
        assert client is ReadyClient
        assert printed == "ready\n"


def test_waiting_for_a_kernel_that_died_fails_at_once(fork_server):
    _, _, manager_class = fork_server

    async def wait_for_a_dead_one() -> None:
        manager = manager_class(kernel_name="python3")
        await manager.start_kernel()
        client = manager.client()
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=60)
            os.kill(manager.provisioner.pid, signal.SIGKILL)
            while await client.is_alive():
                await asyncio.sleep(0.05)
            await client.wait_for_ready(timeout=60)
        finally:
            client.stop_channels()
            await manager.shutdown_kernel(now=True)

    start = time.monotonic()
    with pytest.raises(RuntimeError, match="Kernel died before replying"):
        _run_apart(wait_for_a_dead_one)
    assert time.monotonic() - start < 30  # long before the timeout


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason=CUDA_MISSING)
def test_a_forked_kernel_uses_the_gpu(fork_server):
    _, _, manager = fork_server
    assert _run(manager, "import torch\nprint(torch.ones(4, device='cuda').sum().item())") == "4.0"


def _fork_processes(tree: Path) -> list[int]:
    """The fork servers and forked kernels (their command line is the server's) of
    builds of ``tree`` (their environment names its ``src``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
                environment = (entry / "environ").read_bytes()
            except OSError:
                continue
            if b"tensorbook_build.forkserver" in command and str(tree).encode() in environment:
                found.append(int(entry.name))
    return found


@pytest.mark.book
def test_a_killed_build_leaves_no_process_and_the_next_build_is_right(tmp_path):
    tree = copy_of_the_book(tmp_path, parts=["conf", "src"])
    (tree / "docs" / "index.md").write_text(SLOW_PAGE, encoding="utf-8")
    site = tmp_path / "out" / "html"
    command = [
        sys.executable,
        "-m",
        "tensorbook_build",
        "--site",
        str(site),
        "--language",
        SOURCE_LANGUAGE,
    ]
    env = {**os.environ, "PYTHONPATH": str(tree / "conf")}
    build = subprocess.Popen(
        command,
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while len(_fork_processes(tree)) < 2 and time.monotonic() < deadline:  # a server, a kernel
        time.sleep(0.2)
    assert len(_fork_processes(tree)) >= 2, "no fork server and kernel were running"
    time.sleep(1)  # the kernel is inside the cell
    os.killpg(build.pid, signal.SIGKILL)  # as a terminal's kill would, the whole group
    build.wait()
    deadline = time.monotonic() + 15
    while _fork_processes(tree) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _fork_processes(tree) == []
    (tree / "docs" / "index.md").write_text(
        SLOW_PAGE.replace("time.sleep(60)", "print('quick')"), encoding="utf-8"
    )
    again = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "quick" in (site / SOURCE_LANGUAGE / "index.html").read_text(encoding="utf-8")

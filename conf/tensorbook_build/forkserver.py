"""Warm kernels: one process imports what the pages import, then forks a kernel per page.

A fresh kernel spends most of a small page's time importing torch, NumPy, Matplotlib
and ipykernel. The build's source edition starts this server once
(``python -m tensorbook_build.forkserver SOCKET``, with the kernels' environment, in
the pages' folder, so that its children's import path is a fresh kernel's); it
imports those, never touches CUDA (a child that needs a GPU initialises CUDA itself),
and answers each request on its Unix socket by forking a child that becomes the kernel
jupyter_client asked for, as ``python -m ipykernel_launcher -f CONNECTION_FILE``
would. The page's own modules (``tensorbook``) are imported by the page, in the child,
from the source the build fingerprinted.

The build driver starts the server (:func:`running`) as it starts the source
edition's Sphinx, so that the imports overlap Sphinx's own start; a ``sphinx-build``
run without the driver gets one from the execution extension instead. The server dies
with the process that started it (Linux's parent-death signal), and each kernel with
the server (ipykernel's parent poller), so a build that is killed leaves nothing
behind. :class:`tensorbook_build.kernels.WarmProvisioner` is the client.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import runpy
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["FORKSERVER_VARIABLE", "request", "running", "serve"]

FORKSERVER_VARIABLE = "TENSORBOOK_FORKSERVER"
"""The fork server's socket, where the build runs one; fresh kernels where it does not."""

_PR_SET_PDEATHSIG = 1
_PRELOADED = ("numpy", "torch", "matplotlib", "matplotlib.figure", "ipykernel.kernelapp")


def _die_with_parent() -> None:
    """Ask Linux to end this process when the one that started it ends."""
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it ended before the request took effect
        os._exit(1)


def _become_kernel(task: dict[str, Any], server: int) -> None:
    """In the child: the kernel jupyter_client asked for; never returns."""
    code = 0
    try:
        os.setsid()  # a process group of its own, which jupyter_client signals
        os.chdir(task["cwd"])
        os.environ.clear()
        os.environ.update(task["env"])
        stdin = os.open(os.devnull, os.O_RDONLY)
        os.dup2(stdin, 0)
        # ipykernel's own launcher, as `python -m ipykernel_launcher` runs it, with the
        # server as the kernel's parent: the kernel exits when the server does
        sys.argv = [
            "ipykernel_launcher",
            "-f",
            task["connection_file"],
            f"--IPKernelApp.parent_handle={server}",
        ]
        runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)
    except SystemExit as end:
        code = end.code if isinstance(end.code, int) else int(end.code is not None)
    except BaseException:  # noqa: BLE001 - a child must never return into the server
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _warm_up() -> None:
    """Pay once, before any fork, for what a page's first torch error costs.

    The first operation that mixes devices loads torch's meta-device kernels, about a
    second; two chapters teach that error, and torch.func and the profiler use those
    kernels too. Warmed here, the kernels inherit them. Only the CPU and the meta
    device are touched (never CUDA), on three-element tensors that no thread pool
    sees, so a child starts with no threads and no random state consumed. (IPython's
    tracebacks need no warming: the pages show a taught error as one line.)
    """
    import torch

    with contextlib.suppress(RuntimeError):
        torch.ones(3, device="meta") + torch.ones(3)


def serve(path: Path) -> None:
    """Import, listen on ``path``, and fork a kernel for each request, until killed."""
    _die_with_parent()
    import importlib

    for module in _PRELOADED:
        importlib.import_module(module)
    _warm_up()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernels are reaped as they end
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(8)
    server = os.getpid()
    while True:
        connection, _ = listener.accept()
        with connection:
            task = json.loads(connection.makefile("r", encoding="utf-8").readline())
            if task.get("status"):
                import torch

                status = {"pid": server, "cuda_initialized": torch.cuda.is_initialized()}
                connection.sendall(json.dumps(status).encode() + b"\n")
                continue
            child = os.fork()
            if child == 0:
                listener.close()
                connection.close()
                _become_kernel(task, server)
            connection.sendall(f"{child}\n".encode())


@contextlib.contextmanager
def running(
    cwd: Path, environment: Mapping[str, str], python: str = sys.executable
) -> Iterator[Path]:
    """Run a server from ``cwd`` with ``environment``; yield its socket; stop it after.

    ``cwd`` is the pages' folder, where MyST-NB runs their kernels, so that a child's
    import path (its first entry is that folder) is a fresh kernel's; ``environment``
    holds the kernels' variables (:func:`tensorbook_build.execute.kernel_environment`),
    so that torch is imported with the thread count the kernels will use.
    """
    folder = Path(tempfile.mkdtemp(prefix="tb-fork-"))  # short: a socket's path is limited
    socket_path = folder / "socket"
    process = subprocess.Popen(
        [python, "-m", __name__, str(socket_path)], cwd=cwd, env=dict(environment)
    )
    try:
        yield socket_path
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
        if process.poll() is None:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def request(path: Path, task: dict[str, Any], timeout: float = 60.0) -> str:
    """Send one request to the server at ``path`` and return its one-line answer.

    Waits for the server to be listening (it imports first), at most ``timeout``.
    """
    import time

    deadline = time.monotonic() + timeout
    while True:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            client.connect(str(path))
            break
        except (FileNotFoundError, ConnectionRefusedError):
            client.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    with client:
        client.sendall(json.dumps(task).encode() + b"\n")
        return client.makefile("r", encoding="utf-8").readline().strip()


if __name__ == "__main__":
    serve(Path(sys.argv[1]))

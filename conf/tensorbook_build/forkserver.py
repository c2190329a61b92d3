"""Warm kernels: one process imports what the pages import, then forks a kernel per page.

The server never touches CUDA (a child that needs a GPU initialises it). It dies with
the process that started it (the execute stage), and each kernel with the server, so a
killed build leaves nothing. It runs in a process group of its own: a terminal's Ctrl-C
reaches the driver alone, which stops the stage, and so the server.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from tensorbook_build.launch import die_with_parent, private_folder, run_child

_PRELOADED = ("numpy", "torch", "matplotlib", "matplotlib.figure", "ipykernel.kernelapp")


def _detach(server: int, cwd: str, log: str) -> None:
    """In a kernel: its own process group (which jupyter_client signals), folder and stdin.

    It dies with ``server``: even in a cell that never lets ipykernel see its parent go.
    Its own output goes to ``log`` (when given): what a page prints comes over its
    channels, and a kernel stopped mid-message must not print a traceback into the build's.
    """
    die_with_parent(server)
    os.setsid()
    os.chdir(cwd)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    if log:
        output = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(output, 1)
        os.dup2(output, 2)
        os.close(output)


def serve(listening: int, parent: int) -> None:
    """Import, then fork a kernel for each request on socket ``listening``, until killed.

    ``parent`` is the process that started the server, which it dies with.
    """
    die_with_parent(parent)
    for module in _PRELOADED:
        importlib.import_module(module)
    import torch

    # the meta-device kernels that a page's first torch error loads (a second), paid once;
    # tiny CPU tensors, so that a child starts with no threads and no random state used
    with contextlib.suppress(RuntimeError):
        torch.ones(3, device="meta") + torch.ones(3)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernels are reaped as they end
    listener = socket.socket(fileno=listening)
    server = os.getpid()
    while True:
        connection, _ = listener.accept()
        with connection:
            task = json.loads(connection.makefile("r", encoding="utf-8").readline())
            if task.get("status"):
                status = {"pid": server, "cuda_initialized": torch.cuda.is_initialized()}
                with contextlib.suppress(OSError):  # whoever asked may have gone
                    connection.sendall(json.dumps(status).encode() + b"\n")
                continue
            child = os.fork()
            if child == 0:
                listener.close()
                connection.close()
                # the server as the kernel's parent: the kernel exits when the server does
                arguments = ["-f", task["connection_file"], f"--IPKernelApp.parent_handle={server}"]
                run_child(
                    "ipykernel_launcher",
                    arguments,
                    task["env"],
                    partial(_detach, server, task["cwd"], task.get("log", "")),
                )
            try:
                connection.sendall(f"{child}\n".encode())
            except OSError:  # the reader that asked is gone (a stopped build): so is its use
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGKILL)


@contextlib.contextmanager
def running(cwd: Path, environment: Mapping[str, str]) -> Iterator[Path]:
    """Run a server from ``cwd`` with ``environment``; yield its socket; stop it after.

    ``cwd`` and ``environment`` are the kernels' (the pages' folder, and the stage's
    environment, the spec's :meth:`~tensorbook_build.spec.BuildSpec.kernel_environment`
    over the driver's): children start as fresh ones.
    """
    folder = private_folder()
    socket_path = folder / "socket"
    # listening before the server starts: a request made while it imports waits in line
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(socket_path))
        listener.listen(8)
        fd = listener.fileno()
        command = [sys.executable, "-m", __name__, str(fd), str(os.getpid())]
        process = subprocess.Popen(
            command, cwd=cwd, env=dict(environment), pass_fds=[fd], process_group=0
        )
    try:
        yield socket_path
    finally:
        process.kill()  # it keeps nothing to save; its kernels end with it
        process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def request(path: Path, task: dict[str, Any]) -> str:
    """Send one request to the server at ``path`` and return its one-line answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(120)  # the first answer waits for the server's imports
        client.connect(str(path))
        client.sendall(json.dumps(task).encode() + b"\n")
        answer = client.makefile("r", encoding="utf-8").readline().strip()
    if not answer:
        msg = f"the fork server at {path} ended without answering (its error is above)"
        raise RuntimeError(msg)
    return answer


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]))

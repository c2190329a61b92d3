"""The kernels the pages execute in: warm, and talking over IPC, not TCP.

MyST-NB starts each page's kernel with jupyter_client, from the kernel spec named in
the page (``python3``). The build puts a spec of that name first on the kernels'
search path (:func:`write_kernel_spec`), the same command as ipykernel's own, whose
provisioner (:class:`WarmProvisioner`, registered under ``jupyter_client``'s
``kernel_provisioners`` entry points)

* moves the kernel's channels from TCP ports on 127.0.0.1 to Unix sockets in a
  private folder: nothing else on the machine can connect to them, and the kernels no
  longer warn that their traffic is unencrypted;
* where the build runs a fork server (:mod:`tensorbook_build.forkserver`, named by
  ``TENSORBOOK_FORKSERVER``), has the kernel forked from it, with torch and the rest
  already imported, instead of started from nothing;
* gives the kernel's manager a client (:class:`ReadyClient`) that starts executing as
  soon as the kernel answers, where jupyter_client's own then waits for a fifth of a
  second of silence.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import sys
import tempfile
import time
import uuid
from pathlib import Path
from queue import Empty
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient

from tensorbook_build.forkserver import FORKSERVER_VARIABLE, request
from tensorbook_build.upstream import LocalProvisioner, adopt_kernel_info

__all__ = [
    "FORKSERVER_VARIABLE",
    "KERNEL_NAME",
    "PROVISIONER",
    "ForkedKernel",
    "ReadyClient",
    "WarmProvisioner",
    "write_kernel_spec",
]

KERNEL_NAME = "python3"
"""The kernel the pages name in their front matter."""
PROVISIONER = "tensorbook-warm"
"""The provisioner's entry-point name (``pyproject.toml``)."""


class ForkedKernel:
    """A kernel the fork server forked, as jupyter_client handles a ``Popen``.

    It is the server's child, not this process's, so its exit is seen by its absence
    (the server reaps its children), and its exit status is not known here.
    """

    stdin = stdout = stderr = None

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """``None`` while the kernel runs, then 0."""
        if self.returncode is None:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                self.returncode = 0
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the kernel to end (``TimeoutError`` after ``timeout`` seconds)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                msg = f"kernel {self.pid} still runs"
                raise TimeoutError(msg)
            time.sleep(0.05)
        return self.returncode or 0

    def send_signal(self, signum: int) -> None:
        """Signal the kernel; nothing once it has ended (as ``Popen`` does)."""
        try:
            os.kill(self.pid, signum)
        except ProcessLookupError:
            self.returncode = 0 if self.returncode is None else self.returncode

    def kill(self) -> None:
        """Kill the kernel."""
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        """Ask the kernel to end."""
        self.send_signal(signal.SIGTERM)


class ReadyClient(AsyncKernelClient):
    """jupyter_client's asynchronous client, ready as soon as its kernel is.

    jupyter_client's own readiness check ends by reading IOPub until it has been quiet
    for 0.2 s, every time: a tenth of a small page's execution. This one is ready once
    the kernel has answered a ``kernel_info_request`` on the shell channel and reported
    itself idle after that very request on IOPub, which proves both channels connected.
    Messages from before (the kernel's ``starting`` status) may stay queued: a page's
    client reads only the messages whose parent is the request it sent.
    """

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        """Return once the kernel answers on both channels; ``RuntimeError`` if it dies."""
        deadline = time.monotonic() + (math.inf if timeout is None else timeout)
        while True:
            asked = self.kernel_info()
            if await self._answered(asked):
                return
            if not await self.is_alive():
                msg = "Kernel died before replying to kernel_info"
                raise RuntimeError(msg)
            if time.monotonic() > deadline:
                msg = f"Kernel didn't respond in {timeout:g} seconds"
                raise RuntimeError(msg)

    async def _answered(self, asked: str) -> bool:
        """Whether the kernel replied to ``asked`` and then went idle on IOPub.

        The shell reply may take a second (a kernel still starting); the IOPub status
        only a moment once replied, unless the channel is still connecting, in which
        case the next request's status will come through.
        """
        reply = await self._message(self.shell_channel, asked, 1.0, "kernel_info_reply")
        if reply is None:
            return False
        if await self._message(self.iopub_channel, asked, 0.2, "status", "idle") is None:
            return False
        adopt_kernel_info(self, reply)
        return True

    @staticmethod
    async def _message(
        channel: Any,  # noqa: ANN401 - jupyter_client's channel classes are untyped
        asked: str,
        patience: float,
        kind: str,
        state: str | None = None,
    ) -> dict[str, Any] | None:
        """The first message of ``kind`` answering ``asked`` within ``patience`` seconds."""
        until = time.monotonic() + patience
        while (left := until - time.monotonic()) > 0:
            try:
                message: dict[str, Any] = await channel.get_msg(timeout=left)
            except (TimeoutError, Empty):
                return None
            if (
                message["msg_type"] == kind
                and message["parent_header"].get("msg_id") == asked
                and (state is None or message["content"].get("execution_state") == state)
            ):
                return message
        return None


class WarmProvisioner(LocalProvisioner):
    """jupyter_client's local provisioner: kernels on Unix sockets, forked warm.

    MyST-NB finds it through the kernel spec (:func:`write_kernel_spec`). Its next
    release adds a ``kernel_manager_class`` setting (MyST-NB PRs #721, #725, unreleased
    in 1.4): a kernel manager class of the book's could then give the pages' kernels this
    provisioner and :class:`ReadyClient` without a spec on ``JUPYTER_PATH``; the fork
    itself would stay here.
    """

    sockets: Path | None = None

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:  # noqa: ANN401 - jupyter_client's
        """Switch the kernel manager to IPC before it writes the connection file."""
        manager = self.parent
        # the asynchronous manager nbclient uses; a blocking one keeps its own client
        if manager is not None and issubclass(manager.client_factory, AsyncKernelClient):
            manager.client_class = f"{__name__}.{ReadyClient.__name__}"
        if manager is not None and manager.transport != "ipc":
            # a short path: a Unix socket's is limited to about a hundred bytes
            self.sockets = Path(tempfile.mkdtemp(prefix="tb-kernel-"))
            manager.transport = "ipc"
            manager.ip = str(self.sockets / uuid.uuid4().hex[:8])
            manager.cache_ports = False
        return await super().pre_launch(**kwargs)

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> Any:  # noqa: ANN401
        """Fork the kernel from the build's server, or start it afresh without one."""
        server = os.environ.get(FORKSERVER_VARIABLE)
        if not server:
            return await super().launch_kernel(cmd, **kwargs)
        cwd = str(kwargs.get("cwd") or Path.cwd())
        task = {
            "connection_file": cmd[cmd.index("-f") + 1],
            "env": dict(kwargs.get("env") or os.environ),
            "cwd": cwd,
        }
        pid = int(request(Path(server), task))
        # a stand-in for the Popen the field is typed as: the methods jupyter_client calls
        self.process = ForkedKernel(pid)  # type: ignore[assignment]
        self.pid = self.pgid = pid  # the child made its own process group
        self.cwd = cwd
        return self.connection_info

    async def cleanup(self, restart: bool = False) -> None:
        """Remove the sockets' folder once the kernel is gone for good."""
        await super().cleanup(restart=restart)
        if not restart and self.sockets is not None:
            shutil.rmtree(self.sockets, ignore_errors=True)


def write_kernel_spec(folder: Path, python: str = sys.executable) -> Path:
    """Write the ``python3`` kernel spec into ``folder/kernels``.

    It returns ``folder``, the entry to put first on ``JUPYTER_PATH``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     spec = json.loads((write_kernel_spec(Path(tmp), "python") / "kernels" / "python3"
    ...                        / "kernel.json").read_text())
    >>> spec["argv"], spec["metadata"]["kernel_provisioner"]["provisioner_name"]
    (['python', '-m', 'ipykernel_launcher', '-f', '{connection_file}'], 'tensorbook-warm')
    """
    spec = {
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "metadata": {"debugger": False, "kernel_provisioner": {"provisioner_name": PROVISIONER}},
    }
    target = folder / "kernels" / KERNEL_NAME
    target.mkdir(parents=True, exist_ok=True)
    (target / "kernel.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    return folder

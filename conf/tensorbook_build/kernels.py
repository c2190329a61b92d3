"""The pages' kernels: a kernel manager whose ``python3`` spec forks each kernel warm, on IPC.

The execute stage gives nbclient :func:`kernel_manager`'s class, bound to the stage's fork
server and the page's log: the spec lives here, not in a ``kernel.json`` on a search path.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import sys
import time
import uuid
from pathlib import Path
from queue import Empty
from typing import Any, ClassVar

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager, NoSuchKernel
from jupyter_client.manager import AsyncKernelManager
from traitlets import default

from tensorbook_build.forkserver import request
from tensorbook_build.launch import private_folder
from tensorbook_build.upstream import LocalProvisioner, adopt_kernel_info


class ForkedKernel:
    """A kernel the fork server forked, as much a ``Popen`` as jupyter_client uses.

    Its exit status is unknown (it is the server's child); jupyter_client signals its
    process group, and calls ``send_signal`` only where that fails.
    """

    stdin = stdout = stderr = None

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def poll(self) -> int | None:
        """``None`` while the kernel runs, then 0."""
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return 0
        return None

    def wait(self) -> int:
        """Wait for the kernel to end; 0."""
        while self.poll() is None:
            time.sleep(0.05)
        return 0

    def send_signal(self, signum: int) -> None:
        """Signal the kernel; nothing once it has ended (as ``Popen`` does)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signum)


class ReadyClient(AsyncKernelClient):
    """jupyter_client's asynchronous client, without its 0.2 s wait for quiet on IOPub.

    Ready once the kernel has answered ``kernel_info`` on the shell channel and gone
    idle after it on IOPub, which proves both channels connected. Older messages may
    stay queued: a page's client reads only replies to its own requests.
    """

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        """Return once the kernel answers on both channels; ``RuntimeError`` if it dies."""
        deadline = time.monotonic() + (math.inf if timeout is None else timeout)
        while True:
            asked = self.kernel_info()
            # a starting kernel may take a second to reply; if IOPub is still connecting,
            # the next request's status comes instead
            reply = await self._message(self.shell_channel, asked, 1.0, "kernel_info_reply")
            if reply and await self._message(self.iopub_channel, asked, 0.2, "status", "idle"):
                adopt_kernel_info(self, reply)
                return
            if not await self.is_alive():
                msg = "Kernel died before replying to kernel_info"
                raise RuntimeError(msg)
            if time.monotonic() > deadline:
                msg = f"Kernel didn't respond in {timeout:g} seconds"
                raise RuntimeError(msg)

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
    """jupyter_client's local provisioner: kernels on Unix sockets, forked warm."""

    sockets: Path | None = None

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:  # noqa: ANN401 - jupyter_client's
        """Switch the kernel manager to IPC, in a private folder with its connection file."""
        manager = self.parent
        # the asynchronous manager nbclient uses; a blocking one keeps its own client
        if manager is not None and issubclass(manager.client_factory, AsyncKernelClient):
            manager.client_class = f"{__name__}.{ReadyClient.__name__}"
        if manager is not None and manager.transport != "ipc":
            self.sockets = private_folder()
            manager.transport = "ipc"
            manager.ip = str(self.sockets / uuid.uuid4().hex[:8])
            manager.connection_file = str(self.sockets / "connection.json")
            manager.cache_ports = False
        return await super().pre_launch(**kwargs)

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> Any:  # noqa: ANN401
        """Fork the kernel from the stage's server, or start it afresh without one.

        Either way its own output (ipykernel's log, a warning from C) goes to the page's
        log, not the build's terminal: a page's outputs come over its channels.
        """
        manager = self.parent
        server = getattr(manager, "fork_server", "")
        log = getattr(manager, "kernel_log", "")
        if not server:
            if log:
                output = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                try:  # the child keeps its own copy
                    return await super().launch_kernel(cmd, **kwargs, stdout=output, stderr=output)
                finally:
                    os.close(output)
            return await super().launch_kernel(cmd, **kwargs)
        cwd = str(kwargs.get("cwd") or Path.cwd())
        env = dict(kwargs.get("env") or os.environ)
        task = {"connection_file": cmd[cmd.index("-f") + 1], "env": env, "cwd": cwd, "log": log}
        pid = int(request(Path(server), task))
        self.process = ForkedKernel(pid)  # type: ignore[assignment]
        self.pid = self.pgid = pid  # the child made its own process group
        self.cwd = cwd
        return self.connection_info

    async def cleanup(self, restart: bool = False) -> None:
        """Remove the sockets' folder once the kernel is gone for good."""
        await super().cleanup(restart=restart)
        if not restart and self.sockets is not None:
            shutil.rmtree(self.sockets, ignore_errors=True)


KERNEL = "python3"
"""The kernel every page names in its front matter."""

KERNEL_SPEC = {
    "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
    "display_name": "Python 3 (ipykernel)",
    "language": "python",
    # the provisioner's entry-point name (conf/pyproject.toml)
    "metadata": {"debugger": False, "kernel_provisioner": {"provisioner_name": "tensorbook-warm"}},
}


class BookKernelSpecs(KernelSpecManager):
    """The one kernel spec the pages use, :data:`KERNEL_SPEC`, found on no search path."""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        """The book's spec for :data:`KERNEL`; ``NoSuchKernel`` for any other name."""
        if kernel_name != KERNEL:
            raise NoSuchKernel(kernel_name)
        return KernelSpec(resource_dir="", **KERNEL_SPEC)


class WarmKernelManager(AsyncKernelManager):
    """nbclient's kernel manager with the book's spec; :func:`kernel_manager` binds it."""

    fork_server: ClassVar[str] = ""  # the server's socket; empty: each kernel afresh
    kernel_log: ClassVar[str] = ""  # the file the kernel's own output goes to; empty: inherited

    @default("kernel_spec_manager")
    def _book_kernel_specs(self) -> KernelSpecManager:
        return BookKernelSpecs(parent=self)


def kernel_manager(fork_server: Path | None, log: Path | None) -> type[WarmKernelManager]:
    """A kernel manager class whose kernels fork from ``fork_server`` and write to ``log``.

    A class, because nbclient makes the manager itself (its ``kernel_manager_class``).
    """
    bound = {"fork_server": str(fork_server or ""), "kernel_log": str(log or "")}
    return type(WarmKernelManager.__name__, (WarmKernelManager,), bound)

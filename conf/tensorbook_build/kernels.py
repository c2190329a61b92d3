"""The pages' ``python3`` kernel spec, whose provisioner forks each kernel warm, on IPC."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import sys
import time
import uuid
from pathlib import Path
from queue import Empty
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient

from tensorbook_build.forkserver import FORKSERVER_VARIABLE, request
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
        """Fork the kernel from the build's server, or start it afresh without one."""
        server = os.environ.get(FORKSERVER_VARIABLE)
        if not server:
            return await super().launch_kernel(cmd, **kwargs)
        cwd = str(kwargs.get("cwd") or Path.cwd())
        env = dict(kwargs.get("env") or os.environ)
        task = {"connection_file": cmd[cmd.index("-f") + 1], "env": env, "cwd": cwd}
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


def write_kernel_spec(folder: Path) -> Path:
    """Write the ``python3`` kernel spec under ``folder``, the entry for ``JUPYTER_PATH``."""
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        # the provisioner's entry-point name (conf/pyproject.toml)
        "metadata": {
            "debugger": False,
            "kernel_provisioner": {"provisioner_name": "tensorbook-warm"},
        },
    }
    target = folder / "kernels" / "python3"  # the kernel the pages name
    target.mkdir(parents=True, exist_ok=True)
    (target / "kernel.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    return folder

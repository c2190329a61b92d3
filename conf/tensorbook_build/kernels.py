"""The kernels the pages execute in: Python kernels that talk over IPC, not TCP.

MyST-NB starts each page's kernel with jupyter_client, from the kernel spec named in
the page (``python3``). The build puts a spec of that name first on the kernels'
search path (:func:`write_kernel_spec`), the same command as ipykernel's own, whose
provisioner (:class:`IpcProvisioner`, registered under ``jupyter_client``'s
``kernel_provisioners`` entry points) moves the kernel's channels from TCP ports on
127.0.0.1 to Unix sockets in a private folder: nothing else on the machine can connect
to them, and the kernels no longer warn that their traffic is unencrypted.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from jupyter_client.provisioning import LocalProvisioner

__all__ = ["KERNEL_NAME", "PROVISIONER", "IpcProvisioner", "write_kernel_spec"]

KERNEL_NAME = "python3"
"""The kernel the pages name in their front matter."""
PROVISIONER = "tensorbook-ipc"
"""The provisioner's entry-point name (``pyproject.toml``)."""


class IpcProvisioner(LocalProvisioner):  # type: ignore[misc]
    """jupyter_client's local provisioner, with the kernel's channels on Unix sockets."""

    sockets: Path | None = None

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:  # noqa: ANN401 - jupyter_client's
        """Switch the kernel manager to IPC before it writes the connection file."""
        manager = self.parent
        if manager is not None and manager.transport != "ipc":
            # a short path: a Unix socket's is limited to about a hundred bytes
            self.sockets = Path(tempfile.mkdtemp(prefix="tb-kernel-"))
            manager.transport = "ipc"
            manager.ip = str(self.sockets / uuid.uuid4().hex[:8])
            manager.cache_ports = False
        return await super().pre_launch(**kwargs)

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
    (['python', '-m', 'ipykernel_launcher', '-f', '{connection_file}'], 'tensorbook-ipc')
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

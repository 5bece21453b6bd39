"""Jupyter kernels that meet their client over Unix sockets, not TCP ports.

jupyter_client gives a kernel its five TCP ports by binding port 0, reading the number and closing the
socket; the kernel binds the same ports a moment later. On a busy machine another program can take one
in between, and the kernel dies before it answers ("Kernel died before replying to kernel_info": a
fresh clone's CI lost chapter 9's notebook so, beside the browser tests' connections). With
``transport="ipc"`` the kernel binds socket files in a folder of this process's own instead: no port is
chosen, released and taken again (issue 49). nbval's kernels use it (the repository's conftest.py), as
do the seed lane's (``benchmarks/seed_claims.py``); JupyterLab's kernels get the same transport from its
``--KernelManager.transport=ipc`` (tests/test_jupyterlab.py). The tools that run one notebook alone on a
quiet machine (``tools/execute_notebooks.py``, ``benchmarks/chapter_times.py``) still use TCP ports.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import uuid
from pathlib import Path

from jupyter_client.manager import KernelManager

_folder: Path | None = None


def _sockets_folder() -> Path:
    """A short-named folder of this process's own for the socket files (a Unix socket's path is limited to
    107 bytes), removed when the process ends."""
    global _folder
    if _folder is None:
        _folder = Path(tempfile.mkdtemp(prefix="kernels-"))
        atexit.register(shutil.rmtree, _folder, ignore_errors=True)
    return _folder


class IpcKernelManager(KernelManager):
    """A ``KernelManager`` whose kernel listens on socket files (``<folder>/<id>-1`` to ``-5``) named
    uniquely in ``_sockets_folder()``; every other argument as ``KernelManager``'s."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(transport="ipc", ip=str(_sockets_folder() / uuid.uuid4().hex[:12]), **kwargs)

"""Loaded by pytest for every test it runs, the notebooks under nbval included (tests/conftest.py holds the
rest): nbval's kernels meet their client over Unix sockets, not TCP ports that another program can take
between jupyter_client's choice and the kernel's bind (tools/ipc_kernels.py)."""

import nbval.kernel

from tools.ipc_kernels import IpcKernelManager

nbval.kernel.KernelManager = IpcKernelManager  # nbval.kernel.start_new_kernel builds its kernels from this name

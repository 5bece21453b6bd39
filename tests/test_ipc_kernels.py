"""The notebooks' kernels meet their client over Unix sockets (tools/ipc_kernels.py, issue 49): no TCP port
is chosen, released and bound again, where another program could take it in between."""

from __future__ import annotations

from pathlib import Path

import nbval.kernel

from tools.ipc_kernels import IpcKernelManager


def test_nbvals_kernels_listen_on_socket_files_not_tcp_ports(tmp_path) -> None:
    kernel = nbval.kernel.RunningKernel(":nbval-parent-env", cwd=str(tmp_path))  # as nbval starts each notebook's
    try:
        assert isinstance(kernel.km, IpcKernelManager) and kernel.km.transport == "ipc"
        info = kernel.km.get_connection_info()
        files = [f"{info['ip']}-{info[name]}" for name in ("shell_port", "iopub_port", "stdin_port", "hb_port",
                                                          "control_port")]
        assert all(Path(file).is_socket() for file in files), files  # the kernel bound its five channels' files
        kernel.execute_cell_input("40 + 2", allow_stdin=False)
        reply = kernel.get_message(stream="shell", timeout=60)
        assert reply["content"]["status"] == "ok"
    finally:
        kernel.stop()

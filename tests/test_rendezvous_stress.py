"""Process groups meeting while the machine is busy with other sockets: no run may find its meeting
place taken (issue 49: a fresh clone's CI failed with EADDRINUSE when the appendix's demo, which
chose a free port, released it and bound it again seconds later, met the distributed tests).

At once: the whole distributed test module (kept stores, ``torchrun --standalone``, the launcher);
beside it, three rounds of the appendix's demo four times at once (two processes each, meeting through
a file), the first ending while the module still runs; and a thread that holds thousands of
ports and keeps taking new ones, as the other programs of a very busy machine do. A port chosen and
then released is taken by that thread in the meantime about one time in four; a meeting place held
from the start never is. (With the demo's old free-port helper put back, the first round failed:
EADDRINUSE in two of its four demos.)

All of it runs in a network of its own (``unshare --net``, its loopback brought up), so that the
ports it takes are nobody else's: the main run beside it opens servers and connections of its own
(its Jupyter kernels meet over socket files, tools/ipc_kernels.py, not ports). That network has no
name service, so torch's C++ warning that it cannot name a client socket is silenced there
(``TORCH_CPP_LOG_LEVEL=ERROR``): the module's tests count the lines a command writes.

Minutes long: ``tools/test.sh`` runs it (``-m stress``) in the lane beside the main run, and leaves
``tests/test_distributed.py`` out of the main run, since this runs it. Run as a script, it is the
driver, inside the network the test made.
"""

from __future__ import annotations

import collections
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROUNDS, DEMOS = 3, 4
DEMO = ("from transformer_lib.train.demo import gradient_averaging\n"
        "r = gradient_averaging()\n"
        "assert all((d - r.full_batch).abs().max() < 1e-12 for d in r.ddp), 'DDP differs from the full batch'\n")
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT), "TORCH_CPP_LOG_LEVEL": "ERROR"}


class PortTaker(threading.Thread):
    """Holds ``held`` ports of 127.0.0.1 that the system gives it, and every ``every_s`` seconds lets the
    oldest ``turnover`` go and takes as many new ones; until stopped, and at most ``limit_s`` seconds. A
    port released by someone else is then held here at any later instant with a chance of about
    ``held`` / (ports the system hands out), a quarter or so. Counts what it took."""

    def __init__(self, held: int = 4000, turnover: int = 200, every_s: float = 0.1, limit_s: float = 1800) -> None:
        super().__init__(daemon=True)
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        self.held, self.turnover = min(held, soft // 4), turnover  # leave the processes most of the files
        self.every_s, self.limit_s = every_s, limit_s
        self.taken = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        deadline = time.monotonic() + self.limit_s
        sockets: collections.deque[socket.socket] = collections.deque()
        try:
            while not self.stopping.is_set() and time.monotonic() < deadline:
                while len(sockets) > self.held - self.turnover:
                    sockets.popleft().close()
                while len(sockets) < self.held:
                    s = socket.socket()
                    sockets.append(s)
                    s.bind(("127.0.0.1", 0))
                    s.listen()
                    self.taken += 1
                self.stopping.wait(self.every_s)
        finally:
            for s in sockets:
                s.close()

    def stop(self) -> None:
        self.stopping.set()
        self.join()


def drive(folder: Path) -> dict[str, object]:
    """The module beside rounds of demos and the port taker (see the module's docstring); what happened."""
    taker = PortTaker()
    taker.start()
    rounds, failures, log = [], [], folder / "module.log"
    module = None
    try:
        with log.open("w") as out:  # a file, not a pipe that nobody reads while the demos run
            module = subprocess.Popen([sys.executable, "-m", "pytest", "tests/test_distributed.py", "-q", "-p",
                                       "no:cacheprovider", "--basetemp", str(folder / "module")], env=ENV, cwd=ROOT,
                                      stdout=out, stderr=subprocess.STDOUT)
        while not failures and len(rounds) < ROUNDS:
            demos = [subprocess.Popen([sys.executable, "-c", DEMO], env=ENV, cwd=folder, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True) for _ in range(DEMOS)]
            outputs = [demo.communicate(timeout=600)[0] for demo in demos]
            failures = [f"round {len(rounds) + 1}, demo {i}: {out[-1500:]}"
                        for i, (demo, out) in enumerate(zip(demos, outputs, strict=True)) if demo.returncode != 0]
            rounds.append(module.poll() is None)  # whether the module was still running at the end of the round
        if not failures:
            module.wait(timeout=1800)
    finally:
        taker.stop()
        if module is not None and module.poll() is None:
            module.kill()
            module.wait()
    return {"rounds": rounds, "demo_failures": failures, "module_status": module.returncode,
            "module_tail": log.read_text()[-4000:], "ports_taken": taker.taken, "ports_held": taker.held}


@pytest.mark.stress
def test_process_groups_meet_beside_each_other_and_a_busy_machine(tmp_path):
    missing = [tool for tool in ("unshare", "ip") if shutil.which(tool) is None]
    assert not missing, f"needs {missing} (Debian's util-linux and iproute2) to make the test's own network"
    inner = f"ip link set lo up && exec {sys.executable} {Path(__file__).resolve()} {tmp_path}"
    run = subprocess.run(["unshare", "--net", "--map-root-user", "sh", "-c", inner], cwd=ROOT, capture_output=True,
                         text=True, timeout=3600)
    assert run.returncode == 0 and run.stdout.strip(), f"the driver failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}"
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert not result["demo_failures"], "\n".join(result["demo_failures"])
    assert result["module_status"] == 0, result["module_tail"]
    assert " passed" in result["module_tail"] and " failed" not in result["module_tail"], result["module_tail"]
    assert len(result["rounds"]) == ROUNDS and result["rounds"][0], \
        f"the demos did not run beside the module: {result['rounds']}"
    assert result["ports_taken"] > 2 * result["ports_held"]  # the busy machine did take ports all along


if __name__ == "__main__":  # the driver, inside the network the test made
    with tempfile.TemporaryDirectory(dir=sys.argv[1] if len(sys.argv) > 1 else None) as scratch:
        print(json.dumps(drive(Path(scratch))))

"""Process groups meeting while the machine is busy with other sockets: no run may find its meeting
place taken (issue 49: a fresh clone's CI failed with EADDRINUSE when the appendix's demo, which
chose a free port, released it and bound it again seconds later, met the distributed tests).

At once: the whole distributed test module (kept stores, ``torchrun --standalone``, the launcher);
beside it, rounds of the appendix's demo four times at once (two processes each, meeting through a
file), at least three rounds and until the module is done; and a thread that keeps taking ports from
the system and holding them, as the other programs of a busy machine do. A port chosen and then
released would be taken by that thread within seconds; a meeting place held from the start cannot be.

Minutes long: ``tools/test.sh`` runs it (``-m stress``) in the lane beside the main run, and leaves
``tests/test_distributed.py`` out of the main run, since this runs it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MIN_ROUNDS, DEMOS = 3, 4
DEMO = ("from transformer_lib.train.demo import gradient_averaging\n"
        "r = gradient_averaging()\n"
        "assert all((d - r.full_batch).abs().max() < 1e-12 for d in r.ddp), 'DDP differs from the full batch'\n")
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}


class PortTaker(threading.Thread):
    """Takes ports from the system on 127.0.0.1, ``batch`` at a time, holds them for ``hold_s`` seconds,
    and lets them go; until stopped, and at most ``limit_s`` seconds. Counts what it took."""

    def __init__(self, batch: int = 200, hold_s: float = 0.2, limit_s: float = 900) -> None:
        super().__init__(daemon=True)
        self.batch, self.hold_s, self.limit_s = batch, hold_s, limit_s
        self.taken = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        deadline = time.monotonic() + self.limit_s
        while not self.stopping.is_set() and time.monotonic() < deadline:
            held = []
            try:
                for _ in range(self.batch):
                    s = socket.socket()
                    held.append(s)
                    s.bind(("127.0.0.1", 0))
                    s.listen()
                    self.taken += 1
                self.stopping.wait(self.hold_s)
            finally:
                for s in held:
                    s.close()

    def stop(self) -> None:
        self.stopping.set()
        self.join()


@pytest.mark.stress
def test_process_groups_meet_beside_each_other_and_a_busy_machine(tmp_path):
    taker = PortTaker()
    taker.start()
    rounds, log = [], tmp_path / "module.log"
    module = None
    try:
        with log.open("w") as out:  # a file, not a pipe that nobody reads while the demos run
            module = subprocess.Popen([sys.executable, "-m", "pytest", "tests/test_distributed.py", "-q", "-p",
                                       "no:cacheprovider", "--basetemp", str(tmp_path / "module")], env=ENV, cwd=ROOT,
                                      stdout=out, stderr=subprocess.STDOUT)
        while len(rounds) < MIN_ROUNDS or module.poll() is None:
            demos = [subprocess.Popen([sys.executable, "-c", DEMO], env=ENV, cwd=tmp_path, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True) for _ in range(DEMOS)]
            outputs = [demo.communicate(timeout=600)[0] for demo in demos]
            failed = [f"demo {i}: {out[-2000:]}" for i, (demo, out) in enumerate(zip(demos, outputs, strict=True))
                      if demo.returncode != 0]
            assert not failed, f"round {len(rounds) + 1}:\n" + "\n".join(failed)
            rounds.append(module.poll() is None)  # whether the module was still running at the end of the round
        module.wait(timeout=900)
    finally:
        taker.stop()
        if module is not None and module.poll() is None:
            module.kill()
            module.wait()
    module_output = log.read_text()
    assert module.returncode == 0, module_output[-5000:]
    assert " passed" in module_output and " failed" not in module_output, module_output[-500:]
    assert rounds[0], "the module ended before the first round of demos: they did not run beside it"
    assert taker.taken > 10 * taker.batch  # the busy machine did take ports all along

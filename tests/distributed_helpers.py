"""Helpers of tests/test_distributed.py: run the training command in several processes, and make
one of them fail.

``worker`` runs under ``torch.multiprocessing`` with the environment ``torchrun`` would give.
Run as a script under ``torchrun`` (``torchrun ... tests/distributed_helpers.py raise 3 -- ARGS``),
it runs the command with the library's ``training_step`` replaced, on rank 1 only, by one that
raises (``raise``), raises and then takes long to end (``linger``: as a loaded machine can make a
process's teardown slow, so that the others' failures reach the launcher first and it stops this
one), or kills its own process (``kill``, as an out-of-memory killer would) at the given step
(counted from the start of this launch); ``kill_busy`` as ``kill`` while rank 0 is busy outside any
collective at that step, so that the launcher stops it with SIGTERM before it can notice the loss.
"""

import gc
import os
import signal
import sys
import time
import traceback


def worker(rank: int, world_size: int, runs: list[tuple[int, list[str]]]) -> None:
    """Run the command once per (port, argv) of ``runs``, as process ``rank`` of ``world_size``:
    each run meets at a store the parent holds open on ``port``, which every process joins as a
    client, as under torchrun (``TORCHELASTIC_USE_AGENT_STORE``: the launcher's store, not rank 0's)."""
    import torch

    from transformer_lib.train.cli import main

    torch.set_num_threads(1)
    for port, argv in runs:
        os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size),
                          MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), TORCHELASTIC_USE_AGENT_STORE="True")
        status = main(argv)
        if status != 0:
            raise SystemExit(status)


def _faulty_run(kind: str, at_step: int, argv: list[str]) -> int:
    from transformer_lib.train import run
    from transformer_lib.train.cli import main

    real_step, calls = run.training_step, []

    def step(*args, **kwargs):
        calls.append(1)
        if kind == "kill_busy" and os.environ["RANK"] == "0" and len(calls) == at_step:
            time.sleep(600)  # busy outside any collective: only the launcher's SIGTERM ends it
        if os.environ["RANK"] == "1" and len(calls) == at_step:
            if kind in ("kill", "kill_busy"):
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError(f"injected failure at step {at_step}")
        return real_step(*args, **kwargs)

    run.training_step = step
    return main(argv)


if __name__ == "__main__":
    from transformer_lib.train.stops import exit_with

    kind, at_step, separator, *command = sys.argv[1:]
    assert kind in ("raise", "linger", "kill", "kill_busy") and separator == "--"
    try:
        # as the command's own __main__: a rank the launcher stopped dies of SIGTERM, once it has said where
        # it stopped (a plain exit would be status 143, which the launcher would name as a cause)
        exit_with(_faulty_run(kind, int(at_step), command))
    except RuntimeError as error:
        if kind != "linger":
            raise
        traceback.print_exception(error)  # as Python would, before a slow teardown
    gc.collect()  # the failed run's frames are let go, and with them its connections: the peer fails
    time.sleep(600)  # a teardown that the launcher ends with SIGTERM

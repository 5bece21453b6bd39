"""How a run of the command ends when it does not finish: stopped by a signal, or left alone by a
process that died.

* SIGTERM (how ``torchrun``, a scheduler or ``kill`` stop a process) and SIGINT (Ctrl-C) end the
  run through its ``finally`` blocks (a save in progress removes its temporary file), and rank 0
  prints one line: the step the checkpoint holds and the command that goes on from it. The exit
  status is the shell's for a signal, 128 + its number (143, 130).
* A process whose peer died (killed outright by SIGKILL, an out-of-memory killer) fails in its next
  collective with the transport's "Connection closed by peer". That process is not the cause: it
  says which process is gone and exits with ``PEER_LOST_STATUS``, which the launcher
  (``launch``) leaves out of its line, as it does the processes it stopped itself.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

PROG = "python -m transformer_lib.train"
PEER_LOST_STATUS = 3
# Set by ``launch`` for its processes: a stopped run names the launcher's command to go on with.
LAUNCHER_ENV = "TRANSFORMER_LIB_TRAIN_LAUNCH"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
# What Gloo's TCP transport (and NCCL's) say when the process at the other end is gone.
PEER_LOST_MARKS = ("closed by peer", "reset by peer", "Broken pipe", "remote process exited")


_received: list[int] = []  # the stop signals this run received


class Stopped(BaseException):
    """Raised in the main thread by SIGTERM or SIGINT (a BaseException, as KeyboardInterrupt: no
    ``except Exception`` of the run swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def stop_signals_raise() -> Iterator[None]:
    """While the command runs, SIGTERM and SIGINT raise ``Stopped``; the handlers before are put
    back after (the tests run the command inside pytest). Signal handlers belong to the main thread:
    elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_stopped(signum: int, frame: object) -> None:
        _received.append(signum)
        raise Stopped(signum)

    _received.clear()
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    for signum in STOP_SIGNALS:
        signal.signal(signum, raise_stopped)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def stop_received() -> bool:
    """Whether a stop signal came (a collective broken by the stop of another process may raise first)."""
    return bool(_received)


def signal_of(error: BaseException) -> int | None:
    """The signal that stopped the run, if ``error`` is (or was raised while handling) a stop."""
    if _received:
        return _received[0]
    while error is not None:
        if isinstance(error, Stopped):
            return error.signum
        if isinstance(error, KeyboardInterrupt):
            return int(signal.SIGINT)
        error = error.__context__
    return None


def report_stop(signum: int, args: argparse.Namespace | None, checkpoint: str) -> int:
    """Rank 0's one line for a stopped run (the other ranks stay silent); the exit status."""
    from .run import UsageError, stored_training

    name = signal.Signals(signum).name
    if os.environ.get("RANK", "0") == "0":
        line = f"{PROG}: stopped by {name} before the run began; nothing was changed"
        if args is not None:
            out = Path(args.out).resolve()
            line = (f"{PROG}: stopped by {name}; nothing saved in {out} yet (the first checkpoint comes at step "
                    f"{min(args.save_every, args.steps)}); run the same command again to start over")
            for folder in (out, None if args.resume is None else Path(args.resume).resolve()):
                if folder is not None and (folder / checkpoint).is_file():
                    try:
                        step = int(stored_training(folder / checkpoint)["step"])
                    except UsageError:
                        continue
                    line = (f"{PROG}: stopped by {name}; {folder / checkpoint} holds step {step} of {args.steps}; "
                            f"go on with: {go_on_command(folder, out)}")
                    break
        print(line, file=sys.stderr, flush=True)
    return 128 + signum


def exit_with(status: int) -> None:
    """End the process with ``status`` (``main``'s); a stopped run dies of its signal once it has said
    where it stopped, as a process that did not catch it would: a shell, ``torchrun`` and the
    launcher then see the signal (``torchrun``'s summary: ``exitcode -15 (SIGTERM)``), not a status."""
    signum = status - 128
    if signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    raise SystemExit(status)


def go_on_command(folder: Path, out: Path) -> str:
    """The command that resumes from ``folder``'s checkpoint into ``out``, with the launcher this
    run was started by (``torchrun``, ``launch``, or none), from any working directory."""
    flags = f"--resume {shlex.quote(str(folder))}" + ("" if folder == out else f" --out {shlex.quote(str(out))}")
    if "WORLD_SIZE" not in os.environ:
        return f"{PROG} {flags}"
    local = os.environ.get("LOCAL_WORLD_SIZE", os.environ["WORLD_SIZE"])
    if os.environ.get(LAUNCHER_ENV):
        return f"{PROG}.launch --nproc-per-node {local} {flags}"
    if local != os.environ["WORLD_SIZE"]:  # several machines: their own torchrun flags, which only the user knows
        return f"torchrun (with this run's flags) -m transformer_lib.train {flags}"
    return f"torchrun --standalone --nproc_per_node {local} -m transformer_lib.train {flags}"


def lost_a_peer(error: BaseException, world_size: int) -> bool:
    """Whether ``error`` is a collective's failure because another process is gone."""
    return world_size > 1 and isinstance(error, RuntimeError) and any(m in str(error) for m in PEER_LOST_MARKS)


def record_failure(error: BaseException) -> None:
    """Write ``error`` (inside its ``except``) where ``torchrun``'s agent reads a process's own failure,
    the file named by ``TORCHELASTIC_ERROR_FILE`` (nothing without a launcher). Written before this
    process closes its connections, it names this process as the cause whatever reaches the launcher
    first: on a loaded machine the peer's failure can, and the launcher then stops this process as it
    ends."""
    from torch.distributed.elastic.multiprocessing.errors import ErrorHandler

    ErrorHandler().record_exception(error)


def report_lost_peer(error: BaseException, rank: int, world_size: int) -> int:
    """The one line of a process whose peer died, naming that one as the cause; the exit status."""
    gone = f"rank {1 - rank}" if world_size == 2 else "another process"
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    print(f"{PROG}: rank {rank} stopped because {gone} ended first ({type(error).__name__}: {first}); "
          f"the cause is {gone}: its error, or the launcher's line, says how it ended", file=sys.stderr, flush=True)
    return PEER_LOST_STATUS

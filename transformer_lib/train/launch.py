"""``python -m transformer_lib.train.launch --nproc-per-node N ...``: ``torchrun`` for this command,
passing a process's exit status on.

It starts the same processes as ``torchrun --standalone --nproc_per_node N -m transformer_lib.train ...``
(``torch.distributed``'s own launcher, on this machine, meeting at a store it keeps open on a port the
system gives it, ``localhost:0``: no port is chosen and released), and differs in what it does
when a process fails. ``torchrun`` exits with status 1 whatever the status of the failed process,
after a traceback and a summary, some 35 lines (it re-raises ``ChildFailedError``). Here:

* a bad flag: the one line and status 2 before any process starts (the flags are checked here as
  each process checks them);
* a usage or data error in the processes (a process exits with status 2, after rank 0 printed the
  one line: a data file's error is met only as the processes read it): exit status 2, and nothing
  more is printed;
* any other failure (an exception, a signal): exit status 1, and one line naming each rank that
  failed and how, earliest first (their own errors are above it). A process that failed only
  because another died first (``stops.PEER_LOST_STATUS``) is not named: the one that died is. A
  process that raised is named for its error, which it wrote before its connections closed
  (``stops.record_failure``), even if the launcher had to stop it as it ended;
* this launcher stopped (SIGTERM, Ctrl-C): it stops the processes with the same signal, rank 0
  prints the one line of ``stops`` (the step its checkpoint holds, the command that goes on), and the
  exit status is 128 + the signal's number.

Every flag other than ``--nproc-per-node`` is the command's (``python -m transformer_lib.train --help``).
``torch.distributed.elastic``'s log lines are silenced unless ``LOGLEVEL`` is set, as for ``torchrun``.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import uuid
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from . import cli
from .stops import LAUNCHER_ENV, PEER_LOST_STATUS

if TYPE_CHECKING:
    from torch.distributed.elastic.multiprocessing.errors import ProcessFailure

PROG = "python -m transformer_lib.train.launch"
COMMAND = ("-m", "transformer_lib.train")
USAGE_STATUS = 2  # cli.usage_error's: a usage or data error, already printed by the process


def launch(nproc_per_node: int, command: Sequence[str]) -> int:
    """Run ``python -u COMMAND`` in ``nproc_per_node`` processes, as ``torchrun`` would (the
    environment of ``distributed.start``); the exit status: 0, 2 (a usage or data error) or 1."""
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    if nproc_per_node > 1:
        os.environ.setdefault("OMP_NUM_THREADS", "1")  # as torchrun: one thread per process unless told
    os.environ[LAUNCHER_ENV] = "1"  # a stopped process names this launcher in the command that goes on
    config = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=nproc_per_node, run_id=str(uuid.uuid4()),
                          rdzv_backend="c10d", rdzv_endpoint="localhost:0", max_restarts=0)
    try:
        with _quiet_elastic_logs():
            elastic_launch(config, sys.executable)("-u", *command)
    except ChildFailedError as error:
        return _report(error.failures)
    except SignalException as error:  # this launcher was stopped (Ctrl-C, SIGTERM): it stopped the processes,
        return 128 + int(error.sigval)  # with the same signal, and rank 0 said where the run stopped
    return 0


def _report(failures: dict[int, ProcessFailure]) -> int:
    """The exit status for the failed processes (rank: failure), and one line unless it is a usage error.

    ``failures`` also holds the processes the launcher stopped itself, with SIGTERM, once one had
    failed: those are left out, unless they wrote their own error first or SIGTERM is all there is
    (then someone else sent it). A usage or data error (status 2) was printed by the process that
    met it. Otherwise every rank that failed of itself is named, earliest first: a crash in one
    process makes the others fail in their next collective, often within the same second (the
    resolution of the launcher's times)."""
    not_a_cause = (-signal.SIGTERM, PEER_LOST_STATUS)
    own = {rank: failure for rank, failure in failures.items()
           if _own_error(failure) is not None or failure.exitcode not in not_a_cause} or failures
    if all(failure.exitcode == USAGE_STATUS for failure in own.values()):
        return USAGE_STATUS
    ranked = sorted(own.items(), key=lambda item: (item[1].timestamp, item[0]))
    named = ", ".join(f"rank {rank} {_how(failure)}" for rank, failure in ranked)
    print(f"{PROG}: error: {named}; any other process was stopped (the errors are above)", file=sys.stderr,
          flush=True)
    return 1


def _own_error(failure: ProcessFailure) -> str | None:
    """The error the process wrote itself before it ended (``stops.record_failure``, in the format of
    ``torchrun``'s ``ErrorHandler``, which the agent read into ``error_file_data``), if it did."""
    written = failure.error_file_data.get("message")
    return str(written["message"]).strip().splitlines()[0] if isinstance(written, dict) else None


def _how(failure: ProcessFailure) -> str:
    """How one process failed: its own error if it wrote one (then its end, a status or the launcher's
    SIGTERM, says nothing more), else its exit status or signal."""
    if (error := _own_error(failure)) is not None:
        return f"failed: {error}"
    if failure.exitcode < 0:
        return f"was stopped by signal {failure.signal_name()}"
    return f"exited with status {failure.exitcode}"


@contextlib.contextmanager
def _quiet_elastic_logs() -> Iterator[None]:
    """Silence ``torch.distributed.elastic``'s log lines, unless ``LOGLEVEL`` asks for them."""
    logger, handler = logging.getLogger("torch.distributed.elastic"), logging.NullHandler()
    propagate = logger.propagate
    if "LOGLEVEL" not in os.environ:
        logger.propagate = False
        logger.addHandler(handler)
    try:
        yield
    finally:
        logger.propagate = propagate
        logger.removeHandler(handler)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, as the command's own errors
        print(f"{PROG}: error: {message} (see --help)", file=sys.stderr, flush=True)
        self.exit(USAGE_STATUS)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, allow_abbrev=False,
                usage=f"{PROG} --nproc-per-node N [flags of python -m transformer_lib.train]",
                description="Start N processes of `python -m transformer_lib.train` on this machine, as "
                            "torchrun does, and exit with status 2 after a usage or data error (one line, "
                            "from rank 0), 1 after any other failure (one line naming the rank).")
    p.add_argument("--nproc-per-node", type=cli.positive(int), required=True, metavar="N",
                   help="processes to start (one per GPU; on CPU, any number)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args, command = parser().parse_known_args(argv)
    # The command's flags checked here first, as each process will check them: a mistake is its one line
    # and status 2 at once, before any process starts (each would import torch and meet the same error).
    cli.parse(command)
    return launch(args.nproc_per_node, [*COMMAND, *command])


if __name__ == "__main__":
    raise SystemExit(main())

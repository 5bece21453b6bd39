"""A helper of tests/test_train_command.py: the training command with a signal sent at a given step.

    python tests/train_command_helpers.py SIGNAL WHOM RANK STEP -- FLAGS

runs ``python -m transformer_lib.train FLAGS`` (alone, or as one process of ``torchrun`` or the
launcher) and, in process ``RANK``, just before its ``STEP``-th training step, sends ``SIGNAL``
(SIGTERM, SIGINT, SIGKILL) to ``WHOM``: ``self`` (as ``kill PID`` or the out-of-memory killer would),
or ``parent`` (the launcher: as ``kill`` of ``torchrun``'s process would). The run goes on until the
signal arrives, as it would with a signal from outside, but at a known step.
"""

import os
import signal
import sys


def _signalled_run(signum: int, whom: str, rank: str, at_step: int, argv: list[str]) -> int:
    from transformer_lib.train import run
    from transformer_lib.train.cli import main

    real_step, calls = run.training_step, []

    def step(*args, **kwargs):
        calls.append(1)
        if os.environ.get("RANK", "0") == rank and len(calls) == at_step:
            os.kill(os.getpid() if whom == "self" else os.getppid(), signum)
        return real_step(*args, **kwargs)

    run.training_step = step
    return main(argv)


if __name__ == "__main__":
    name, whom, rank, at_step, separator, *command = sys.argv[1:]
    assert whom in ("self", "parent") and separator == "--"
    from transformer_lib.train.stops import exit_with

    exit_with(_signalled_run(int(signal.Signals[name]), whom, rank, int(at_step), command))

"""``python -m transformer_lib.train`` as a user meets it, round 2: a run folder is never started
afresh without ``--overwrite``; a run resumes from any working directory and after its data moved;
every ``--out`` problem is one line before any work; a stop (SIGTERM, Ctrl-C) says which step the
checkpoint holds and what goes on, on one process and under both launchers; a rank killed outright
is named as the cause, not the survivor that lost it.

The multi-process runs meet through ``torchrun --standalone`` or the launcher (a rendezvous on port
0: no port is picked and released). Signals come at a known step (``train_command_helpers``)."""

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from transformer_lib.train.cli import main

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
HELPER = str(ROOT / "tests" / "train_command_helpers.py")
QUICK = ["--pairs", "100", "--batch-size", "16", "--log-every", "1", "--save-every", "2"]
TEXT = ["--bpe-merges", "50", "--batch-size", "4", "--log-every", "1", "--save-every", "1"]


def _status_and_err(capsys, argv: list[str]) -> tuple[int, list[str]]:
    try:
        status = main(argv)
    except SystemExit as stop:
        status = stop.code
    return status, capsys.readouterr().err.strip().splitlines()


def _one_line(capsys, argv: list[str]) -> str:
    status, lines = _status_and_err(capsys, argv)
    assert status == 2 and len(lines) == 1, (status, lines)
    assert lines[0].startswith("python -m transformer_lib.train: error: ")
    return lines[0]


def _step(folder: Path) -> int:
    return torch.load(folder / "checkpoint.pt", weights_only=True)["extra"]["training"]["step"]


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return torch.load(folder / "checkpoint.pt", weights_only=True)["state_dict"]


def _same_weights(a: Path, b: Path) -> bool:
    first, second = _weights(a), _weights(b)
    return first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)


def test_a_fresh_run_into_a_run_folder_is_refused_and_overwrite_starts_over(capsys, tmp_path):
    out = tmp_path / "run"
    assert main([*QUICK, "--steps", "2", "--out", str(out)]) == 0
    before = (out / "checkpoint.pt").read_bytes()
    line = _one_line(capsys, [*QUICK, "--steps", "3", "--out", str(out)])  # --resume forgotten
    assert f"--out: {out} holds a run's checkpoint at step 2; give --resume {out} to go on with it, or " \
           f"--overwrite (or another --out) to start over" in line
    assert (out / "checkpoint.pt").read_bytes() == before  # nothing was touched
    other = tmp_path / "other"  # a resume into another run's folder would lose that one too
    assert main([*QUICK, "--steps", "2", "--out", str(other)]) == 0
    assert f"--out: {other} holds a run's checkpoint at step 2" in _one_line(
        capsys, ["--resume", str(out), "--steps", "3", "--out", str(other)])
    assert main([*QUICK, "--steps", "1", "--out", str(out), "--overwrite"]) == 0  # asked for: a fresh run
    assert _step(out) == 1
    assert main(["--resume", str(out), "--steps", "3"]) == 0  # a resume needs no --overwrite
    assert _step(out) == 3


def test_resume_finds_its_data_from_another_directory_and_after_the_data_moved(capsys, tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    for suffix in ("en", "fr"):
        shutil.copy(ROOT / f"book/data/parallel20.{suffix}", data / f"p.{suffix}")
    monkeypatch.chdir(tmp_path)  # the run names its data relative to where it stands
    relative = ["--data-src", "data/p.en", "--data-tgt", "data/p.fr"]
    assert main([*relative, *TEXT, "--steps", "2", "--out", "run"]) == 0
    assert main([*relative, *TEXT, "--steps", "4", "--out", "whole"]) == 0  # never stopped, for the comparison
    stored = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=True)["extra"]["training"]["args"]
    assert (stored["data_src"], stored["out"]) == (str(data / "p.en"), str(tmp_path / "run"))  # resolved

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["--resume", str(tmp_path / "run"), "--steps", "3"]) == 0
    assert _step(tmp_path / "run") == 3

    moved = tmp_path / "moved"
    data.rename(moved)
    line = _one_line(capsys, ["--resume", str(tmp_path / "run"), "--steps", "4"])
    assert f"--data-src: {data / 'p.en'}, named by the checkpoint {tmp_path / 'run' / 'checkpoint.pt'}, is gone; " \
           "give its new place with --data-src" in line
    changed = tmp_path / "changed"
    shutil.copytree(moved, changed)
    (changed / "p.fr").write_text((changed / "p.fr").read_text(encoding="utf-8").replace("chat", "chien"),
                                  encoding="utf-8")
    given = lambda folder: ["--data-src", str(folder / "p.en"), "--data-tgt", str(folder / "p.fr")]  # noqa: E731
    status, lines = _status_and_err(capsys, ["--resume", str(tmp_path / "run"), "--steps", "4", *given(changed)])
    assert status == 2 and len(lines) == 1 and "--resume: the data differ from those" in lines[0], lines

    assert main(["--resume", str(tmp_path / "run"), "--steps", "4", *given(moved)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("note: the data moved") == 1
    assert f"note: the data moved (--data-src was {data / 'p.en'}, --data-tgt was {data / 'p.fr'}); the files " \
           "given hold the same data (SHA-256 " in printed
    assert _step(tmp_path / "run") == 4
    assert _same_weights(tmp_path / "run", tmp_path / "whole")  # stopped twice, moved: as never stopped


def test_each_out_problem_is_one_line_before_any_work(capsys, tmp_path):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("a file, not a folder\n")
    for out, message in ((a_file / "run", f"--out: {a_file / 'run'} is under a file, {a_file}; expected a folder"),
                         (a_file / "deeper" / "run", f"is under a file, {a_file}; expected a folder"),
                         (Path("/proc/no/run"), "--out: /proc/no/run: cannot write in /proc (")):
        assert message in _one_line(capsys, [*QUICK, "--steps", "1", "--out", str(out)])
    assert sorted(tmp_path.iterdir()) == [a_file]  # nothing made, not even the probe's folder


def test_out_under_a_file_through_the_launcher_is_one_line_and_status_2(tmp_path):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("a file, not a folder\n")
    launch = subprocess.run([sys.executable, "-m", "transformer_lib.train.launch", "--nproc-per-node", "2", *QUICK,
                             "--steps", "1", "--out", str(a_file / "run")],
                            env=ENV, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert launch.returncode == 2 and launch.stdout == ""
    assert launch.stderr.splitlines() == [f"python -m transformer_lib.train: error: --out: {a_file / 'run'} is under "
                                          f"a file, {a_file}; expected a folder (new, or of an earlier run) "
                                          "(see --help)"]


def _run(command: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(command, env=ENV, cwd=cwd, capture_output=True, text=True, timeout=300)


def _ours(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("python -m transformer_lib.train")]


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT"])
def test_a_stopped_run_says_in_one_line_where_it_stopped_and_its_command_goes_on(name, tmp_path):
    """One process, stopped before its 4th step (a checkpoint every 2): one line, then it dies of the
    signal; the command it names, run from another folder, ends as a run never stopped."""
    out = tmp_path / "run"
    stopped = _run([sys.executable, HELPER, name, "self", "0", "4", "--", *QUICK, "--dropout", "0.2", "--steps", "6",
                    "--out", str(out)])
    assert stopped.returncode == -signal.Signals[name]  # it dies of the signal, having said where it stopped
    assert _step(out) == 2 and list(out.glob(".*.tmp")) == []
    command = f"python -m transformer_lib.train --resume {out}"
    assert stopped.stderr.splitlines() == [f"python -m transformer_lib.train: stopped by {name}; "
                                           f"{out / 'checkpoint.pt'} holds step 2 of 6; go on with: {command}"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    resumed = _run([sys.executable, *shlex.split(command)[1:]], cwd=elsewhere)
    assert resumed.returncode == 0, resumed.stderr
    assert main([*QUICK, "--dropout", "0.2", "--steps", "6", "--out", str(tmp_path / "whole")]) == 0
    assert _step(out) == 6 and _same_weights(out, tmp_path / "whole")


def test_a_stop_before_the_first_checkpoint_says_nothing_was_saved(tmp_path):
    stopped = _run([sys.executable, HELPER, "SIGTERM", "self", "0", "1", "--", *QUICK, "--steps", "6",
                    "--out", str(tmp_path / "run")])
    assert stopped.returncode == -signal.SIGTERM and not (tmp_path / "run" / "checkpoint.pt").exists()
    assert stopped.stderr.splitlines() == [f"python -m transformer_lib.train: stopped by SIGTERM; nothing saved in "
                                           f"{tmp_path / 'run'} yet (the first checkpoint comes at step 2); run the "
                                           "same command again to start over"]


TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]


def _launch(*args: str) -> subprocess.CompletedProcess:
    code = f"from transformer_lib.train.launch import launch; raise SystemExit(launch(2, {list(args)!r}))"
    return _run([sys.executable, "-c", code])


@pytest.mark.parametrize("launcher", ["torchrun", "launch"])
def test_a_launcher_stopped_by_sigterm_gets_one_line_from_rank_0(launcher, tmp_path):
    """The launcher's process gets SIGTERM (from rank 0, before its 4th step, as from ``kill``): it
    stops both processes, and rank 0 alone says where the run stopped and the command that goes on
    (torchrun adds its own traceback; the launcher nothing)."""
    out = tmp_path / "run"
    args = [HELPER, "SIGTERM", "parent", "0", "4", "--", *QUICK, "--steps", "6", "--out", str(out)]
    stopped = _run([*TORCHRUN, *args]) if launcher == "torchrun" else _launch(*args)
    step = _step(out)
    assert 2 <= step < 6
    again = ("torchrun --standalone --nproc_per_node 2 -m transformer_lib.train" if launcher == "torchrun"
             else "python -m transformer_lib.train.launch --nproc-per-node 2")
    assert _ours(stopped.stderr) == [f"python -m transformer_lib.train: stopped by SIGTERM; {out / 'checkpoint.pt'} "
                                     f"holds step {step} of 6; go on with: {again} --resume {out}"], stopped.stderr
    if launcher == "launch":
        assert stopped.returncode == 143 and stopped.stderr.splitlines() == _ours(stopped.stderr)
    else:
        assert stopped.returncode == 1 and "SignalException" in stopped.stderr  # torchrun's own traceback


@pytest.mark.parametrize("launcher", ["torchrun", "launch"])
def test_rank_0_killed_outright_is_named_as_the_cause_not_the_survivor(launcher, tmp_path):
    """Rank 0 SIGKILLs itself before its 4th step; rank 1's next collective fails ("Connection reset
    by peer"). Rank 1 names rank 0 and exits with status 3; the launcher names rank 0 alone. Under
    torchrun, a monitor interval of 5 s lets rank 1 meet the failure before torchrun stops it."""
    args = [HELPER, "SIGKILL", "self", "0", "4", "--", *QUICK, "--steps", "6", "--out", str(tmp_path / "run")]
    if launcher == "torchrun":
        failed = _run([*TORCHRUN[:3], "--monitor-interval", "5", *TORCHRUN[3:], *args])
    else:
        failed = _launch(*args)
    assert failed.returncode == 1
    assert "rank 1 failed" not in failed.stderr
    survivor = [line for line in _ours(failed.stderr) if line.startswith("python -m transformer_lib.train: rank 1")]
    if launcher == "torchrun":
        assert len(survivor) == 1 and survivor[0].startswith(
            "python -m transformer_lib.train: rank 1 stopped because rank 0 ended first (RuntimeError: "), failed.stderr
        assert survivor[0].endswith("; the cause is rank 0: its error, or the launcher's line, says how it ended")
        # torchrun's own summary: rank 0 killed (-9); rank 1 exited with 3 after its line, or, when torchrun's
        # monitor saw rank 0's death first (a loaded machine: CI's), was stopped by torchrun (-15) after it
        assert "exitcode  : -9 " in failed.stderr, failed.stderr
        assert re.search(r"  rank      : 1 .*\n  exitcode  : (3|-15) ", failed.stderr) or \
            "exitcode  : 3 " in failed.stderr, failed.stderr
    else:
        assert failed.stderr.splitlines()[-1] == ("python -m transformer_lib.train.launch: error: rank 0 was stopped "
                                                  "by signal SIGKILL; any other process was stopped (the errors are "
                                                  "above)"), failed.stderr
        assert all("rank 0 ended first" in line for line in survivor)


def test_translate_prints_the_unknown_words_as_typed_bpe_included_and_takes_a_checkpoint(tmp_path):
    from transformer_lib.checkpoint import load_checkpoint
    from transformer_lib.decoding import translate
    from transformer_lib.pretrained import book_model

    data = ["--data-src", str(ROOT / "book/data/parallel20.en"), "--data-tgt", str(ROOT / "book/data/parallel20.fr")]
    assert main([*data, *TEXT, "--steps", "1", "--out", str(tmp_path / "run")]) == 0
    checkpoint = load_checkpoint(tmp_path / "run")
    result = translate(checkpoint, "the zebra sleeps")  # no 'z' in this BPE's alphabet: a piece is unknown
    assert result.unknown_words == ["zebra"]
    assert result.src_ids == translate(checkpoint.model, "the zebra sleeps").src_ids
    assert str(result) == f"{result.text}\n(warning: not in the model's vocabulary, read as <unk>: 'zebra')"
    assert str(translate(checkpoint, "the cat")) == translate(checkpoint, "the cat").text  # nothing unknown

    shipped = book_model()  # a Checkpoint: taken as its model
    typed = translate(shipped, "The Small Cat Sees The Dog.")
    assert typed.unknown_words == ["The", "Small", "Cat", "Sees", "The", "Dog."]
    assert str(typed).endswith("\n(warning: not in the model's vocabulary, read as <unk>: 'The', 'Small', 'Cat', "
                               "'Sees', 'Dog.')")
    assert str(translate(shipped, "the small cat sees the dog")) == "le petit chat voit le chien"


def test_a_machine_with_fewer_gpus_than_processes_trains_them_all_on_the_cpu_and_says_so(monkeypatch):
    # Seen on a one-GPU machine (tools/gpu_check.sh): the appendix's two processes took cuda:0 and cuda:1,
    # and rank 1 failed with "invalid device ordinal". Each process must have a GPU, or none uses one.
    from transformer_lib.train.distributed import default_device, start

    assert [default_device(rank, 2, 2) for rank in (0, 1)] == ["cuda:0", "cuda:1"]
    assert [default_device(rank, 2, 1) for rank in (0, 1)] == ["cpu", "cpu"]
    assert default_device(0, 1, 0) == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    for key, value in {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "WORLD_SIZE": "1"}.items():
        monkeypatch.setenv(key, value)  # rank 1 of two on this machine; a world of one, so no group is joined
    processes = start(None, timeout_s=10)
    assert processes.device == torch.device("cpu")
    assert processes.note == "note: 2 processes on this machine and 1 GPU: all train on the CPU " \
                             "(one process a GPU: --nproc-per-node 1)"
    assert start("cpu", timeout_s=10).note is None  # asked for: nothing to explain

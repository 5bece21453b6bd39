"""``python -m transformer_lib.train`` on CPU, with 2 Gloo processes: DDP and FSDP2 against one
process on the same global batch, resume after a kill, failure with the rank named, bad
arguments and bad data. Small model, few steps; float64 so that the comparisons are tight."""

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp
from torch.distributed import TCPStore

from transformer_lib.train.cli import main, parse
from transformer_lib.train.data import load_vocab_file
from transformer_lib.vocabularies import Vocabularies

from .distributed_helpers import worker

ROOT = Path(__file__).resolve().parents[1]
EXACT = ["--preset", "book", "--pairs", "200", "--batch-size", "16", "--steps", "4", "--dtype", "float64",
         "--log-every", "2", "--save-every", "2"]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}


@contextlib.contextmanager
def _meeting_points(count: int) -> Iterator[list[int]]:
    """The ports of ``count`` stores that this process holds open while the processes it starts
    meet in them, as torchrun's launcher holds its store for its workers (the workers connect as
    clients: ``distributed_helpers.worker``). The system gives each store its port, and the store
    keeps it: no port is chosen, released, then bound again by someone who may find it taken."""
    stores = [TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False) for _ in range(count)]
    yield [store.port for store in stores]
    del stores


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return torch.load(folder / "checkpoint.pt", weights_only=True)["state_dict"]


def _training_state(folder: Path) -> dict:
    return torch.load(folder / "checkpoint.pt", weights_only=True)["extra"]["training"]


def _torchrun(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    # --standalone: torchrun's launcher opens its store on a port the system gives it, and keeps it
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", *args]
    return subprocess.run(command, env=ENV, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _launch(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m transformer_lib.train.launch --nproc-per-node 2 ARGS`` (ARGS: the command's flags)."""
    command = [sys.executable, "-m", "transformer_lib.train.launch", "--nproc-per-node", "2", *args]
    return subprocess.run(command, env=ENV, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _launch_script(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The launcher's processes running ``python -u ARGS`` (a script of the tests) instead of the command."""
    code = f"from transformer_lib.train.launch import launch; raise SystemExit(launch(2, {list(args)!r}))"
    return subprocess.run([sys.executable, "-c", code], env=ENV, cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One process, then DDP and FSDP2 on 2 processes, all on the same global batches; an
    uninterrupted 2-process DDP run with dropout for the resume test; FSDP2 for 6 steps, and
    resumed from its 4-step run to 6 steps."""
    root = tmp_path_factory.mktemp("runs")
    folders = {name: root / name for name in ("one", "ddp", "fsdp", "dropout", "fsdp6", "fsdp_resumed")}
    assert main([*EXACT, "--dropout", "0", "--out", str(folders["one"])]) == 0
    argvs = [[*EXACT, "--dropout", "0", "--strategy", "ddp", "--out", str(folders["ddp"])],
             [*EXACT, "--dropout", "0", "--strategy", "fsdp", "--out", str(folders["fsdp"])],
             [*EXACT, "--steps", "6", "--dropout", "0.2", "--out", str(folders["dropout"])],
             [*EXACT, "--steps", "6", "--dropout", "0", "--strategy", "fsdp", "--out", str(folders["fsdp6"])],
             [*EXACT, "--steps", "6", "--dropout", "0", "--strategy", "fsdp", "--resume", str(folders["fsdp"]),
              "--out", str(folders["fsdp_resumed"])]]
    with _meeting_points(len(argvs)) as ports:
        runs = list(zip(ports, argvs, strict=True))
        mp.start_processes(worker, args=(2, runs), nprocs=2, start_method="spawn", join=True)
    return folders


@pytest.mark.parametrize("strategy", ["ddp", "fsdp"])
def test_two_processes_equal_one_process_on_the_same_global_batch(runs, strategy):
    one, two = _weights(runs["one"]), _weights(runs[strategy])
    start = _weights_at_start()
    assert one.keys() == two.keys()
    assert all(value.dtype == torch.float64 for value in one.values())
    for key in one:
        torch.testing.assert_close(two[key], one[key], rtol=0, atol=1e-10, msg=lambda m, k=key: f"{k}: {m}")
    assert not all(torch.equal(one[key], start[key]) for key in one)  # it did train
    assert _training_state(runs[strategy])["world_size"] == 2 and _training_state(runs["one"])["world_size"] == 1


def test_the_commands_one_process_path_trains_as_training_train_on_the_same_batches(tmp_path, monkeypatch):
    """``torchrun --nproc_per_node 1 -m transformer_lib.train`` (world size 1: no process group) and
    ``training.train``, on the same global batches from the same initial weights, with the preset's
    dropout, over more than one epoch: the same weights, bit for bit."""
    from transformer_lib.config import TransformerConfig
    from transformer_lib.models import Transformer
    from transformer_lib.train.data import generated_text, global_batches
    from transformer_lib.training import TrainingOptions, train

    flags = ["--pairs", "100", "--batch-size", "16", "--steps", "7", "--warmup", "5", "--lr-scale", "2",
             "--label-smoothing", "0.2", "--seed", "3", "--log-every", "7", "--save-every", "7"]
    with _meeting_points(1) as (port,):
        for name, value in dict(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", LOCAL_WORLD_SIZE="1",
                                MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                                TORCHELASTIC_USE_AGENT_STORE="True").items():  # what torchrun gives its one process
            monkeypatch.setenv(name, value)
        assert main([*flags, "--out", str(tmp_path)]) == 0
    command = _weights(tmp_path)

    data = generated_text(3, 100)
    batches = global_batches(data, 16, seed=3, min_rows=1)  # those of the command
    assert len(batches) < 7  # a second epoch, in train's order of it
    config = TransformerConfig.preset("book", src_vocab_size=len(data.vocab), tgt_vocab_size=len(data.vocab))
    assert config.dropout > 0
    torch.manual_seed(3)
    model = Transformer(config)
    train(model, batches, TrainingOptions(steps=7, warmup=5, lr_scale=2.0, label_smoothing=0.2,
                                          pad_id=data.vocab.pad_id, seed=3, progress=False))
    trained = model.state_dict()
    assert trained.keys() == command.keys()
    assert all(value.dtype == torch.float32 for value in command.values())  # the command's default
    assert [key for key in trained if not torch.equal(trained[key], command[key])] == []
    start = _weights_at_start()
    assert not torch.equal(command["generator.weight"], start["generator.weight"])  # it did train


def _weights_at_start() -> dict[str, torch.Tensor]:
    from transformer_lib.train.data import generated_text
    from transformer_lib.train.run import build_model

    args = parse([*EXACT, "--dropout", "0", "--out", "unused"])
    torch.set_default_dtype(torch.float64)
    try:
        return build_model(args, len(generated_text(args.seed, args.pairs).vocab)).state_dict()
    finally:
        torch.set_default_dtype(torch.float32)


def test_one_rank_failing_stops_the_run_fast_with_its_rank_named_and_a_resume_ends_as_an_uninterrupted_run(
        runs, tmp_path):
    """Rank 1 raises at step 5; torchrun then kills rank 0, wherever it is. The checkpoint written
    before (atomically) lets the run go on, to the weights of a run never stopped, bit for bit."""
    args = [*EXACT, "--steps", "6", "--dropout", "0.2", "--timeout", "30", "--out", str(tmp_path)]
    failed = _torchrun("tests/distributed_helpers.py", "raise", "5", "--", *args)  # a hang: TimeoutExpired
    assert failed.returncode != 0
    assert "rank 1 failed: RuntimeError: injected failure at step 5" in failed.stderr
    assert "rank: 1" in failed.stderr  # torchrun's own summary names the first failed rank
    stopped_at = _training_state(tmp_path)["step"]
    assert 0 < stopped_at < 6  # a checkpoint from before the failure, not the end

    assert list(tmp_path.glob(".*.tmp")) == []  # a save stopped by torchrun's SIGTERM removed its file

    resumed = _launch("--resume", str(tmp_path))  # the options: the checkpoint's; through the launcher
    assert resumed.returncode == 0, resumed.stderr
    assert f"steps {stopped_at + 1}-6" in resumed.stdout
    assert resumed.stdout.count("note: each step takes a global batch of 16 pairs (8 per process), the same") == 1
    assert "dropout draws its masks in each process" in resumed.stdout
    after, uninterrupted = _weights(tmp_path), _weights(runs["dropout"])
    assert all(torch.equal(after[key], uninterrupted[key]) for key in after)  # dropout's masks included
    assert _training_state(tmp_path)["step"] == 6


def test_fsdp_resumed_from_its_sharded_checkpoint_ends_as_an_uninterrupted_run(runs):
    assert _training_state(runs["fsdp"])["step"] == 4
    resumed, uninterrupted = _weights(runs["fsdp_resumed"]), _weights(runs["fsdp6"])
    assert all(torch.equal(resumed[key], uninterrupted[key]) for key in resumed)
    assert not all(torch.equal(resumed[key], _weights(runs["fsdp"])[key]) for key in resumed)  # 2 more steps


def _error_line(capsys, argv: list[str]) -> str:
    """Run the command in this process; it must exit with status 2 and one line on stderr."""
    try:
        status = main(argv)
    except SystemExit as stop:
        status = stop.code
    assert status == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


# Each bad flag, and what its one line says; {tmp} is a fresh folder, {out} a folder that must not appear.
MISSING_GPU = f"cuda:{torch.cuda.device_count()}"  # one past the last GPU, or the first of none
BAD_FLAGS = {
    "steps": (["--steps", "0", "--out", "{out}"], "--steps: expected a positive int, got '0'"),
    "preset": (["--preset", "huge", "--out", "{out}"], "--preset: invalid choice: 'huge'"),
    "dropout": (["--dropout", "1.5", "--out", "{out}"], "--dropout: expected a number in [0, 1)"),
    "no out": (["--steps", "2"], "--out: needed"),
    "one file": (["--data-src", __file__, "--out", "{out}"], "give both files"),
    "resume": (["--resume", "{tmp}"], "--resume: no checkpoint.pt in"),
    "missing file": (["--data-src", __file__, "--data-tgt", "{tmp}/nope", "--out", "{out}"], "--data-tgt: no file"),
    "device": (["--device", "tpu", "--out", "{out}"],
               "--device: expected a device this machine has, such as 'cpu', got 'tpu'"),
    "gpu": (["--device", MISSING_GPU, "--out", "{out}"],
            f"--device: expected a device this machine has, such as 'cpu', got '{MISSING_GPU}'"),
    "out a file": (["--out", __file__], f"--out: {__file__} is a file; expected a folder"),
    "pairs": (["--pairs", "3", "--out", "{out}"],
              "--pairs: expected 10 to 200,000 pairs of the generated corpus, got 3"),
    "pairs high": (["--pairs", "200001", "--out", "{out}"], "got 200001"),
}


def _placed(items: list[str], **folders: object) -> list[str]:
    return [item.format(**folders) for item in items]


def test_bad_arguments_exit_2_with_one_line(capsys, tmp_path):
    for flags, message in BAD_FLAGS.values():
        assert message in _error_line(capsys, _placed(flags, tmp=tmp_path, out=tmp_path / "x"))
    assert not (tmp_path / "x").exists()  # nothing was done


def test_resume_takes_its_options_from_the_checkpoint_and_refuses_a_flag_that_disagrees(runs, capsys):
    one = runs["one"]  # 4 steps, batch 16, dropout 0
    args = parse(["--resume", str(one), "--steps", "6"])
    assert (args.batch_size, args.dropout, args.dtype, args.pairs, args.out) == (16, 0.0, "float64", 200, str(one))
    line = _error_line(capsys, ["--resume", str(one), "--steps", "6", "--batch-size", "8"])
    assert line.endswith(f"--batch-size 8: the checkpoint {one / 'checkpoint.pt'} was made with --batch-size 16 "
                         "(give the same, or leave --batch-size out) (see --help)")
    assert f"--steps 3: the checkpoint {one / 'checkpoint.pt'} has done 4 steps already" in _error_line(
        capsys, ["--resume", str(one), "--steps", "3"])
    assert f"--resume: the run in {one} is complete (4 of 4 steps); give --steps above 4" in _error_line(
        capsys, ["--resume", str(one)])
    assert parse(["--resume", str(one), "--steps", "6", "--batch-size", "16"]).batch_size == 16  # agreeing is fine


def _files(folder: Path, src: str, tgt: str | bytes) -> list[str]:
    (folder / "a.en").write_text(src, encoding="utf-8")
    (folder / "a.fr").write_bytes(tgt if isinstance(tgt, bytes) else tgt.encode("utf-8"))
    return ["--data-src", str(folder / "a.en"), "--data-tgt", str(folder / "a.fr"), "--out", str(folder / "run"),
            "--steps", "1", "--batch-size", "2"]


def test_plain_torchrun_prints_rank_0s_line_once_then_exits_1_with_its_own_summary(tmp_path):
    """What torchrun does with a process's status 2 (the README and the appendix say it; the launcher,
    python -m transformer_lib.train.launch, passes the 2 on instead): rank 0's line, once, then
    torchrun's own report: it stops the other process (SIGTERM), re-raises ChildFailedError (a
    traceback of torchrun's code, then a summary of every failed rank with its exitcode; the root
    cause: rank 0, exitcode 2) and exits with status 1, whatever the status of the process."""
    bad_flag = _torchrun("-m", "transformer_lib.train", "--pairs", "3", "--out", str(tmp_path / "run"))
    (tmp_path / "a.en").write_text("the cat\nthe dog\n", encoding="utf-8")
    (tmp_path / "a.fr").write_text("le chat\n", encoding="utf-8")
    bad_file = _torchrun("-m", "transformer_lib.train", "--data-src", str(tmp_path / "a.en"), "--data-tgt",
                         str(tmp_path / "a.fr"), "--out", str(tmp_path / "run"), "--steps", "1", "--batch-size", "2")
    for launch, message in ((bad_flag, "--pairs: expected 10 to 200,000 pairs"),
                            (bad_file, f"{tmp_path / 'a.en'} line 2: no matching line")):
        ours = [line for line in launch.stderr.splitlines() if line.startswith("python -m transformer_lib.train")]
        assert len(ours) == 1 and message in ours[0], launch.stderr
        assert f'File "{ROOT / "transformer_lib"}' not in launch.stderr  # no traceback from our processes
        assert launch.returncode == 1
        # the first rank to fail, named in torchrun's summary, with its status; the other one stopped by torchrun
        assert re.search(r"Root Cause \(first observed failure\):\n\[0\]:\n.*\n.*\n  rank      : 0 .*\n"
                         r"  exitcode  : 2 ", launch.stderr), launch.stderr
        assert re.search(r"  rank      : 1 .*\n  exitcode  : -15 .*\(SIGTERM\)", launch.stderr), launch.stderr
        assert "torch.distributed.elastic.multiprocessing.errors.ChildFailedError" in launch.stderr
        assert len(launch.stderr.splitlines()) > 30  # the line, then torchrun's traceback and summary
    assert not (tmp_path / "run").exists()


# Each bad data file (source text, target text, more flags), and what its one line says.
LONG = " ".join(["word"] * 70)
BAD_FILES = {
    "unmatched": ("the cat\nthe dog\nthe bird\n", "le chat\nle chien\n", [],
                  "{en} line 3: no matching line in {fr} (3 lines in {en}, 2 in {fr})"),
    "empty line": ("the cat\nthe dog\n", "le chat\n \n", [], "{fr} line 2: empty line"),
    "not UTF-8": ("a b\nc d\n", b"e f\n\xff\n", [], "{fr} line 2: not UTF-8 text"),
    "too long": (f"{LONG}\n", "court\n", ["--bpe-merges", "50"],
                 "{en} line 1: 70 tokens, but the model reads at most max_len=64"),
}


def test_bad_data_is_named_by_file_and_line(capsys, tmp_path):
    for src, tgt, flags, message in BAD_FILES.values():
        line = _error_line(capsys, _files(tmp_path, src, tgt) + flags)
        assert message.format(en=tmp_path / "a.en", fr=tmp_path / "a.fr") in line


def _one_line_and_exit_2(launch: subprocess.CompletedProcess, message: str) -> None:
    """The launcher's answer to a usage or data error: status 2, rank 0's line alone, nothing on stdout."""
    assert launch.returncode == 2, launch.stderr
    assert launch.stdout == ""
    line, *more = launch.stderr.strip().splitlines()
    assert more == [] and line.startswith("python -m transformer_lib.train: error: ") and message in line, \
        launch.stderr


@pytest.mark.parametrize("name", BAD_FLAGS)
def test_the_launcher_refuses_each_bad_flag_in_one_line_before_it_starts_a_process(name, tmp_path, capsys,
                                                                                   monkeypatch):
    from transformer_lib.train import launch

    started = []
    monkeypatch.setattr(launch, "launch", lambda *args: started.append(args) or 0)
    flags, message = BAD_FLAGS[name]
    with pytest.raises(SystemExit) as stop:
        launch.main(["--nproc-per-node", "2", *_placed(flags, tmp=tmp_path, out=tmp_path / "x")])
    assert stop.value.code == 2 and started == []
    out, err = capsys.readouterr()
    line, *more = err.strip().splitlines()
    assert out == "" and more == [] and line.startswith("python -m transformer_lib.train: error: ") and message in line
    assert not (tmp_path / "x").exists()


def test_through_the_launcher_a_bad_flag_is_one_line_and_exit_2(tmp_path):
    """The command itself, in its own process: status 2, the one line, nothing on stdout (every flag of
    ``BAD_FLAGS`` is refused so in this process, above)."""
    flags, message = BAD_FLAGS["pairs"]
    _one_line_and_exit_2(_launch(*_placed(flags, tmp=tmp_path, out=tmp_path / "x")), message)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("name", [*BAD_FILES, "cannot encode"])
def test_through_the_launcher_each_bad_file_is_one_line_and_exit_2(name, tmp_path, text_run):
    if name == "cannot encode":  # text the tokenizer of an earlier run (--vocab) has no symbol for
        src, tgt, flags = "the cat sleeps\nthe zebra sleeps\n", "le chat dort\nle zèbre dort\n", [
            "--vocab", str(text_run[0] / "vocab.json")]
        message = "{en} line 2: the tokenizer cannot encode 'z'"
    else:
        src, tgt, flags, message = BAD_FILES[name]
    launch = _launch(*_files(tmp_path, src, tgt), *flags)
    _one_line_and_exit_2(launch, message.format(en=tmp_path / "a.en", fr=tmp_path / "a.fr"))
    assert not (tmp_path / "run").exists()


def test_the_launchers_own_flag_is_checked_in_one_line(capsys):
    from transformer_lib.train import launch

    for argv, message in ((["--nproc-per-node", "0", "--out", "x"],
                           "argument --nproc-per-node: expected a positive int, got '0'"),
                          (["--out", "x"], "the following arguments are required: --nproc-per-node")):
        with pytest.raises(SystemExit) as stop:
            launch.main(argv)
        assert stop.value.code == 2
        assert capsys.readouterr().err == f"python -m transformer_lib.train.launch: error: {message} (see --help)\n"


RAISED = "failed: RuntimeError: injected failure at step 1"


@pytest.mark.parametrize("kind, how", [("raise", RAISED), ("linger", RAISED),
                                       ("kill", "was stopped by signal SIGKILL"),
                                       ("kill_busy", "was stopped by signal SIGKILL")])
def test_through_the_launcher_a_crash_is_exit_1_and_a_line_naming_the_rank(kind, how, tmp_path):
    """Rank 1 fails at its first step; rank 0 then fails in its collective, or is stopped. The
    launcher names every rank that failed, earliest first, in its one last line; no torchrun summary.
    A rank that raised is named for its error even when the launcher had to stop it as it ended
    (``linger``): on a loaded machine its teardown can end after its peer's failure reached the launcher.
    A rank the launcher stopped is not named, whether it noticed the loss first or was stopped busy
    (``kill_busy``: it says where it stopped and dies of SIGTERM, as the command does)."""
    launch = _launch_script("tests/distributed_helpers.py", kind, "1", "--", *EXACT, "--out", str(tmp_path))
    assert launch.returncode == 1, launch.stderr
    last = launch.stderr.strip().splitlines()[-1]
    assert last.startswith("python -m transformer_lib.train.launch: error: ") and f"rank 1 {how}" in last, last
    assert last.endswith("; any other process was stopped (the errors are above)")
    assert ("rank 1 failed: RuntimeError: injected failure at step 1" in launch.stderr) == (kind in ("raise", "linger"))
    assert "rank 0" not in last  # it stopped because rank 1 ended first: not a cause
    assert "Root Cause" not in launch.stderr and "ChildFailedError" not in launch.stderr


def test_the_launcher_names_each_failed_rank_earliest_first_and_passes_a_usage_error_on(tmp_path, monkeypatch):
    from torch.distributed.elastic.multiprocessing.errors import ProcessFailure

    from transformer_lib.train.launch import _report
    from transformer_lib.train.stops import PEER_LOST_STATUS, record_failure

    def failed(rank: int, status: int, at: int, error_file: str = "") -> ProcessFailure:
        failure = ProcessFailure(local_rank=rank, pid=100 + rank, exitcode=status, error_file=error_file)
        failure.timestamp = at
        return failure

    # Rank 1 raised and wrote its error, then was stopped by the launcher as it ended, after rank 0's
    # failure (its peer lost) had reached the launcher: rank 1 is named, for its error.
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(tmp_path / "error.json"))
    try:
        raise RuntimeError("boom\nsecond line")
    except RuntimeError as error:
        record_failure(error)
    buffer = io.StringIO()
    with contextlib.redirect_stderr(buffer):
        assert _report({0: failed(0, PEER_LOST_STATUS, 5),
                        1: failed(1, -signal.SIGTERM, 6, str(tmp_path / "error.json"))}) == 1
    assert buffer.getvalue() == ("python -m transformer_lib.train.launch: error: rank 1 failed: RuntimeError: boom; "
                                 "any other process was stopped (the errors are above)\n")

    assert _report({1: failed(1, 2, 5)}) == 2  # a usage error that only rank 1 met: it printed it, named
    assert _report({0: failed(0, 2, 5), 1: failed(1, -signal.SIGTERM, 5)}) == 2  # rank 1: stopped by the launcher
    buffer = io.StringIO()
    with contextlib.redirect_stderr(buffer):
        assert _report({0: failed(0, 1, 7), 1: failed(1, -9, 6), 2: failed(2, 2, 7), 3: failed(3, -15, 7)}) == 1
        assert _report({0: failed(0, -15, 7), 1: failed(1, -15, 7)}) == 1  # SIGTERM from someone else
    assert buffer.getvalue() == ("python -m transformer_lib.train.launch: error: rank 1 was stopped by signal SIGKILL, "
                                 "rank 0 exited with status 1, rank 2 exited with status 2; any other process was "
                                 "stopped (the errors are above)\n"
                                 "python -m transformer_lib.train.launch: error: rank 0 was stopped by signal SIGTERM, "
                                 "rank 1 was stopped by signal SIGTERM; any other process was "
                                 "stopped (the errors are above)\n")


def test_text_the_tokenizer_cannot_encode_is_named_and_a_vocab_file_is_reused(capsys, tmp_path):
    data = ["--data-src", str(ROOT / "book/data/parallel20.en"), "--data-tgt", str(ROOT / "book/data/parallel20.fr")]
    assert main([*data, "--steps", "1", "--batch-size", "4", "--bpe-merges", "100", "--out", str(tmp_path / "a")]) == 0
    vocab = tmp_path / "a" / "vocab.json"
    assert json.loads(vocab.read_text(encoding="utf-8"))["format"] == "transformer_lib.train.vocab"
    assert main([*data, "--steps", "1", "--batch-size", "4", "--vocab", str(vocab), "--out", str(tmp_path / "b")]) == 0
    assert (tmp_path / "b" / "vocab.json").read_text(encoding="utf-8") == vocab.read_text(encoding="utf-8")
    capsys.readouterr()
    args = _files(tmp_path, "the cat sleeps\nthe zebra sleeps\n", "le chat dort\nle zèbre dort\n")
    line = _error_line(capsys, [*args, "--vocab", str(vocab)])
    assert f"{tmp_path / 'a.en'} line 2: the tokenizer cannot encode 'z'" in line


TEXT = ["--data-src", str(ROOT / "book/data/parallel20.en"), "--data-tgt", str(ROOT / "book/data/parallel20.fr"),
        "--steps", "2", "--batch-size", "4", "--bpe-merges", "100"]


@pytest.fixture(scope="module")
def text_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A one-process run on a small text, into a folder where a killed save left a temporary file;
    its folder and what it printed."""
    folder = tmp_path_factory.mktemp("text") / "run"
    folder.mkdir()
    (folder / ".checkpoint.pt.x1y2.tmp").write_bytes(b"half a checkpoint")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main([*TEXT, "--out", str(folder), "--translate", "the cat sleeps"]) == 0
    return folder, printed.getvalue()


def test_a_run_folder_loads_and_translates_in_five_lines_with_its_own_vocabularies(text_run):
    folder, printed = text_run
    from transformer_lib.checkpoint import load_checkpoint
    from transformer_lib.decoding import translate

    model = load_checkpoint(folder).model
    result = translate(model, "the cat sleeps")
    assert f"translate: the cat sleeps\n        -> {result.text}\n" in printed  # the command's own translation
    vocab, bpe = load_vocab_file(folder / "vocab.json")
    assert model.vocabularies.src == vocab and model.vocabularies.tokenizer.merges == bpe.merges
    assert result.src_ids == vocab.encode(" ".join(bpe.tokenize("the cat sleeps"))) and result.unknown_words == []
    assert "</w>" not in result.text  # text, not sub-words
    assert list(folder.glob(".*.tmp")) == []
    assert f"note: removed {folder / '.checkpoint.pt.x1y2.tmp'}, left by a save that was killed" in printed
    assert printed.count("note: each step takes a global batch of 4 pairs, the same on any number") == 1


def test_the_books_vocabularies_are_refused_for_ones_own_model(text_run):
    from transformer_lib.checkpoint import CheckpointError, load_checkpoint
    from transformer_lib.decoding import translate
    from transformer_lib.pretrained import book_model

    model, book = load_checkpoint(text_run[0]).model, book_model()
    with pytest.raises(ValueError, match=rf"^src_vocab: this model was trained with "
                                         rf"{re.escape(repr(model.vocabularies.src))}, got another, "
                                         rf"{re.escape(repr(book.src_vocab))}"):
        translate(model, "the cat sleeps", book.src_vocab, book.tgt_vocab)
    copy = text_run[0].parent / "copy"
    shutil.copytree(text_run[0], copy)
    another = Vocabularies(book.src_vocab, book.src_vocab).record()  # a vocab.json of another run
    (copy / "vocab.json").write_text(json.dumps(another), encoding="utf-8")
    with pytest.raises(CheckpointError, match=f"{re.escape(str(copy / 'vocab.json'))}: not the vocabularies that"):
        load_checkpoint(copy)


def test_a_resume_on_changed_data_is_refused(text_run, tmp_path, capsys):
    folder = tmp_path / "run"
    shutil.copytree(text_run[0], folder)
    src, tgt = (tmp_path / "a.en", tmp_path / "a.fr")
    shutil.copy(ROOT / "book/data/parallel20.en", src)
    shutil.copy(ROOT / "book/data/parallel20.fr", tgt)
    payload = torch.load(folder / "checkpoint.pt", weights_only=True)
    payload["extra"]["training"]["args"].update(data_src=str(src), data_tgt=str(tgt))  # the run, on these copies
    torch.save(payload, folder / "checkpoint.pt")
    tgt.write_text(tgt.read_text(encoding="utf-8").replace("chat", "chien"), encoding="utf-8")
    line = _error_line(capsys, ["--resume", str(folder), "--steps", "3"])
    assert f"--resume: the data differ from those {folder / 'checkpoint.pt'} was trained on" in line


def test_a_rank_other_than_0_names_itself_when_rank_0_did_not_report_its_error(monkeypatch, capsys):
    from transformer_lib.train import cli

    monkeypatch.setenv("RANK", "1")
    monkeypatch.setattr(cli, "QUIET_RANK_WAIT_S", 0.0)  # rank 0 would have stopped it by now
    assert cli.usage_error("--device: no cuda:1 here") == 2
    assert capsys.readouterr().err == "python -m transformer_lib.train: rank 1: error: --device: no cuda:1 here\n"

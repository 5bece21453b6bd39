"""``python -m transformer_lib.train`` on CPU, with 2 Gloo processes: DDP and FSDP2 against one
process on the same global batch, resume after a kill, failure with the rank named, bad
arguments and bad data. Small model, few steps; float64 so that the comparisons are tight."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

from transformer_lib.train.cli import main, parse

from .distributed_helpers import worker

ROOT = Path(__file__).resolve().parents[1]
EXACT = ["--preset", "book", "--pairs", "200", "--batch-size", "16", "--steps", "4", "--dtype", "float64",
         "--log-every", "2", "--save-every", "2"]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return torch.load(folder / "checkpoint.pt", weights_only=True)["state_dict"]


def _training_state(folder: Path) -> dict:
    return torch.load(folder / "checkpoint.pt", weights_only=True)["extra"]["training"]


def _torchrun(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
               "--master_port", str(_port()), *args]
    return subprocess.run(command, env=ENV, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One process, then DDP and FSDP2 on 2 processes, all on the same global batches; an
    uninterrupted 2-process DDP run with dropout for the resume test; FSDP2 for 6 steps, and
    resumed from its 4-step run to 6 steps."""
    root = tmp_path_factory.mktemp("runs")
    folders = {name: root / name for name in ("one", "ddp", "fsdp", "dropout", "fsdp6", "fsdp_resumed")}
    assert main([*EXACT, "--dropout", "0", "--out", str(folders["one"])]) == 0
    runs = [(_port(), [*EXACT, "--dropout", "0", "--strategy", "ddp", "--out", str(folders["ddp"])]),
            (_port(), [*EXACT, "--dropout", "0", "--strategy", "fsdp", "--out", str(folders["fsdp"])]),
            (_port(), [*EXACT, "--steps", "6", "--dropout", "0.2", "--out", str(folders["dropout"])]),
            (_port(), [*EXACT, "--steps", "6", "--dropout", "0", "--strategy", "fsdp", "--out", str(folders["fsdp6"])]),
            (_port(), [*EXACT, "--steps", "6", "--dropout", "0", "--strategy", "fsdp", "--resume", str(folders["fsdp"]),
                       "--out", str(folders["fsdp_resumed"])])]
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

    resumed = _torchrun("-m", "transformer_lib.train", *args, "--resume", str(tmp_path))
    assert resumed.returncode == 0, resumed.stderr
    assert f"steps {stopped_at + 1}-6" in resumed.stdout
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


def test_bad_arguments_exit_2_with_one_line(capsys, tmp_path):
    assert "--steps: expected a positive int, got '0'" in _error_line(capsys, ["--steps", "0", "--out", "x"])
    assert "--preset: invalid choice: 'huge'" in _error_line(capsys, ["--preset", "huge", "--out", "x"])
    assert "--dropout: expected a number in [0, 1)" in _error_line(capsys, ["--dropout", "1.5", "--out", "x"])
    assert "--out: needed" in _error_line(capsys, ["--steps", "2"])
    assert "give both files" in _error_line(capsys, ["--data-src", __file__, "--out", "x"])
    assert "--resume: no checkpoint.pt in" in _error_line(capsys, ["--resume", str(tmp_path)])
    assert "--data-tgt: no file" in _error_line(capsys, ["--data-src", __file__, "--data-tgt", "nope", "--out", "x"])


def _files(folder: Path, src: str, tgt: str | bytes) -> list[str]:
    (folder / "a.en").write_text(src, encoding="utf-8")
    (folder / "a.fr").write_bytes(tgt if isinstance(tgt, bytes) else tgt.encode("utf-8"))
    return ["--data-src", str(folder / "a.en"), "--data-tgt", str(folder / "a.fr"), "--out", str(folder / "run"),
            "--steps", "1", "--batch-size", "2"]


def test_bad_data_is_named_by_file_and_line(capsys, tmp_path):
    fr = tmp_path / "a.fr"
    line = _error_line(capsys, _files(tmp_path, "the cat\nthe dog\nthe bird\n", "le chat\nle chien\n"))
    assert line.endswith(f"{tmp_path / 'a.en'} line 3: no matching line in {fr} (3 lines in "
                         f"{tmp_path / 'a.en'}, 2 in {fr})")
    assert f"{fr} line 2: empty line" in _error_line(capsys, _files(tmp_path, "the cat\nthe dog\n", "le chat\n \n"))
    assert f"{fr} line 2: not UTF-8 text" in _error_line(capsys, _files(tmp_path, "a b\nc d\n", b"e f\n\xff\n"))
    long = " ".join(["word"] * 70)
    assert f"{tmp_path / 'a.en'} line 1: 70 tokens, but the model reads at most max_len=64" in _error_line(
        capsys, _files(tmp_path, f"{long}\n", "court\n") + ["--bpe-merges", "50"])


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

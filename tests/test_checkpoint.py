import os

import pytest
import torch

from transformer_lib import checkpoint as checkpoint_module
from transformer_lib.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from transformer_lib.models import Transformer
from transformer_lib.rnn import Seq2SeqGRU, Seq2SeqGRUConfig
from transformer_lib.tokenization import Vocab

from .seq2seq_toys import VOCAB, tiny_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # declared in conftest.py


SRC_VOCAB = Vocab([f"s{i}" for i in range(VOCAB - 4)])
TGT_VOCAB = Vocab([f"t{i}" for i in range(VOCAB - 4)])
SRC = torch.tensor([[4, 5, 6, 7], [8, 9, 0, 0]])
TGT = torch.tensor([[1, 4, 5], [1, 6, 0]])


def test_round_trip_is_exact(tmp_path):
    model = tiny_model(0, tie_output_embedding=True, positional="learned")
    path = save_checkpoint(tmp_path / "model.pt", model, SRC_VOCAB, TGT_VOCAB, extra={"steps": 12, "note": "hi"})
    loaded = load_checkpoint(path)
    assert isinstance(loaded.model, Transformer) and not loaded.model.training
    assert loaded.config == model.config
    assert loaded.src_vocab == SRC_VOCAB and loaded.tgt_vocab == TGT_VOCAB
    assert loaded.extra == {"steps": 12, "note": "hi"}
    assert torch.equal(loaded.model(SRC, TGT), model(SRC, TGT))
    # the tie survives: one matrix, not two copies
    assert loaded.model.generator.weight is loaded.model.tgt_embed.token.embedding.weight
    assert not [p for p in tmp_path.iterdir() if p.name != "model.pt"]  # no temporary file left behind


def test_round_trip_of_the_rnn_baseline_and_without_vocabularies(tmp_path):
    torch.manual_seed(0)
    model = Seq2SeqGRU(Seq2SeqGRUConfig(VOCAB, VOCAB, d_model=16, hidden_size=24, n_layers=2)).eval()
    loaded = load_checkpoint(save_checkpoint(tmp_path / "rnn.pt", model))
    assert isinstance(loaded.model, Seq2SeqGRU) and loaded.src_vocab is None and loaded.tgt_vocab is None
    assert torch.equal(loaded.model(SRC, TGT), model(SRC, TGT))


def test_save_replaces_an_existing_file_atomically(tmp_path, monkeypatch):
    path = tmp_path / "model.pt"
    save_checkpoint(path, tiny_model(0))
    before = path.read_bytes()

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint_module.torch, "save", crash)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(path, tiny_model(1))
    assert path.read_bytes() == before  # the old checkpoint is intact
    assert os.listdir(tmp_path) == ["model.pt"]  # and the temporary file is gone


def _expect_error(path, match):
    with pytest.raises(CheckpointError, match=match) as info:
        load_checkpoint(path)
    assert str(path) in str(info.value)


def test_truncated_and_corrupt_files_raise_a_clear_error(tmp_path):
    good = save_checkpoint(tmp_path / "good.pt", tiny_model(0), SRC_VOCAB, TGT_VOCAB)
    data = good.read_bytes()
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(data[: len(data) // 2])
    _expect_error(truncated, "not a readable checkpoint")
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"this is not a checkpoint at all" * 10)
    _expect_error(garbage, "not a readable checkpoint")
    with pytest.raises(FileNotFoundError, match="no checkpoint file"):
        load_checkpoint(tmp_path / "missing.pt")


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_a_pickle_with_code_is_refused(tmp_path):
    path = tmp_path / "evil.pt"
    torch.save({"format": checkpoint_module.FORMAT, "payload": Evil()}, path)
    _expect_error(path, "not a readable checkpoint")


def _tampered(tmp_path, name, change, seal=True):
    """A checkpoint changed by ``change``; ``seal``: with the SHA-256 of its changed weights, so that
    loading gets past the integrity check to the check under test."""
    payload = torch.load(save_checkpoint(tmp_path / "base.pt", tiny_model(0), SRC_VOCAB, TGT_VOCAB),
                         weights_only=True)
    change(payload)
    if seal and isinstance(payload.get("state_dict"), dict):
        payload["sha256"] = checkpoint_module.state_dict_sha256(payload["state_dict"])
    path = tmp_path / name
    torch.save(payload, path)
    return path


def test_mismatched_checkpoints_raise_a_clear_error(tmp_path):
    def drop_key(p):
        del p["state_dict"]["generator.bias"]

    def extra_key(p):
        p["state_dict"]["surprise"] = torch.zeros(1)

    def wrong_shape(p):
        p["state_dict"]["generator.weight"] = torch.zeros(3, 3)

    def wrong_config(p):
        p["config"]["d_model"] = 64  # weights are for 32

    cases = {
        "missing key": (drop_key, "Missing key.*generator.bias"),
        "unexpected key": (extra_key, "Unexpected key.*surprise"),
        "wrong shape": (wrong_shape, "size mismatch for generator.weight"),
        "config": (wrong_config, "weights do not fit a Transformer"),
        "version": (lambda p: p.update(version=99), "format version 99; this library reads version 1"),
        "format": (lambda p: p.update(format="other"), "not a transformer_lib checkpoint"),
        "class": (lambda p: p.update(model_class="GPT"), "unknown model class 'GPT'"),
        "class a list": (lambda p: p.update(model_class=["Transformer"]), r"unknown model class \['Transformer'\]"),
        "extra a list": (lambda p: p.update(extra=[1, 2]), "extra is a list, expected a dict"),
        "extra a string": (lambda p: p.update(extra="notes"), "extra is a str, expected a dict"),
        "extra empty list": (lambda p: p.update(extra=[]), "extra is a list, expected a dict"),
        "bad config": (lambda p: p["config"].update(n_heads=3), "invalid TransformerConfig"),
        "unknown field": (lambda p: p["config"].update(colour="red"), "invalid TransformerConfig"),
        "vocab": (lambda p: p.update(tgt_vocab={"itos": ["a"]}), "invalid vocabulary"),
        "vocab size": (lambda p: p.update(tgt_vocab=Vocab(["x"]).to_dict()), "tgt_vocab holds 5 tokens"),
        "missing entry": (lambda p: p.pop("state_dict"), r"lacks the entries \['state_dict'\]"),
    }
    for name, (change, match) in cases.items():
        path = _tampered(tmp_path, name.replace(" ", "_") + ".pt", change)
        _expect_error(path, match)  # raised: no model, partly loaded or not, reaches the caller


def test_save_rejects_bad_arguments(tmp_path):
    with pytest.raises(TypeError, match="model: expected one of"):
        save_checkpoint(tmp_path / "x.pt", torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="src_vocab: expected a tokenization.Vocab"):
        save_checkpoint(tmp_path / "x.pt", tiny_model(0), src_vocab=["a"])
    with pytest.raises(TypeError, match="extra: expected a dict"):
        save_checkpoint(tmp_path / "x.pt", tiny_model(0), extra=[1])


def test_a_flipped_byte_in_the_weights_is_refused(tmp_path):
    """torch's zip reader checks no CRC: without the stored SHA-256 a changed weight would load."""
    model = tiny_model(0)
    path = save_checkpoint(tmp_path / "model.pt", model, SRC_VOCAB, TGT_VOCAB)
    data = bytearray(path.read_bytes())
    weight = model.generator.weight.detach().numpy().tobytes()
    start = data.find(weight)
    assert start > 0  # the tensor is stored uncompressed: this is the byte a disk error would flip
    data[start + len(weight) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=rf"{path.name}: SHA-256 of the weights is [0-9a-f]{{64}}, but the "
                                              r"file records [0-9a-f]{64}: the file is corrupt or was changed"):
        load_checkpoint(path)


def test_a_checkpoint_without_its_sha256_is_refused(tmp_path):
    path = _tampered(tmp_path, "no_sum.pt", lambda p: p.pop("sha256"), seal=False)
    _expect_error(path, r"lacks the entries \['sha256'\]")


@pytest.mark.parametrize("dtype", [torch.int64, torch.float16, torch.bool], ids=str)
def test_a_tensor_of_another_dtype_is_refused_not_cast(tmp_path, dtype):
    def change(p):
        p["state_dict"]["generator.bias"] = p["state_dict"]["generator.bias"].to(dtype)

    path = _tampered(tmp_path, "dtype.pt", change)
    _expect_error(path, rf"state_dict\['generator.bias'\]: expected dtype torch.float32 like the model's other "
                        rf"weights, got {dtype}")


def test_a_float64_model_comes_back_in_float64(tmp_path):
    model = tiny_model(0).double()
    loaded = load_checkpoint(save_checkpoint(tmp_path / "double.pt", model))
    assert all(p.dtype == torch.float64 for p in loaded.model.parameters())
    assert torch.equal(loaded.model(SRC, TGT), model(SRC, TGT))


def test_saving_to_a_directory_names_the_path(tmp_path):
    from .bad_input import raises

    raises(ValueError, lambda: save_checkpoint(tmp_path, tiny_model(0)), "path")


def test_a_loaded_model_carries_its_vocabularies_and_translate_refuses_a_foreign_one(tmp_path):
    from transformer_lib.decoding import translate

    model = tiny_model(0)
    loaded = load_checkpoint(save_checkpoint(tmp_path / "model.pt", model, SRC_VOCAB, TGT_VOCAB)).model
    assert loaded.vocabularies.src == SRC_VOCAB and loaded.vocabularies.tgt == TGT_VOCAB
    own = translate(loaded, "s1 s2 s3")
    assert own.ids == translate(loaded, "s1 s2 s3", SRC_VOCAB, TGT_VOCAB).ids  # the defaults are its own
    assert own.unknown_words == []
    with pytest.raises(ValueError, match=r"^src_vocab: this model was trained with Vocab\(.*'s0'.*got another, "
                                         r"Vocab\(.*'t0'"):
        translate(loaded, "s1 s2 s3", TGT_VOCAB, TGT_VOCAB)  # same size, other words: never read silently
    with pytest.raises(TypeError, match="^src_vocab: .* carries no vocabularies"):
        translate(model, "s1 s2 s3")  # a model built in Python knows none
    (tmp_path / "run").mkdir()
    with pytest.raises(FileNotFoundError, match=r"^path: no checkpoint.pt in the folder .*run$"):
        load_checkpoint(tmp_path / "run")  # a folder: its checkpoint.pt, as a run of transformer_lib.train writes
    save_checkpoint(tmp_path / "run" / "checkpoint.pt", model, SRC_VOCAB, TGT_VOCAB)
    assert load_checkpoint(tmp_path / "run").model.vocabularies.src == SRC_VOCAB


_KILLED_SAVE = """
import sys, time
from pathlib import Path
from transformer_lib.checkpoint import write_atomically

def write(file):
    file.write(b"half a checkpoint")
    file.flush()
    Path(sys.argv[2]).touch()  # the test may kill now
    time.sleep(60)

write_atomically(Path(sys.argv[1]), write)
"""


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGKILL"])
def test_a_killed_save_leaves_no_temporary_file(tmp_path, signal_name):
    """SIGTERM (how torchrun stops a process): the writer removes its file and dies of the signal.
    SIGKILL cannot be caught: the file stays until ``remove_temporary_files`` (run on each training start)."""
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "checkpoint.pt").write_bytes(b"the old checkpoint")
    ready = tmp_path / "ready"
    env = {**os.environ, "PYTHONPATH": str(checkpoint_module.Path(__file__).resolve().parents[1])}
    process = subprocess.Popen([sys.executable, "-c", _KILLED_SAVE, str(tmp_path / "checkpoint.pt"), str(ready)],
                               env=env)
    deadline = time.monotonic() + 60
    while not ready.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ready.exists(), "the writer never started writing"
    temporaries = list(tmp_path.glob(".checkpoint.pt.*.tmp"))
    assert len(temporaries) == 1  # mid-save: the temporary file is there
    process.send_signal(getattr(signal, signal_name))
    assert process.wait(timeout=60) == -getattr(signal, signal_name)  # it still dies of the signal
    assert (tmp_path / "checkpoint.pt").read_bytes() == b"the old checkpoint"
    left = list(tmp_path.glob(".checkpoint.pt.*.tmp"))
    if signal_name == "SIGTERM":
        assert left == []
    else:
        assert left == temporaries
        assert checkpoint_module.remove_temporary_files(tmp_path) == temporaries
        assert list(tmp_path.glob(".*.tmp")) == []

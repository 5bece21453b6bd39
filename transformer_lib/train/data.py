"""The command's data: parallel text files (or the book's generated corpus), their sub-word
tokenizer and vocabulary, and the global batches split across processes.

Text files hold one sentence a line, the i-th line of one side translating the i-th of the other
(the format of the WMT, IWSLT and Tatoeba downloads). The tokenizer is the book's byte-pair
encoding (``tokenization.BPETokenizer``), learned on both sides of the training text at once, as
the paper's shared source-target vocabulary; a sentence becomes its sub-words separated by spaces,
so the word-level ``Vocab``, ``make_batches``' collation and ``decoding.translate`` work on it
unchanged. Nothing is dropped silently: a bad line is an error naming its file and line.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path

from ..tokenization import END_OF_WORD, Batch, BPETokenizer, Vocab, collate
from ..validation import check_index, check_instance, check_int, check_positive_int
from ..vocabularies import Vocabularies


class DataError(ValueError):
    """A data or vocabulary file the command cannot use; the message names the file and the line."""


@dataclass
class TextData:
    """Training pairs as space-separated tokens, the one vocabulary of both sides, and the BPE
    tokenizer that made the tokens (None: the generated corpus, whose tokens are words)."""

    pairs: list[tuple[str, str]]
    vocab: Vocab
    bpe: BPETokenizer | None = None

    @property
    def vocabularies(self) -> Vocabularies:
        """The one vocabulary of both sides and the tokenizer: what the checkpoint carries."""
        return Vocabularies(self.vocab, self.vocab, self.bpe)

    def to_tokens(self, sentence: str) -> str:
        """A sentence as the model reads it: its sub-words, separated by spaces."""
        return self.vocabularies.to_tokens(sentence)

    def from_tokens(self, tokens: list[str]) -> str:
        """The sentence that ``tokens`` spell (the inverse of ``to_tokens``)."""
        return self.vocabularies.to_text(tokens)

    def sha256(self) -> str:
        """The SHA-256 of the training pairs (as tokens) and the vocabulary: a resume checks that its
        data are the checkpoint's."""
        record = json.dumps([self.pairs, self.vocabularies.record()], ensure_ascii=False)
        return hashlib.sha256(record.encode("utf-8")).hexdigest()


def read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file, without their line ends."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise DataError(f"{path}: cannot read ({error.strerror})") from error
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the final line end
    out = []
    for number, line in enumerate(lines, start=1):
        try:
            out.append(line.decode("utf-8").rstrip("\r"))
        except UnicodeDecodeError as error:
            raise DataError(f"{path} line {number}: not UTF-8 text ({error.reason})") from error
    return out


def read_parallel(src_path: Path, tgt_path: Path) -> list[tuple[str, str]]:
    """The (source, target) pairs of two files of equal length; no line may be empty."""
    src, tgt = read_lines(src_path), read_lines(tgt_path)
    if len(src) != len(tgt):
        shorter, longer = (src_path, tgt_path) if len(src) < len(tgt) else (tgt_path, src_path)
        raise DataError(f"{longer} line {min(len(src), len(tgt)) + 1}: no matching line in {shorter} "
                        f"({len(src)} lines in {src_path}, {len(tgt)} in {tgt_path})")
    if not src:
        raise DataError(f"{src_path}: no sentences")
    for number, pair in enumerate(zip(src, tgt, strict=True), start=1):
        for path, side in zip((src_path, tgt_path), pair, strict=True):
            if not side.split():
                raise DataError(f"{path} line {number}: empty line (each line must hold a sentence)")
    return list(zip(src, tgt, strict=True))


def load_vocab_file(path: Path) -> tuple[Vocab, BPETokenizer | None]:
    """The tokenizer and vocabulary of a JSON file written by a previous run (``DIR/vocab.json``)."""
    try:
        vocabularies = Vocabularies.from_record(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as error:
        raise DataError(f"{path}: not a vocabulary file written by transformer_lib.train ({error})") from error
    return vocabularies.src, vocabularies.tokenizer


def _tokens_of(bpe: BPETokenizer, sentence: str, vocab: Vocab | None, where: str) -> str:
    symbols = bpe.tokenize(sentence)
    known = bpe.symbols if vocab is None else vocab.stoi
    for symbol in symbols:
        if symbol not in known:
            raise DataError(f"{where}: the tokenizer cannot encode {symbol!r} (not in its vocabulary)")
    return " ".join(symbols)


def load_text(src_path: Path, tgt_path: Path, n_merges: int, vocab_path: Path | None, max_len: int) -> TextData:
    """Read two parallel files, learn BPE on them (or read ``vocab_path``), and tokenize every line.

    A sentence longer than ``max_len`` tokens (the model's positional table), or holding a symbol
    outside the vocabulary, is an error naming its file and line: nothing is cut or dropped."""
    pairs = read_parallel(src_path, tgt_path)
    if vocab_path is None:
        vocab, bpe = None, BPETokenizer.learn([s for pair in pairs for s in pair], n_merges, END_OF_WORD)
    else:
        vocab, bpe = load_vocab_file(vocab_path)
        if bpe is None:
            raise DataError(f"{vocab_path}: holds a word vocabulary without BPE merges; text files need merges")
    tokenized = []
    for number, (src, tgt) in enumerate(pairs, start=1):
        sides = []
        for path, sentence in ((src_path, src), (tgt_path, tgt)):
            tokens = _tokens_of(bpe, sentence, vocab, f"{path} line {number}")
            # the target is read with <sos> or <eos> added: one position more
            if len(tokens.split()) + (path == tgt_path) > max_len:
                raise DataError(f"{path} line {number}: {len(tokens.split())} tokens, but the model reads at most "
                                f"max_len={max_len} (split the sentence, or drop it from the file yourself)")
            sides.append(tokens)
        tokenized.append((sides[0], sides[1]))
    if vocab is None:
        vocab = Vocab.build(s for pair in tokenized for s in pair)
    return TextData(tokenized, vocab, bpe)


def generated_text(seed: int, n_pairs: int) -> TextData:
    """The book's generated corpus (its training split), with one word vocabulary for both languages."""
    from ..corpus import make_corpus

    pairs = make_corpus(seed, n_pairs=n_pairs).train
    return TextData(list(pairs), Vocab.build(s for pair in pairs for s in pair))


def global_batches(data: TextData, batch_size: int, seed: int, min_rows: int) -> list[Batch]:
    """Every training pair, in global batches of ``batch_size`` pairs of similar length (as
    ``tokenization.make_batches(by_length=True)``), each of at least ``min_rows`` pairs: a last
    batch smaller than that joins the one before it, so that every process gets a row."""
    check_instance("data", data, TextData, "a TextData (load_text or generated_text)")
    check_positive_int("batch_size", batch_size)
    check_int("seed", seed)
    check_positive_int("min_rows", min_rows)
    encoded = [(data.vocab.encode(s), data.vocab.encode(t)) for s, t in data.pairs]
    rng = random.Random(seed)
    order = list(range(len(encoded)))
    rng.shuffle(order)
    order.sort(key=lambda i: (len(encoded[i][0]), len(encoded[i][1])))  # stable: keeps the shuffle among equals
    chunks = [order[i: i + batch_size] for i in range(0, len(order), batch_size)]
    if len(chunks) > 1 and len(chunks[-1]) < min_rows:
        chunks[-2].extend(chunks.pop())
    return [collate([encoded[i] for i in chunk], data.vocab) for chunk in chunks]


def local_part(batch: Batch, rank: int, world_size: int) -> Batch:
    """This process's rows of a global batch: rows rank, rank + world_size, ... (its padding kept;
    padded positions count for nothing in the loss and are masked in attention)."""
    check_instance("batch", batch, Batch, "a tokenization.Batch")
    check_positive_int("world_size", world_size)
    check_index("rank", rank, world_size, context=f" for world_size={world_size}")
    rows = slice(rank, None, world_size)
    return Batch(batch.src[rows], batch.tgt_in[rows], batch.tgt_out[rows], batch.pad_id)

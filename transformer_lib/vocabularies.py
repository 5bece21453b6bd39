"""A model's vocabularies: the word vocabularies of its two sides and, for plain text, the
sub-word tokenizer (BPE) that made their tokens. ``decoding.translate`` reads a sentence with them.

A model loaded by ``checkpoint.load_checkpoint`` carries its own, as ``model.vocabularies``:
``translate(model, sentence)`` then needs nothing else, and a vocabulary passed in that is not the
model's own is refused (``ValueError`` naming both), never read silently as unknown words.
``python -m transformer_lib.train`` writes them as JSON (``vocab.json``, the ``record``), one
vocabulary shared by both sides, as the paper's shared source-target BPE.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from .tokenization import BPETokenizer, Merge, Vocab
from .validation import check_instance, check_sentence, check_token_list
from .validation_models import check_model_vocab, check_seq2seq_model

RECORD_FORMAT = "transformer_lib.train.vocab"


@dataclass(frozen=True, eq=False)
class Vocabularies:
    """``src`` and ``tgt``: word vocabularies; ``tokenizer``: what splits text into their tokens
    (None: the tokens are words, as in the book's generated corpus)."""

    src: Vocab
    tgt: Vocab
    tokenizer: BPETokenizer | None = None

    def __post_init__(self) -> None:
        check_instance("src", self.src, Vocab, "a tokenization.Vocab")
        check_instance("tgt", self.tgt, Vocab, "a tokenization.Vocab")
        if self.tokenizer is not None:
            check_instance("tokenizer", self.tokenizer, BPETokenizer, "a tokenization.BPETokenizer or None")

    def to_tokens(self, sentence: str) -> str:
        """A sentence as the model reads it: its tokens (sub-words with a tokenizer), separated by spaces."""
        check_sentence("sentence", sentence)
        return sentence if self.tokenizer is None else " ".join(self.tokenizer.tokenize(sentence))

    def encode_with_unknowns(self, sentence: str) -> tuple[list[int], list[str]]:
        """The source ids of ``sentence`` and its words that the source vocabulary lacks, as typed:
        with a tokenizer, a word is unknown when any of its sub-words is (read as ``<unk>``)."""
        if self.tokenizer is None:
            return self.src.encode_with_unknowns(check_sentence("sentence", sentence))
        ids, unknown = [], []
        for word in check_sentence("sentence", sentence).split():
            word_ids, missing = self.src.encode_with_unknowns(" ".join(self.tokenizer.tokenize(word)))
            ids += word_ids
            if missing:
                unknown.append(word)
        return ids, unknown

    def to_text(self, tokens: list[str]) -> str:
        """The text that target ``tokens`` spell (the inverse of ``to_tokens``)."""
        check_token_list("tokens", tokens)
        return " ".join(tokens) if self.tokenizer is None else self.tokenizer.detokenize(tokens)

    def record(self) -> dict:
        """The tokenizer and the shared vocabulary as plain values (JSON): ``vocab.json`` of a run."""
        if self.src != self.tgt:
            raise ValueError(f"record: written for one vocabulary shared by both sides, got src {self.src!r} "
                             f"and tgt {self.tgt!r}")
        bpe = self.tokenizer
        return {
            "format": RECORD_FORMAT,
            "end_of_word": None if bpe is None else bpe.end_of_word,
            "alphabet": None if bpe is None else list(bpe.alphabet),
            "merges": None if bpe is None else [[*m.pair, m.count] for m in bpe.merges],
            "itos": self.src.to_dict()["itos"],
        }

    @classmethod
    def from_record(cls, record: object) -> Vocabularies:
        """The inverse of ``record``; a ``ValueError`` says what is wrong."""
        check_instance("record", record, dict, "a dict (the JSON of a run's vocab.json)")
        try:
            if record.get("format") != RECORD_FORMAT:
                raise ValueError(f"no format tag {RECORD_FORMAT!r}")
            vocab = Vocab.from_dict({"itos": record["itos"]})
            bpe = None
            if record["merges"] is not None:
                merges = [Merge((a, b), int(count)) for a, b, count in record["merges"]]
                bpe = BPETokenizer(merges, record["end_of_word"], record["alphabet"])
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"record: not the vocabularies of a run of transformer_lib.train ({error})") from error
        return cls(vocab, vocab, bpe)


def vocabularies_for(model: nn.Module, src_vocab: Vocab | None, tgt_vocab: Vocab | None) -> Vocabularies:
    """The vocabularies to read and write ``model``'s sentences with (an encoder-decoder's): its own
    (``model.vocabularies``, set by ``load_checkpoint``) unless given, and given ones only if they are its
    own, or, for a model without its own, of the sizes its config gives."""
    check_instance("model", model, nn.Module, "a model (a torch module)")
    check_seq2seq_model("model", model)
    own = getattr(model, "vocabularies", None)
    for name, given in (("src_vocab", src_vocab), ("tgt_vocab", tgt_vocab)):
        if given is None and own is None:
            raise TypeError(f"{name}: expected a tokenization.Vocab (this model carries no vocabularies: only a "
                            f"model from checkpoint.load_checkpoint knows its own), got None")
        if given is not None:
            check_instance(name, given, Vocab, "a tokenization.Vocab, or None for the model's own")
    if own is None:
        own = Vocabularies(src_vocab, tgt_vocab)
    for name, given, mine in (("src_vocab", src_vocab, own.src), ("tgt_vocab", tgt_vocab, own.tgt)):
        if given is not None and given != mine:
            raise ValueError(f"{name}: this model was trained with {mine!r}, got another, {given!r} (its words "
                             f"would be read as other words or as unknown); leave {name} out to use the model's own")
        check_model_vocab(name, mine, model, name.removesuffix("_vocab"))
    return own

"""The book's recipe: the corpus, the vocabularies, the model and the hyper-parameters that made
the shipped models, and the functions that train them again.

Chapter 7 trains the book's Transformer with this recipe in front of the reader; the shipped
weights (``transformer_lib.pretrained.book_model``) were made by the same functions with a
fixed number of steps, by ``tools/train_book_models.py``.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Self

import torch
from torch import nn

from ..config import TransformerConfig
from ..corpus import Corpus, make_corpus
from ..evaluation import evaluate_translation, greedy_exact_check
from ..models import Transformer
from ..rnn import Seq2SeqGRU, Seq2SeqGRUAttention, Seq2SeqGRUConfig
from ..tokenization import Vocab, make_batches
from ..training import PAPER_LABEL_SMOOTHING, StepReport, TrainingHistory, TrainingOptions, train
from ..validation import check_bool, check_choice, check_instance, check_positive_int


def _book_training() -> TrainingOptions:
    """The book's optimisation settings: the paper's Adam, schedule and label smoothing, shrunk."""
    return TrainingOptions(
        steps=1500,  # the shipped Transformer: well past the target (benchmarks/train_book_model.py)
        warmup=300,  # the paper's 4000 is for 100000 steps; we take a couple of thousand
        lr_scale=0.5,  # half the paper's rate: steadier over our few steps
        label_smoothing=PAPER_LABEL_SMOOTHING,
    )


class TrainsWithOptions:
    """What a recipe that holds a ``TrainingOptions`` (``training``) next to its own ``batch_size`` can do:
    check it, change it, record it. ``BookRecipe`` and the language model's ``LanguageModelRecipe`` share it.

    The recipe's ``seed`` and the vocabulary's ``<pad>`` are not the options' to set: the function that
    trains the recipe hands them to ``train``, so the options keep their defaults (0)."""

    batch_size: int
    training: TrainingOptions
    trained_by: ClassVar[str]  # the function that trains the recipe, for the messages

    def _check_training(self) -> None:
        check_instance("training", self.training, TrainingOptions, "a training.TrainingOptions")
        check_positive_int("batch_size", self.batch_size)
        for name in ("seed", "pad_id"):
            if getattr(self.training, name) != 0:
                raise ValueError(f"training: its {name} is set by {self.trained_by} (the recipe's seed, the "
                                 f"vocabulary's <pad>); expected 0, got {getattr(self.training, name)}")

    def with_training(self, *, batch_size: int | None = None, **options: object) -> Self:
        """This recipe with another ``batch_size`` and/or other ``TrainingOptions`` fields (``warmup``,
        ``lr_scale``, ``steps``, ``label_smoothing``, ``clip_norm``...); the model and the data stay."""
        return dataclasses.replace(self, batch_size=self.batch_size if batch_size is None else batch_size,
                                   training=self.training.replace(**options))

    def record(self) -> dict[str, Any]:
        """The recipe as the shipped files record it (``tools/train_book_models.py``): its own fields and
        the training settings it was tuned on, side by side, in the format the files were made with."""
        own = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "training"}
        own["model"] = dataclasses.asdict(self.model)
        tuned = ("warmup", "lr_scale", "label_smoothing", "steps")
        return {**own, **{name: getattr(self.training, name) for name in tuned}}


@dataclass(frozen=True)
class BookRecipe(TrainsWithOptions):
    """How the book trains its models on a laptop CPU (tuned with ``benchmarks/train_book_model.py``).

    The Transformer's shape is the config preset ``"book"`` (d_model 64, 4 heads, 2 layers each
    side, d_ff 256, dropout 0.1); the paper's base model is d_model 512, six layers each side,
    d_ff 2048, trained on 4.5 million sentence pairs for 100000 steps.

    ``training`` holds the optimisation settings ``train`` takes (``TrainingOptions``: the steps, the
    warm-up, the scale of the rate, label smoothing, clipping); ``batch_size`` is the recipe's own,
    since the batches are made before training. Its ``seed`` and ``pad_id`` are not the recipe's to
    set: ``train_book_model`` gives ``train`` the recipe's ``seed`` and the target vocabulary's
    ``<pad>``. ``with_training`` changes any of them in one call::

        fast = BOOK_RECIPE.with_training(batch_size=64, warmup=100, lr_scale=1.0)
        model, src_vocab, tgt_vocab, history = train_book_model(fast)

    (the same as ``dataclasses.replace(BOOK_RECIPE, batch_size=64,
    training=BOOK_RECIPE.training.replace(warmup=100, lr_scale=1.0))``).
    """

    model: TransformerConfig = field(default_factory=lambda: TransformerConfig.preset("book"))
    seed: int = 0  # the corpus, the initial weights, dropout and the batch order
    n_pairs: int = 15_000  # generated sentence pairs, split 80/10/10 (plus the novel test pairs)
    batch_size: int = 128  # sentence pairs (the paper: about 25000 source and 25000 target tokens)
    training: TrainingOptions = field(default_factory=_book_training)
    rnn_steps: int = 1500  # the shipped GRU baseline: the same number of steps
    rnn_hidden_size: int = 256  # its embeddings have the Transformer's d_model
    target_exact_match: float = 0.95  # what "trained" means in chapter 7: on the held-out split
    trained_by: ClassVar[str] = "train_book_model"

    def __post_init__(self) -> None:
        self._check_training()

    def config(self, src_vocab_size: int, tgt_vocab_size: int) -> TransformerConfig:
        """The Transformer's config: the preset's shape with the vocabularies' sizes."""
        return self.model.replace(src_vocab_size=src_vocab_size, tgt_vocab_size=tgt_vocab_size)


BOOK_RECIPE = BookRecipe()
# Chapter 7's run in front of the reader: the book's recipe with batches of 32 pairs. On one CPU core a
# step of this small model costs about a third of a 128-pair step (much of it is the same fixed cost per
# step, whatever the batch), and the target comes after about half as many pairs seen, so it comes in
# fewer seconds (``benchmarks/time_to_target.py``, the performance appendix: three seeds of each).
# The step limit leaves room: the smaller batches take more steps.
LIVE_RECIPE = BOOK_RECIPE.with_training(batch_size=32, steps=2000)


# The book's corpus as make_corpus gives it, stored (package data) by tools/book_corpus.py: generating it
# takes about half a second of one core, in each chapter that reads it; reading it, a tenth.
# tests/test_book_corpus.py checks that the stored corpus is what make_corpus generates.
BOOK_CORPUS_PATH = Path(__file__).with_name("book_corpus.json.gz")


@lru_cache(maxsize=4)
def book_corpus(seed: int = BOOK_RECIPE.seed, n_pairs: int = BOOK_RECIPE.n_pairs) -> Corpus:
    """The book's corpus: ``make_corpus(seed, n_pairs)`` with the recipe's values (read from its stored
    copy, ``BOOK_CORPUS_PATH``; other values generate it). Made once per process and shared: treat it
    as read-only."""
    if (seed, n_pairs) == (BOOK_RECIPE.seed, BOOK_RECIPE.n_pairs):
        return read_corpus(BOOK_CORPUS_PATH)
    return make_corpus(seed, n_pairs=n_pairs)


def write_corpus(corpus: Corpus, path: Path | str) -> None:
    """Store ``corpus`` as gzipped JSON, which ``read_corpus`` reads back (mtime 0: the same bytes each time)."""
    fields = {f.name: getattr(corpus, f.name) for f in dataclasses.fields(corpus)}
    text = json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
    Path(path).write_bytes(gzip.compress(text.encode(), mtime=0))


def read_corpus(path: Path | str) -> Corpus:
    """The corpus ``write_corpus`` stored, with its pairs as tuples again."""
    fields = json.loads(gzip.decompress(Path(path).read_bytes()))
    pairs = {name: [tuple(pair) for pair in fields[name]] for name in ("train", "valid", "test", "novel", "held_out")}
    return Corpus(**{**fields, **pairs, "held_out": tuple(pairs["held_out"])})


def book_vocabularies(corpus: Corpus) -> tuple[Vocab, Vocab]:
    """Word-level source and target vocabularies of the training split."""
    return Vocab.build(s for s, _ in corpus.train), Vocab.build(t for _, t in corpus.train)


def exact_match_on(split: str, corpus: Corpus, src_vocab: Vocab, tgt_vocab: Vocab) -> Callable[[nn.Module], dict]:
    """An ``evaluate`` function for ``train``: greedy translation of one split, scored."""
    pairs = corpus.splits()[split]

    def evaluate(model: nn.Module) -> dict[str, float]:
        result = evaluate_translation(model, pairs, src_vocab, tgt_vocab)
        return {f"{split}_exact_match": result.exact_match, f"{split}_bleu": result.bleu}

    return evaluate


def _exact_match_reaching(target: float, split: str, corpus: Corpus, src_vocab: Vocab, tgt_vocab: Vocab
                         ) -> Callable[[nn.Module], dict]:
    """``exact_match_on(split, ...)``, decoding only when the target is within reach: first
    ``greedy_exact_check`` (one teacher-forced pass) tells which sentences greedy decoding would get
    exactly right; if even counting every near-tie as right they fall short of ``target``, that is
    the score (without BLEU). Otherwise greedy decoding scores the split, as ``exact_match_on``.
    The check stops reading as soon as the sentences surely wrong put the target out of reach (early
    in training, after its first chunk); the score is then a bound, ``{split}_exact_match_at_most``."""
    pairs, decoded = corpus.splits()[split], exact_match_on(split, corpus, src_vocab, tgt_vocab)

    def evaluate(model: nn.Module) -> dict[str, float]:
        check = greedy_exact_check(model, pairs, src_vocab, tgt_vocab, stop_below=target)
        if check.checked < len(pairs):  # stopped early: out of reach, by at least this much
            return {f"{split}_exact_match_at_most": check.highest}
        if check.highest < target:  # out of reach: greedy decoding's exact match is known without decoding
            return {f"{split}_exact_match": check.exact_match}
        return decoded(model)

    return evaluate


def _stop_at(target: float, callback: Callable[[StepReport], bool | str | None] | None
             ) -> Callable[[StepReport], bool | str]:
    """A ``train`` callback that stops once the validation exact match reaches ``target``, saying so
    (and still calls, and obeys, the reader's own ``callback``)."""

    def stop(report: StepReport) -> bool | str:
        asked = callback(report) if callback is not None else None
        if asked:
            return asked
        score = None if report.evaluation is None else report.evaluation.get("valid_exact_match")
        if score is not None and score >= target:
            return f"reached {score:.1%} at step {report.step}"
        return False

    return stop


ARCHITECTURES = ("transformer", "gru", "gru_attention")


def _build(architecture: str, recipe: BookRecipe, adapt: Callable[[Transformer], Transformer] | None
           ) -> Callable[[int, int], nn.Module]:
    """A function of the vocabularies' sizes that builds the freshly initialised model."""
    if architecture == "transformer":
        def build(src_size: int, tgt_size: int) -> Transformer:
            model = Transformer(recipe.config(src_size, tgt_size))
            return model if adapt is None else adapt(model)

        return build
    if adapt is not None:
        raise ValueError(f"adapt: changes a Transformer; architecture is {architecture!r}")
    model_class = Seq2SeqGRUAttention if architecture == "gru_attention" else Seq2SeqGRU
    return lambda src_size, tgt_size: model_class(Seq2SeqGRUConfig(
        src_size, tgt_size, d_model=recipe.model.d_model, hidden_size=recipe.rnn_hidden_size,
        dropout=recipe.model.dropout,
    ))


def train_book_model(
    recipe: BookRecipe = BOOK_RECIPE,
    *,
    corpus: Corpus | None = None,
    architecture: str = "transformer",
    adapt: Callable[[Transformer], Transformer] | None = None,
    stop_at_target: bool = False,
    evaluate: Callable[[nn.Module], dict[str, float]] | None = None,
    callback: Callable[[StepReport], bool | str | None] | None = None,
    **options: object,
) -> tuple[nn.Module, Vocab, Vocab, TrainingHistory]:
    """Build the corpus (``book_corpus()`` unless given), the vocabularies and the book's model, and
    train it with ``recipe.training``, or (``stop_at_target=True``) until greedy translation of the
    validation split reaches ``recipe.target_exact_match``, checked every ``eval_every`` steps (50
    unless given; ``history.evaluations`` keeps the scores), whichever comes first. The check is
    ``exact_match_reaching``: the split is decoded only once a teacher-forced pass shows the target
    within reach, so checking often costs little, and training stops at the first check that meets it.

    ``options`` are ``TrainingOptions`` fields for this run, as ``train`` takes them: they change
    those of ``recipe.training`` (``steps=40``; ``time_budget_s=60, steps=None`` for a time budget
    alone; ``device``, ``progress``, ``eval_every``). ``train`` gets the recipe's ``seed`` and the
    target vocabulary's ``<pad>``.

    ``architecture``: ``"transformer"`` (the book's Transformer), ``"gru"`` (the RNN baseline: a
    ``Seq2SeqGRU`` with embeddings of ``recipe.model.d_model`` and a GRU state of
    ``recipe.rnn_hidden_size``) or ``"gru_attention"`` (the same GRUs plus additive attention).
    Every architecture gets the same corpus, vocabularies, batches, loss, optimiser and schedule.
    ``adapt`` (if given) changes the freshly initialised Transformer before training, e.g.
    ``residual.without_residuals`` for chapter 6's ablation.

    Returns (model in eval mode, source vocabulary, target vocabulary, history).
    The same recipe gives the same corpus, the same initial weights and the same batches.
    """
    check_instance("recipe", recipe, BookRecipe, "a pretrained.BookRecipe")
    check_choice("architecture", architecture, ARCHITECTURES)
    check_bool("stop_at_target", stop_at_target)
    if adapt is not None and not callable(adapt):
        raise TypeError(f"adapt: expected a function of the model, or None, got {type(adapt).__name__}")
    if corpus is None:
        corpus = book_corpus(recipe.seed, recipe.n_pairs)
    if not isinstance(corpus, Corpus):
        raise TypeError(f"corpus: expected a corpus.Corpus or None, got {type(corpus).__name__}")
    run = recipe.training.replace(**options)
    src_vocab, tgt_vocab = book_vocabularies(corpus)
    torch.manual_seed(recipe.seed)
    model = _build(architecture, recipe, adapt)(len(src_vocab), len(tgt_vocab))
    batches = make_batches(corpus.train, src_vocab, tgt_vocab, recipe.batch_size, shuffle=True, seed=recipe.seed,
                           by_length=True)
    if stop_at_target:
        if evaluate is not None:
            raise ValueError("evaluate: stop_at_target=True evaluates on the validation split; give one or the other")
        # Judged on the validation split, so that the test split stays unseen by every decision.
        evaluate = _exact_match_reaching(recipe.target_exact_match, "valid", corpus, src_vocab, tgt_vocab)
        run = run.replace(eval_every=run.eval_every or 50)
        callback = _stop_at(recipe.target_exact_match, callback)
    history = train(model, batches, run.replace(seed=recipe.seed, pad_id=tgt_vocab.pad_id),
                    evaluate=evaluate, callback=callback)
    return model, src_vocab, tgt_vocab, history


def train_book_rnn(recipe: BookRecipe = BOOK_RECIPE, *, attention: bool = False, **run: Any
                   ) -> tuple[Seq2SeqGRU, Vocab, Vocab, TrainingHistory]:
    """``train_book_model`` with ``architecture="gru"``, or ``"gru_attention"`` if ``attention``: the RNN
    baseline under the book model's conditions, for ``recipe.rnn_steps`` unless ``steps`` is given. Other
    keywords go to ``train_book_model``."""
    architecture = "gru_attention" if check_bool("attention", attention) else "gru"
    run.setdefault("steps", recipe.rnn_steps)
    return train_book_model(recipe, architecture=architecture, **run)

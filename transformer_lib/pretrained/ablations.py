"""Chapter 6's ablations: the book's recipe with one thing taken away, trained live for the same
short budget, from the same seed, on the same batches, and measured the same way.

The paper's Table 3 varies one part of the base model at a time. Ours, at the book's scale:

* ``baseline``: the book's Transformer (2 layers each side, post-norm, dropout 0.1);
* ``no residual``: every sub-layer without its skip connection (``residual.without_residuals``):
  LayerNorm(Sublayer(x)) in place of LayerNorm(x + Sublayer(x));
* ``one layer``: one encoder and one decoder layer in place of two (a config value);
* ``no dropout``: dropout 0 in place of 0.1 (a config value).

The budget is a few hundred steps, not the shipped model's 1500, so that all four train in under a
minute on a laptop CPU: the recipe's warm-up is shortened and its batches halved to fit
(``ABLATION_RECIPE``). They train in single precision, as chapter 7's live training does: the
numbers they reach depend on the CPU's rounding in either precision (with torch's CPU dispatch
lowered, double precision moved the baseline's exact match from 63.4 % to 64.0 %), so the chapter
checks its claims with margins rather than the printed figures, and single precision halves the time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from ..corpus import Corpus
from ..evaluation import LengthBucket, evaluate_translation
from ..models import Transformer
from ..multi_head_attention import MultiHeadAttention
from ..residual import without_residuals
from ..tokenization import make_batches
from ..training import label_smoothed_cross_entropy
from ..validation import check_instance, check_pairs, check_positive_int
from .recipe import BOOK_RECIPE, BookRecipe, book_corpus, book_vocabularies, train_book_model

ABLATION_STEPS = 300  # per variant: the four train in under a minute on a 2-core CPU, in float32
# The book's recipe, with the warm-up shortened from 300 steps to fit the short budget and smaller
# batches, so that there are more steps to see the curves part.
ABLATION_RECIPE = dataclasses.replace(BOOK_RECIPE, warmup=100, batch_size=64)


@dataclass(frozen=True)
class Ablation:
    """One variant: a recipe, and a change made to the freshly initialised model (or None)."""

    name: str
    recipe: BookRecipe
    adapt: Callable[[Transformer], Transformer] | None = None


def book_ablations(recipe: BookRecipe = ABLATION_RECIPE) -> list[Ablation]:
    """The baseline and its three ablations, each changing one thing of ``recipe``."""
    check_instance("recipe", recipe, BookRecipe, "a BookRecipe")
    model = recipe.model
    return [
        Ablation("baseline", recipe),
        Ablation("no residual", recipe, without_residuals),
        Ablation("one layer", dataclasses.replace(recipe, model=model.replace(n_encoder_layers=1,
                                                                              n_decoder_layers=1))),
        Ablation("no dropout", dataclasses.replace(recipe, model=model.replace(dropout=0.0))),
    ]


@dataclass
class AblationResult:
    """What one variant reached after its training steps."""

    name: str
    losses: list[float]  # the label-smoothed training loss of each step
    valid_loss: float  # cross-entropy per target token on the validation split (teacher forcing)
    exact_match: float  # greedy translation of the evaluated pairs, 0 to 1
    by_length: list[LengthBucket]  # the same, by source length
    parameters: int


@torch.no_grad()
def validation_loss(model: Transformer, corpus: Corpus) -> float:
    """Cross-entropy (no label smoothing) per target token of ``model`` on ``corpus.valid``, with the
    reference as the decoder's input (teacher forcing): how well it predicts each next word."""
    check_instance("model", model, Transformer, "a transformer_lib.models.Transformer")
    check_instance("corpus", corpus, Corpus, "a corpus.Corpus")
    src_vocab, tgt_vocab = book_vocabularies(corpus)
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    device = next(model.parameters()).device  # where training left it: a GPU when there is one
    try:
        for batch in make_batches(corpus.valid, src_vocab, tgt_vocab, 500, shuffle=False):
            batch = batch.to(device)
            logits = model(batch.src, batch.tgt_in)
            total += float(label_smoothed_cross_entropy(logits, batch.tgt_out, 0.0, tgt_vocab.pad_id, "sum"))
            count += int((batch.tgt_out != tgt_vocab.pad_id).sum())
    finally:
        model.train(was_training)
    return total / count


ABLATION_TEST_PAIRS = 500  # the test pairs each variant translates


def run_ablation(
    ablation: Ablation,
    steps: int = ABLATION_STEPS,
    eval_pairs: Sequence[tuple[str, str]] | None = None,
    corpus: Corpus | None = None,
    dtype: torch.dtype = torch.float32,
) -> AblationResult:
    """Train ``ablation`` for ``steps`` steps (``train_book_model`` with its recipe and change), then
    measure its validation loss and its greedy exact match on ``eval_pairs`` (the first ``ABLATION_TEST_PAIRS``
    test pairs unless given). The model is built, trained and measured in ``dtype``, whatever the
    default dtype is (chapter 6 analyses the shipped model in float64)."""
    check_instance("ablation", ablation, Ablation, "an ablations.Ablation")
    check_positive_int("steps", steps)
    check_instance("dtype", dtype, torch.dtype, "a torch.dtype")
    if not dtype.is_floating_point:
        raise ValueError(f"dtype: expected a floating-point dtype, got {dtype}")
    corpus = book_corpus(ablation.recipe.seed, ablation.recipe.n_pairs) if corpus is None else corpus
    pairs = corpus.test[:ABLATION_TEST_PAIRS] if eval_pairs is None else check_pairs("eval_pairs", eval_pairs)
    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # the model's parameters, and every tensor training makes
    try:
        model, src_vocab, tgt_vocab, history = train_book_model(
            steps=steps, recipe=ablation.recipe, corpus=corpus, adapt=ablation.adapt, progress=False)
        evaluation = evaluate_translation(model, pairs, src_vocab, tgt_vocab)
        valid_loss = validation_loss(model, corpus)
    finally:
        torch.set_default_dtype(default_dtype)
    return AblationResult(
        ablation.name, history.losses, valid_loss, evaluation.exact_match,
        evaluation.by_length(), sum(p.numel() for p in model.parameters()),
    )


def narrow_query_key(d_k: int) -> Callable[[Transformer], Transformer]:
    """A change for ``train_book_model(adapt=...)``: every attention layer's W_Q and W_K project to
    ``d_k`` columns per head instead of d_model / n_heads, the values keeping theirs (the paper's
    Table 3, row B, where d_k shrinks at a fixed number of heads). The new W_Q and W_K are drawn
    after the rest of the model, so the other weights are those of the unchanged model's seed."""
    check_positive_int("d_k", d_k)

    def adapt(model: Transformer) -> Transformer:
        for module in model.modules():
            if isinstance(module, MultiHeadAttention):
                module.w_q = nn.Linear(module.d_model, module.n_heads * d_k)
                module.w_k = nn.Linear(module.d_model, module.n_heads * d_k)
                module.d_qk = d_k
        return model

    return adapt


@dataclass(frozen=True)
class Table3Variant:
    """One row of the paper's Table 3 at the book's scale: what changes from ``BOOK_RECIPE``."""

    row: str  # the paper's row: "base", "A" to "E"
    label: str  # what differs, as the table prints it
    recipe: dict = field(default_factory=dict)  # BookRecipe fields
    model: dict = field(default_factory=dict)  # TransformerConfig fields
    narrow_d_k: int | None = None  # row B: queries and keys of this size per head

    def book_recipe(self, seed: int) -> BookRecipe:
        """``BOOK_RECIPE`` with this row's changes and ``seed`` (initial weights, dropout, batch order)."""
        return dataclasses.replace(BOOK_RECIPE, seed=seed, model=BOOK_RECIPE.model.replace(**self.model), **self.recipe)

    def adapt(self) -> Callable[[Transformer], Transformer] | None:
        return None if self.narrow_d_k is None else narrow_query_key(self.narrow_d_k)


def _table3_variants() -> dict[str, Table3Variant]:
    d_model, heads = BOOK_RECIPE.model.d_model, BOOK_RECIPE.model.n_heads
    d_ff = BOOK_RECIPE.model.d_ff
    v = Table3Variant
    variants = {"base": v("base", f"the book's model: N=2, d_model={d_model}, h={heads}, d_ff={d_ff}")}
    for h in (1, 2, 8):  # (A) heads at fixed compute: d_k = d_v = d_model / h
        variants[f"heads_{h}"] = v("A", f"h={h}, d_k=d_v={d_model // h}", model={"n_heads": h})
    variants["d_k_half"] = v("B", f"d_k={d_model // heads // 2} (d_v={d_model // heads})",
                             narrow_d_k=d_model // heads // 2)
    for n in (1, 3, 4):  # (C) depth
        variants[f"layers_{n}"] = v("C", f"N={n}", model={"n_encoder_layers": n, "n_decoder_layers": n})
    for scale, name in ((0.5, "narrow"), (2, "wide")):  # (C) width: d_model and d_ff together, then d_ff alone
        variants[f"width_{name}"] = v("C", f"d_model={int(d_model * scale)}, d_ff={int(d_ff * scale)}",
                                      model={"d_model": int(d_model * scale), "d_ff": int(d_ff * scale)})
        variants[f"d_ff_{name}"] = v("C", f"d_ff={int(d_ff * scale)}", model={"d_ff": int(d_ff * scale)})
    for p in (0.0, 0.3):  # (D) regularisation
        variants[f"dropout_{p}"] = v("D", f"dropout={p}", model={"dropout": p})
    variants["label_smoothing_0"] = v("D", "label smoothing 0", recipe={"label_smoothing": 0.0})
    variants["learned_positions"] = v("E", "learned positions", model={"positional": "learned"})
    variants["rope"] = v("E", "rotary positions (RoPE; not in the paper)", model={"positional": "rope"})
    return variants


# The paper's Table 3 at the book's scale (benchmarks/table3.py trains each on three paired seeds;
# book/data/table3.json holds what they reached; chapter 6 shows it).
TABLE3_VARIANTS: dict[str, Table3Variant] = _table3_variants()

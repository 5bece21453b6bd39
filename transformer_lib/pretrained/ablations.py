"""Chapter 6's Table 3: the book's model with one part changed at a time, on paired seeds.

The paper's Table 3 varies its base model row by row: (A) the number of heads at fixed compute,
(B) a smaller d_k, (C) depth and width, (D) dropout and label smoothing, (E) learned positions.
``TABLE3_VARIANTS`` holds the same rows for the book's model (and two the paper does not have:
rotary positions, and the model without its residual connections, ``residual.without_residuals``).
``run_table3`` trains one of them from one seed and measures it at each step budget;
``benchmarks/table3.py`` runs every row from several seeds and stores what they reached in
``TABLE3_PATH``, which chapter 6 reads (17 variants x 5 seeds x 1500 steps is two to three hours of a
2-core CPU, far too long for a page). Chapter 6's optional cell retrains one row live with ``run_table3``.

A seed sets the initial weights, the dropout masks and the batch order, so that a variant and the
base trained from the same seed differ only by the variant's change (where the change allows: a
model of another shape draws other weights). Effects are paired seed by seed (``paired_differences``)
and judged by the book's one rule (``transformer_lib.verdict``: five or more paired seeds, a 95 %
t interval that excludes zero, a stated minimum size), ``table3_verdict``. ``PLACEBO`` is the base
recipe under a second, disjoint set of seeds: a row the rule must call "within the noise".
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from ..corpus import Corpus
from ..evaluation import evaluate_translation
from ..models import Transformer
from ..multi_head_attention import MultiHeadAttention
from ..residual import without_residuals
from ..tokenization import make_batches
from ..training import label_smoothed_cross_entropy
from ..validation import check_instance, check_int, check_number, check_positive_int
from ..verdict import Verdict
from ..verdict import verdict as judge
from .recipe import BOOK_RECIPE, BookRecipe, book_corpus, book_vocabularies, train_book_model


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


def measure_translation(model: Transformer, corpus: Corpus, decoded: int | None = None) -> dict[str, float]:
    """Validation exact match (0 to 1) and BLEU (0 to 100) of greedy translation, and the perplexity
    (exp of ``validation_loss``), in eval mode; exact match and BLEU on the first ``decoded`` pairs if
    given (an untrained model decodes every sentence to the length limit, slowly)."""
    src_vocab, tgt_vocab = book_vocabularies(corpus)
    was_training = model.training
    model.eval()
    try:
        result = evaluate_translation(model, corpus.valid[:decoded], src_vocab, tgt_vocab)
        return {"exact_match": result.exact_match, "bleu": result.bleu,
                "perplexity": math.exp(validation_loss(model, corpus))}
    finally:
        model.train(was_training)


def run_table3(name: str, seed: int, budgets: Sequence[int], *, corpus: Corpus | None = None,
               decoded: int | None = None, dtype: torch.dtype = torch.float32) -> dict:
    """Train variant ``name`` of ``TABLE3_VARIANTS`` from pair ``seed`` (its recipe's seed: ``train_seed``) for
    ``max(budgets)`` steps, measuring it (``measure_translation``) when it reaches each budget. The schedule
    does not depend on the number of steps, so a measurement at step k is the model a run stopped at k
    would give, and measuring in eval mode draws no random number, so the run goes on as if unmeasured.
    Trains in ``dtype`` (single precision, as chapter 7), whatever the default dtype is (chapter 6: double).

    Returns {"variant", "seed", "train_seed", "budgets": {step: measures}, "losses", "train_time_s", "parameters"}."""
    if name not in TABLE3_VARIANTS:
        raise ValueError(f"name: expected one of {sorted(TABLE3_VARIANTS)}, got {name!r}")
    budgets = sorted({check_positive_int("budgets", b) for b in budgets})
    if not budgets:
        raise ValueError("budgets: expected at least one step budget, got none")
    check_instance("dtype", dtype, torch.dtype, "a torch.dtype")
    if not dtype.is_floating_point:
        raise ValueError(f"dtype: expected a floating-point dtype, got {dtype}")
    variant = TABLE3_VARIANTS[name]
    corpus = book_corpus(BOOK_RECIPE.seed, BOOK_RECIPE.n_pairs) if corpus is None else corpus  # one for every seed
    models: list[Transformer] = []
    measured: dict[str, dict] = {}

    def at_budget(report) -> None:
        if report.step in budgets[:-1]:
            measured[str(report.step)] = measure_translation(models[0], corpus, decoded)

    def build(model: Transformer) -> Transformer:
        changed = variant.adapt()
        models.append(model if changed is None else changed(model))
        return models[0]

    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # the model's parameters, and every tensor training makes
    try:
        model, _, _, history = train_book_model(steps=budgets[-1], recipe=variant.book_recipe(seed), corpus=corpus,
                                                progress=False, callback=at_budget, adapt=build)
        measured[str(budgets[-1])] = measure_translation(model, corpus, decoded)
    finally:
        torch.set_default_dtype(default_dtype)
    return {"variant": name, "seed": seed, "train_seed": variant.book_recipe(seed).seed, "budgets": measured,
            "losses": history.losses,
            "train_time_s": history.train_time_s, "parameters": sum(p.numel() for p in model.parameters())}


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


# The paper's Table 3 (Vaswani et al. 2017): perplexity (per word-piece) and BLEU on the English-German
# development set, newstest2013, for the base model and the rows whose change the book's variants make.
PAPER_TABLE3_BASE = ("base: N=6, d_model=512, h=8, d_ff=2048", 4.92, 25.8)


@dataclass(frozen=True)
class Table3Variant:
    """One row of the paper's Table 3 at the book's scale: what changes from ``BOOK_RECIPE``."""

    row: str  # the paper's row: "base", "A" to "E", or "-" (not in the paper)
    label: str  # what differs, as the table prints it
    recipe: dict = field(default_factory=dict)  # BookRecipe.with_training's: batch_size, TrainingOptions fields
    model: dict = field(default_factory=dict)  # TransformerConfig fields
    narrow_d_k: int | None = None  # row B: queries and keys of this size per head
    residuals: bool = True  # False: every sub-layer without its skip connection (without_residuals)
    paper: tuple[str, float, float] | None = None  # the paper's nearest row: (its change, dev PPL, dev BLEU)
    seed_offset: int = 0  # the placebo: pair s trains from seed s + offset, a set disjoint from the base's

    def book_recipe(self, seed: int) -> BookRecipe:
        """``BOOK_RECIPE`` with this row's changes and ``seed`` (initial weights, dropout, batch order)."""
        return dataclasses.replace(BOOK_RECIPE.with_training(**self.recipe), seed=seed + self.seed_offset,
                                   model=BOOK_RECIPE.model.replace(**self.model))

    def adapt(self) -> Callable[[Transformer], Transformer] | None:
        """The change made to the freshly built model, or None (a config or recipe change only)."""
        if not self.residuals:
            return without_residuals
        return None if self.narrow_d_k is None else narrow_query_key(self.narrow_d_k)


PLACEBO, PLACEBO_SEEDS = "placebo", 1000  # the placebo row's name, and its first seed (the base's are 0, 1, ...)


def _table3_variants() -> dict[str, Table3Variant]:
    d_model, heads = BOOK_RECIPE.model.d_model, BOOK_RECIPE.model.n_heads
    d_ff = BOOK_RECIPE.model.d_ff
    v = Table3Variant
    variants = {"base": v("base", f"base: N=2, d_model={d_model}, h={heads}, d_ff={d_ff}",
                          paper=PAPER_TABLE3_BASE)}
    # (A) heads at fixed compute, d_k = d_v = d_model / h; the paper's rows halve, quarter... its 8 heads
    for h, paper in ((1, ("h=1", 5.29, 24.9)), (2, ("h=4", 5.00, 25.5)), (8, ("h=16", 4.91, 25.8))):
        variants[f"heads_{h}"] = v("A", f"h={h}, d_k=d_v={d_model // h}", model={"n_heads": h}, paper=paper)
    variants["d_k_half"] = v("B", f"d_k={d_model // heads // 2} (d_v={d_model // heads})",
                             narrow_d_k=d_model // heads // 2, paper=("d_k=32", 5.01, 25.4))
    # (C) depth: the paper's base has 6 layers, ours 2; its nearest rows go to 2 and to 8
    for n, paper in ((1, ("N=2", 6.11, 23.7)), (3, ("N=8", 4.88, 25.5)), (4, None)):
        variants[f"layers_{n}"] = v("C", f"N={n}", model={"n_encoder_layers": n, "n_decoder_layers": n}, paper=paper)
    # (C) width: d_model and d_ff together, halved and doubled (the paper also varies d_ff alone: not here)
    for scale, name, paper in ((0.5, "narrow", ("d_model=256", 5.75, 24.5)), (2, "wide", ("d_model=1024", 4.66, 26.0))):
        variants[f"width_{name}"] = v("C", f"d_model={int(d_model * scale)}, d_ff={int(d_ff * scale)}",
                                      model={"d_model": int(d_model * scale), "d_ff": int(d_ff * scale)}, paper=paper)
    # (D) regularisation
    for p, paper in ((0.0, ("P_drop=0.0", 5.77, 24.6)), (0.3, ("P_drop=0.2", 4.95, 25.5))):
        variants[f"dropout_{p}"] = v("D", f"dropout={p}", model={"dropout": p}, paper=paper)
    variants["label_smoothing_0"] = v("D", "label smoothing 0", recipe={"label_smoothing": 0.0},
                                      paper=("eps_ls=0.0", 4.67, 25.3))
    # (E) positions
    variants["learned_positions"] = v("E", "learned positions", model={"positional": "learned"},
                                      paper=("positional embedding", 4.92, 25.7))
    variants["rope"] = v("E", "rotary positions (RoPE; not in the paper)", model={"positional": "rope"})
    # not in the paper's table: what the residual connections are worth
    variants["no_residual"] = v("-", "no residual connections (not in the paper)", residuals=False)
    # no change at all: the base recipe from other seeds, paired with the base's; the rule must find nothing
    variants[PLACEBO] = v("-", f"placebo: the base from seeds {PLACEBO_SEEDS}+ (no change)", seed_offset=PLACEBO_SEEDS)
    return variants


# The paper's Table 3 at the book's scale (benchmarks/table3.py trains each on paired seeds;
# TABLE3_PATH holds what they reached; chapter 6 shows it).
TABLE3_VARIANTS: dict[str, Table3Variant] = _table3_variants()
TABLE3_PATH = Path(__file__).with_name("table3.json")  # package data: chapter 6 downloaded alone finds it


def load_table3(path: Path | str = TABLE3_PATH) -> dict:
    """What ``benchmarks/table3.py`` measured: budgets, per-variant spreads and paired effects, every run."""
    return json.loads(Path(path).read_text())


TABLE3_DATA = "the JSON of benchmarks/table3.py (load_table3())"


def _check_table3(data: object) -> dict:
    """``data`` must be what ``load_table3`` reads: a dict with its budgets, rows and runs."""
    check_instance("data", data, dict, TABLE3_DATA)
    kinds = {"budgets": list, "rows": dict, "runs": list}
    if any(not isinstance(data.get(key), kind) for key, kind in kinds.items()):
        raise ValueError(f"data: expected {TABLE3_DATA}, a dict with 'budgets' (a list), 'rows' (a dict) and "
                         f"'runs' (a list), got a dict with keys {sorted(map(str, data))}")
    return data


def _check_name(name: str, value: object, names: list[str], what: str) -> str:
    check_instance(name, value, str, f"{what}, one of {names}")
    if value not in names:
        raise ValueError(f"{name}: expected {what}, one of {names}, got {value!r}")
    return value


def table3_at(data: dict, budget: int) -> dict:
    """``data`` at one step budget, in the shape of the paper ledger's results (a run per variant and
    seed, with its measures), for ``figures.ledger.ledger_effects_figure(..., base="base")``."""
    _check_table3(data)
    check_int("budget", budget)
    if str(budget) not in map(str, data["budgets"]):
        raise ValueError(f"budget: expected one of the measured budgets {data.get('budgets')}, got {budget!r}")
    runs = [{"variant": r["variant"], "seed": r["seed"], **r["budgets"][str(budget)]} for r in data["runs"]]
    return {"rows": dict(data["rows"]), "runs": runs}


def table3_effect(data: dict, variant: str, budget: int, measure: str = "exact_match") -> dict[str, float]:
    """The paired effect of ``variant`` on ``measure`` at ``budget`` steps: the min, median, max (and
    mean) over seeds of (variant - base), seed by seed."""
    _check_table3(data)
    _check_name("variant", variant, sorted(data["rows"]), "a variant of the stored table")
    budgets = data["rows"][variant]["budgets"]
    check_int("budget", budget)
    if str(budget) not in budgets:
        raise ValueError(f"budget: expected one of {sorted(budgets, key=int)}, got {budget!r}")
    _check_name("measure", measure, sorted(budgets[str(budget)]), "a stored measure")
    return budgets[str(budget)][measure]["effect"]


def paired_differences(data: dict, variant: str, budget: int, measure: str = "exact_match") -> list[float]:
    """``variant`` - base on ``measure`` at ``budget`` steps, seed by seed, over the seeds both have
    (from the stored runs themselves, not their summary)."""
    check_instance("data", data, dict, "the JSON of benchmarks/table3.py (load_table3())")
    table3_effect(data, variant, budget, measure)  # the same checks of its arguments
    step = str(budget)
    runs = {(r["variant"], r["seed"]): r["budgets"][step][measure] for r in data["runs"] if step in r["budgets"]}
    seeds = sorted(s for v, s in runs if v == variant and ("base", s) in runs)
    return [runs[variant, s] - runs["base", s] for s in seeds]


def table3_verdict(data: dict, variant: str, budget: int, measure: str = "exact_match") -> Verdict:
    """The book's rule (``transformer_lib.verdict.verdict``) on ``variant`` against the base at ``budget``
    steps: its paired differences, and the base's median for a minimum relative to it."""
    differences = paired_differences(data, variant, budget, measure)  # checks the arguments first
    base = data["rows"]["base"]["budgets"][str(budget)][measure]["values"]["median"]
    return judge(differences, measure, base)


def compare_with_table3(data: dict, run: dict) -> str:
    """How one run of ``run_table3`` (a reader's, on their machine) compares with the stored seeds: its
    exact match at each budget against the stored [min, max], and its change against the stored base
    run of the same seed against the stored spread of that change."""
    _check_table3(data)
    _check_run(run)
    name, seed = run["variant"], run["seed"]
    if name not in data["rows"]:
        raise ValueError(f"run: variant {name!r} is not in the stored table ({sorted(data['rows'])})")
    lines = []
    base = next((r for r in data["runs"] if r["variant"] == "base" and r["seed"] == seed), None)
    for step, measures in run["budgets"].items():
        stored = data["rows"][name]["budgets"].get(step)
        if stored is None:
            lines.append(f"step {step}: not a stored budget ({', '.join(map(str, data['budgets']))})")
            continue
        values, mine = stored["exact_match"]["values"], measures["exact_match"]
        inside = values["min"] <= mine <= values["max"]
        lines.append(f"step {step}: exact match {mine:.1%}; stored seeds {values['min']:.1%} to {values['max']:.1%} "
                     f"({'inside' if inside else 'outside'} their range)")
        if base is not None and name != "base":
            change, effect = mine - base["budgets"][step]["exact_match"], stored["exact_match"]["effect"]
            lines.append(f"  against the stored base of seed {seed}: {100 * change:+.1f} points; stored changes "
                         f"{100 * effect['min']:+.1f} to {100 * effect['max']:+.1f}")
    return "\n".join(lines)


def _check_run(run: object) -> None:
    """``run`` must be what ``run_table3`` returns: its variant, seed, and a finite exact match in [0, 1]
    at each budget (a NaN would print as "nan%")."""
    check_instance("run", run, dict, "the result of run_table3")
    if not isinstance(run.get("variant"), str) or not isinstance(run.get("seed"), int) \
            or not isinstance(run.get("budgets"), dict):
        raise ValueError(f"run: expected the result of run_table3, with 'variant' (a str), 'seed' (an int) and "
                         f"'budgets' (a dict), got a dict with keys {sorted(map(str, run))}")
    for step, measures in run["budgets"].items():
        where = f"run['budgets'][{step!r}]"
        if not isinstance(measures, dict) or "exact_match" not in measures:
            raise ValueError(f"{where}: expected the measures at that budget, with 'exact_match', got {measures!r:.80}")
        value = check_number(f"{where}['exact_match']", measures["exact_match"])
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{where}['exact_match']: expected a share in [0, 1], got {value}")


def table3_claim(data: dict, variant: str, budget: int, measure: str = "exact_match") -> str:
    """What the stored seeds say of ``variant`` against the base at ``budget`` steps, as the chapters
    write it: the rule's verdict, the mean paired change and its 95 % interval, e.g.
    "worse (-4.0 points [-6.1, -1.9], 5 seeds)" or "fewer than 5 seeds (+0.3 points [-0.6, +1.2], 3 seeds)"."""
    return table3_verdict(data, variant, budget, measure).text()


def table3_labels() -> dict[str, str]:
    """Each variant's name in the figures: the paper's row letter, the change, and the paper's own change
    in development-set BLEU for its nearest row (where it has one), against its base."""
    labels = {}
    for name, variant in TABLE3_VARIANTS.items():
        has_paper = variant.paper is not None and name != "base"
        paper = f" (paper {variant.paper[2] - PAPER_TABLE3_BASE[2]:+.1f} BLEU)" if has_paper else ""
        labels[name] = f"{variant.row}: {variant.label.split(' (')[0]}{paper}"
    return labels

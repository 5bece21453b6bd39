"""The paper and this book, side by side: every way the book's model, data, training or decoding
departs from *Attention Is All You Need* (Vaswani et al. 2017), and the paper's results.

``LEDGER`` holds one ``Departure`` per choice. Each row quotes the paper with its section, says
what the book does instead and where that lives, why, and what restores the paper's choice. The
book's value is read from the code each time it is asked for (``Departure.book_value()``), never
typed: change a default (the recipe, a config preset, a function's default) and ``ledger()`` lists
the new value, and marks a row whose value is no longer the one its explanation was written for.
``tests/test_paper.py`` fails in that case, so that the text is updated with the code.

``PAPER_RESULTS`` states the paper's own numbers once (Table 2 and section 5.2), for the rows that
cannot apply at the book's scale. ``benchmarks/paper_ledger.py`` measures the rows that can.
"""

from __future__ import annotations

import dataclasses
import html
import inspect
from collections.abc import Callable
from dataclasses import dataclass

import torch

from . import decoding, evaluation, positional_encoding, training
from .pretrained import recipe
from .tokenization import Vocab
from .validation import check_instance, check_iterable, check_positive_int, check_token_list

# The paper's values for the switches, read by the benchmark (``None``: the paper has none).
PAPER: dict[str, object] = {
    "warmup": training.PAPER_WARMUP,  # section 5.3
    "lr_scale": 1.0,  # equation 3 has no factor
    "clip_norm": None,  # section 5.3 names no clipping
    "tie_output_embedding": True,  # section 3.4
    "layer_norm_eps": 1e-6,  # not in the paper: the authors' tensor2tensor code
    "beam_size": 4,  # section 6.1
    "alpha": 0.6,  # section 6.1
    "max_output_extra": 50,  # section 6.1: input length + 50
    "checkpoints_averaged": 5,  # section 6.1, base models (20 for the big ones)
}

# Table 2 (BLEU on newstest2014, training cost in FLOPs) and section 5.2 (hardware and time).
PAPER_RESULTS: dict[str, object] = {
    "bleu": {"EN-DE": {"base": 27.3, "big": 28.4}, "EN-FR": {"base": 38.1, "big": 41.8}},
    "training_flops": {"base": 3.3e18, "big": 2.3e19},
    "hardware": "one machine with 8 NVIDIA P100 GPUs",
    "training_time": {
        "base": "100,000 steps or 12 hours (about 0.4 seconds a step)",
        "big": "300,000 steps (3.5 days; 1.0 second a step)",
    },
    "parameters": {"base": 65e6, "big": 213e6},  # Table 3
    "source": "Vaswani et al. 2017, Table 2 (BLEU, FLOPs), section 5.2 (time), Table 3 (parameters)",
}


# The paper's base model averaged its last 5 checkpoints, written 10 minutes apart in 12 hours of training
# (section 6.1, section 5.2); benchmarks/paper_ledger.py keeps them the same fraction of its own training apart.
PAPER_CHECKPOINT_FRACTION = 10 / (12 * 60)


def checkpoint_interval(steps: int) -> int:
    """The steps between two averaged checkpoints of a ``steps``-step run, as the paper's fraction of its
    training (at least 1)."""
    check_positive_int("steps", steps)
    return max(1, round(steps * PAPER_CHECKPOINT_FRACTION))


def _default(function: Callable, name: str) -> object:
    """A parameter's default value, read from the function's signature."""
    return inspect.signature(function).parameters[name].default


def _field_default(cls: type, name: str) -> object:
    """The default of dataclass ``cls``'s field ``name``, as the code has it now."""
    return next(f.default for f in dataclasses.fields(cls) if f.name == name)


def _book_model_shape() -> dict[str, int]:
    m = recipe.BOOK_RECIPE.model
    return {"d_model": m.d_model, "n_heads": m.n_heads, "layers": m.n_encoder_layers, "d_ff": m.d_ff}


def _variance() -> str:
    """Which variance the model's LayerNorm divides by, measured: [0, 2] has biased variance 1."""
    x = torch.tensor([[0.0, 2.0]])
    y = torch.nn.functional.layer_norm(x, (2,), eps=0.0)
    return "biased" if torch.allclose(y, torch.tensor([[-1.0, 1.0]])) else "unbiased"


def _max_output_rule() -> str:
    """The book's default output limit as a formula a * input + b, measured at two lengths."""
    at_1, at_2 = decoding.default_max_len(None, 1), decoding.default_max_len(None, 2)
    slope, intercept = at_2 - at_1, at_1 - (at_2 - at_1)
    return f"{slope} x input + {intercept}"


def _positional_dtype() -> str:
    dtype = _default(positional_encoding.sinusoidal_table, "dtype")
    return f"computed in float64, stored as the model's dtype ({str(dtype).replace('torch.', '')} by default)"


@dataclass(frozen=True)
class Departure:
    """One row of the ledger."""

    key: str  # short name, used by the benchmark and the appendix
    topic: str
    paper: str  # the paper's choice, quoted
    section: str  # where the paper says it
    book: str  # what the book does, in words; ``{value}`` is replaced by the live value
    where: str  # module, config field or recipe field
    why: str
    switch: str | None  # code that restores the paper's choice; None: none exists at this scale
    read: Callable[[], object]  # the book's value, read from the code now
    written_for: object  # the value ``book`` and ``why`` were written for (the test compares)
    paper_value: object = None  # the paper's value where it is one number or flag (None: not comparable)
    measured: bool = False  # benchmarks/paper_ledger.py trains or decodes with the switch
    chapter: str = ""  # the notebook that teaches this part (book/<chapter>.ipynb)
    scale_note: str = ""  # for rows that cannot be measured here: why, and the paper's number

    def book_value(self) -> object:
        return self.read()

    @property
    def differs(self) -> bool:
        """Does the book's current value differ from the paper's? (Rows with no comparable value: yes.)"""
        return self.paper_value is None or self.read() != self.paper_value

    @property
    def up_to_date(self) -> bool:
        """Is the book's value still the one this row's explanation was written for?"""
        return self.read() == self.written_for

    def as_dict(self) -> dict[str, object]:
        value = self.read()
        where = self.section if self.section.startswith("Table") else f"section {self.section}"
        return {
            "key": self.key, "topic": self.topic, "paper": f"{self.paper} ({where})",
            "book": self.book.format(value=value), "where": self.where, "why": self.why,
            "switch": self.switch or "none at this scale", "book_value": value,
            "matches_paper": not self.differs, "up_to_date": self.up_to_date, "chapter": self.chapter,
        }


def _r() -> recipe.BookRecipe:
    return recipe.BOOK_RECIPE  # looked up at each call: a reader may replace the module's recipe


LEDGER: tuple[Departure, ...] = (
    Departure(
        "data", "training data",
        '"the standard WMT 2014 English-German dataset consisting of about 4.5 million sentence pairs"; '
        'English-French: "36M sentences"; development set newstest2013, test set newstest2014',
        "5.1, 6.2", "{value} generated English-French sentence pairs (split 80/10/10, plus novel pairs)",
        "corpus.make_corpus; BookRecipe.n_pairs",
        "A generated corpus downloads nothing, trains on a CPU in minutes, and has a grammar that makes "
        "every translation checkable (exact match is meaningful)",
        None, lambda: _r().n_pairs, 15_000, chapter="07_training_inference",
        scale_note="WMT is not shipped: the paper's BLEU on newstest2014 is " + ", ".join(
            f"{pair} {scores['base']} (base) and {scores['big']} (big)"
            for pair, scores in PAPER_RESULTS["bleu"].items()) + " (Table 2)"),
    Departure(
        "tokens", "tokens and vocabulary",
        '"byte-pair encoding, which has a shared source-target vocabulary of about 37000 tokens"; '
        'EN-FR: "a 32000 word-piece vocabulary"', "5.1",
        "{value}: whole words, one vocabulary per language, built from the training split",
        "pretrained.recipe.book_vocabularies; tokenization.Vocab (BPE: tokenization.BPETokenizer)",
        "The generated corpus has a closed vocabulary of a few hundred words: every word is seen in "
        "training, so subwords would only lengthen the sequences",
        None, lambda: "word level" if all(type(v) is Vocab for v in recipe.book_vocabularies(recipe.book_corpus()))
        else "other", "word level", chapter="02_embeddings",
        scale_note="needs the paper's open-vocabulary data to matter"),
    Departure(
        "model_size", "model size",
        "base: N = 6 layers, d_model = 512, d_ff = 2048, h = 8 (65M parameters); big: d_model = 1024, "
        "d_ff = 4096, h = 16 (213M)", "Table 3",
        "the 'book' preset {value}",
        'config.PRESETS["book"]; BookRecipe.model',
        "Trains in a couple of minutes on one CPU, and the task needs no more (chapter 6's ablations)",
        'dataclasses.replace(BOOK_RECIPE, model=TransformerConfig.preset("base"))',
        _book_model_shape, {"d_model": 64, "n_heads": 4, "layers": 2, "d_ff": 256},
        paper_value={"d_model": 512, "n_heads": 8, "layers": 6, "d_ff": 2048}, chapter="06_encoder_decoder",
        scale_note="a base model trains 100,000 steps in 12 hours on 8 P100s; on one CPU thread even the "
                   "book's step budget would take hours"),
    Departure(
        "batching", "batch size",
        '"Each training batch contained a set of sentence pairs containing approximately 25000 source '
        'tokens and 25000 target tokens"', "5.1",
        "{value} sentence pairs a batch (about a thousand target tokens), batched by length as the paper",
        "BookRecipe.batch_size; tokenization.make_batches(by_length=True)",
        "12000 training pairs hold about 100,000 target tokens: a 25000-token batch would be a quarter "
        "of the corpus, four steps an epoch",
        None, lambda: _r().batch_size, 128, chapter="07_training_inference",
        scale_note="a batch of 25000 tokens is a quarter of the book's training split"),
    Departure(
        "steps", "training length and hardware",
        '"We trained the base models for a total of 100,000 steps or 12 hours" on "one machine with '
        '8 NVIDIA P100 GPUs"; big: "300,000 steps (3.5 days)"', "5.2",
        "{value} steps on one CPU (chapter 7 stops earlier, at 95% exact match on the validation split)",
        "BookRecipe.training.steps; BookRecipe.target_exact_match",
        "A few minutes on a laptop; the small task is learnt by then",
        None, lambda: _r().training.steps, 1500, paper_value=100_000, chapter="07_training_inference",
        scale_note=f"the paper: {PAPER_RESULTS['training_time']['base']} for base, "
                   f"{PAPER_RESULTS['training_time']['big']} for big, on {PAPER_RESULTS['hardware']}"),
    Departure(
        "warmup", "learning-rate warm-up",
        '"We used warmup_steps = 4000"', "5.3",
        "warmup_steps = {value}", "BookRecipe.training.warmup",
        "4000 steps of warm-up would be more than the book's whole training: the learning rate would "
        "still be rising when training ends",
        "BOOK_RECIPE.with_training(warmup=4000)",
        lambda: _r().training.warmup, 300, paper_value=PAPER["warmup"], measured=True, chapter="07_training_inference"),
    Departure(
        "learning_rate", "learning-rate scale",
        "lrate = d_model^-0.5 * min(step_num^-0.5, step_num * warmup_steps^-1.5) (equation 3, no factor)",
        "5.3", "equation 3 times {value}", "BookRecipe.training.lr_scale",
        "d_model^-0.5 is large for d_model = 64; half the rate is steadier over the book's few steps",
        "BOOK_RECIPE.with_training(lr_scale=1.0)",
        lambda: _r().training.lr_scale, 0.5, paper_value=PAPER["lr_scale"], measured=True,
        chapter="07_training_inference"),
    Departure(
        "gradient_clipping", "gradient clipping",
        "no clipping: the optimiser section names Adam and the schedule only", "5.3",
        "gradients clipped to norm {value}", "training.TrainingOptions.clip_norm",
        "A guard against one huge gradient in the first steps of a small model",
        "BOOK_RECIPE.with_training(clip_norm=None)",
        lambda: _field_default(training.TrainingOptions, "clip_norm"), 1.0, paper_value=PAPER["clip_norm"],
        measured=True, chapter="07_training_inference"),
    Departure(
        "optimizer", "optimiser",
        '"We used the Adam optimizer with beta_1 = 0.9, beta_2 = 0.98 and epsilon = 10^-9"', "5.3",
        "Adam, betas and epsilon {value}", "training.paper_adam (PAPER_BETAS, PAPER_EPS)",
        "The same as the paper", None,
        lambda: (*training.PAPER_BETAS, training.PAPER_EPS), (0.9, 0.98, 1e-9), paper_value=(0.9, 0.98, 1e-9),
        chapter="07_training_inference"),
    Departure(
        "label_smoothing", "label smoothing",
        '"we employed label smoothing of value epsilon_ls = 0.1"', "5.4",
        "{value}, spread over all V classes as torch's cross_entropy does (the paper does not say how)",
        "BookRecipe.training.label_smoothing; training.label_smoothed_cross_entropy",
        "The same value as the paper", None,
        lambda: _r().training.label_smoothing, 0.1, paper_value=0.1, chapter="07_training_inference"),
    Departure(
        "dropout", "dropout",
        '"We apply dropout to the output of each sub-layer ... and to the sums of the embeddings and the '
        'positional encodings ... P_drop = 0.1" (big EN-DE: 0.3); nothing on the attention weights', "5.4",
        "(residual and embedding dropout, attention-weight dropout) = {value}",
        "TransformerConfig.dropout, .attention_dropout",
        "The same as the base model", None,
        lambda: (_r().model.dropout, _r().model.attention_dropout), (0.1, 0.0), paper_value=(0.1, 0.0),
        chapter="06_encoder_decoder"),
    Departure(
        "weight_tying", "weight tying",
        '"we share the same weight matrix between the two embedding layers and the pre-softmax linear '
        'transformation"', "3.4",
        "(output layer tied to the target embedding, source and target embeddings shared) = {value}",
        "TransformerConfig.tie_output_embedding, .share_source_target_embedding",
        "English and French have separate word vocabularies here, so the source embedding cannot be "
        "shared; tying the output layer alone is left off to keep the three matrices separate in chapter 6",
        "BOOK_RECIPE.model.replace(tie_output_embedding=True) (sharing the source needs one vocabulary)",
        lambda: (_r().model.tie_output_embedding, _r().model.share_source_target_embedding), (False, False),
        paper_value=(True, True), measured=True, chapter="06_encoder_decoder"),
    Departure(
        "layer_norm_eps", "LayerNorm epsilon",
        "not stated (the paper cites Ba et al. 2016; the authors' tensor2tensor code uses 1e-6)", "3.1",
        "epsilon = {value}, inside the square root", "TransformerConfig.layer_norm_eps",
        "PyTorch's nn.LayerNorm default, so that the book's layers equal PyTorch's",
        "BOOK_RECIPE.model.replace(layer_norm_eps=1e-6)",
        lambda: _r().model.layer_norm_eps, 1e-5, paper_value=PAPER["layer_norm_eps"], measured=True,
        chapter="06_encoder_decoder"),
    Departure(
        "layer_norm_variance", "LayerNorm variance",
        "layer normalisation of Ba et al. 2016: the biased variance (divide by d_model)", "3.1",
        "{value} variance, as torch.nn.LayerNorm (the Annotated Transformer of 2018 used the unbiased one)",
        "residual.LayerNorm", "The same as the paper", None,
        _variance, "biased", paper_value="biased", chapter="06_encoder_decoder"),
    Departure(
        "norm_placement", "norm placement",
        '"the output of each sub-layer is LayerNorm(x + Sublayer(x))" (post-norm)', "3.1",
        "norm_first = {value} (post-norm, as the paper; True gives pre-norm)", "TransformerConfig.norm_first",
        "The same as the paper", None,
        lambda: _r().model.norm_first, False, paper_value=False, chapter="06_encoder_decoder"),
    Departure(
        "positional_dtype", "positional table",
        "sinusoidal encodings, PE(pos, 2i) = sin(pos / 10000^(2i/d_model)); the precision is not stated",
        "3.5", "{value}", "positional_encoding.sinusoidal_table",
        "Rounded once from exact values, so a float64 model holds the exact table, not a float32 one widened",
        None, _positional_dtype, "computed in float64, stored as the model's dtype (float32 by default)",
        chapter="03_positional_encoding",
        scale_note="no switch: rounding the table to float32 moves it by at most 3e-8, far below what "
                   "training can tell apart"),
    Departure(
        "beam_search", "beam search",
        '"we used beam search with a beam size of 4 and length penalty alpha = 0.6"', "6.1",
        "the book's scores use greedy decoding (evaluate_translation's beam_size = {value}); "
        "beam_search's defaults are the paper's 4 and 0.6",
        "evaluation.evaluate_translation(beam_size=...); decoding.beam_search",
        "Greedy decoding is what chapter 7 teaches first, and is several times faster on a CPU",
        "evaluate_translation(..., beam_size=4, alpha=0.6)",
        lambda: _default(evaluation.evaluate_translation, "beam_size"), 1, paper_value=PAPER["beam_size"],
        measured=True, chapter="07_training_inference"),
    Departure(
        "max_output_length", "output length limit",
        '"We set the maximum output length during inference to input length + 50, but terminate early '
        'when possible"', "6.1",
        "{value} tokens, capped by the positional table (config.max_len)", "decoding.default_max_len",
        "The book's sentences are short and French is about as long as English: twice the input is room "
        "enough, and input + 50 would exceed the book's 64-position table for most sentences",
        "translate_batch(..., max_len=min(input + 50, config.max_len))",
        _max_output_rule, "2 x input + 10", paper_value="1 x input + 50", measured=True,
        chapter="07_training_inference"),
    Departure(
        "checkpoint_averaging", "checkpoint averaging",
        '"For the base models, we used a single model obtained by averaging the last 5 checkpoints, which '
        'were written at 10-minute intervals. For the big models, we averaged the last 20 checkpoints."',
        "6.1", "{value}", "pretrained.train_book_model returns the last step's weights",
        "One model, one set of weights, simpler to ship and to inspect",
        "average the state_dicts of the last 5 checkpoints (benchmarks/paper_ledger.py does it)",
        lambda: "the weights of the last step", "the weights of the last step", measured=True,
        chapter="07_training_inference"),
)


def _row(key: object, name: str) -> Departure:
    check_instance(name, key, str, "a row's key (str)")
    for departure in LEDGER:
        if departure.key == key:
            return departure
    raise ValueError(f"{name}: expected one of {[d.key for d in LEDGER]}, got {key!r:.60}")


def row(key: str) -> Departure:
    """The ledger row named ``key``."""
    return _row(key, "key")


class Ledger:
    """The ledger as read now: a table in a notebook (HTML), text in a terminal."""

    columns = ("topic", "paper", "book", "where", "why", "switch")

    def __init__(self, rows: list[dict[str, object]]) -> None:
        check_iterable("rows", rows, "a list of the rows' dicts (ledger(...).rows)")
        for i, row in enumerate(rows):
            if not isinstance(row, dict) or "key" not in row:
                raise TypeError(f"rows[{i}]: expected a row's dict with a 'key' (Departure.as_dict), got {row!r:.60}")
        self.rows = rows

    def to_dataframe(self):  # pandas is not a dependency of the library: imported only here
        import pandas as pd

        return pd.DataFrame(self.rows).set_index("key")

    def _repr_html_(self) -> str:
        head = "".join(f"<th scope='col'>{c}</th>" for c in self.columns)
        body = []
        for r in self.rows:
            mark = "" if r["up_to_date"] else " <strong>(changed since the row was written)</strong>"
            same = " (same as the paper)" if r["matches_paper"] else ""
            cells = [html.escape(str(r[c])) + (same + mark if c == "book" else "") for c in self.columns]
            body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        return (f"<table><caption>The paper and this book: {len(self.rows)} rows</caption>"
                f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")

    def __repr__(self) -> str:
        lines = []
        for r in self.rows:
            state = "same as the paper" if r["matches_paper"] else "differs"
            if not r["up_to_date"]:
                state += "; CHANGED since this row was written"
            lines.append(f"{r['topic']} [{state}]\n  paper: {r['paper']}\n  book:  {r['book']} ({r['where']})\n"
                         f"  why:   {r['why']}\n  switch: {r['switch']}")
        return "\n".join(lines)


def ledger(keys: list[str] | None = None) -> Ledger:
    """The rows of ``LEDGER`` (all, or those named in ``keys``) with the book's values as the code
    has them now."""
    if keys is not None:
        keys = check_token_list("keys", keys, item="row key")
    rows = LEDGER if keys is None else [_row(key, f"keys[{i}]") for i, key in enumerate(keys)]
    return Ledger([d.as_dict() for d in rows])


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def ledger_markdown() -> str:
    """The ledger as a Markdown table whose first column links each row to the chapter that teaches
    it (the appendix's table; ``tests/test_paper.py`` checks the page holds exactly this)."""
    lines = ["| part (taught in) | the paper | this book (where) | why | switch back |", "|---|---|---|---|---|"]
    for d in ledger().rows:
        number = int(str(d["chapter"]).split("_")[0])
        book = f"{d['book']}{' (same as the paper)' if d['matches_paper'] else ''} (`{d['where']}`)"
        switch = f"`{d['switch']}`" if row(str(d["key"])).switch else "none at this scale"
        lines.append(f"| {d['topic']} ([chapter {number}]({d['chapter']}.ipynb)) | {_cell(d['paper'])} | "
                     f"{_cell(book)} | {_cell(d['why'])} | {_cell(switch)} |")
    return "\n".join(lines)

"""Valid calls for the bad-input sweep (tests/test_bad_input_sweep.py), for ``pretrained``: "module.name" ->
a function returning (the callable, a dict of valid keyword arguments); EXEMPT: "module.name" -> why it is not
swept (where else its arguments are tested). Each of ``pretrained``'s callables is named here or in the
sweep's own CALLS: no blanket exemption of the package.

Table 3's readers (``pretrained.ablations``) work on the stored table (package data) and a reader's run."""

from __future__ import annotations

from transformer_lib.pretrained import ablations, table3_report

TABLE3 = ablations.load_table3()
BUDGET = TABLE3["budgets"][0]
RUN = {"variant": "rope", "seed": 0, "budgets": {str(BUDGET): {"exact_match": 0.5}}}


def _table3() -> dict:
    return ablations.load_table3()  # a fresh copy: a case may not spoil the next


CALLS: dict = {
    "pretrained.ablations.table3_at": lambda: (ablations.table3_at, dict(data=_table3(), budget=BUDGET)),
    "pretrained.ablations.table3_effect": lambda: (ablations.table3_effect, dict(
        data=_table3(), variant="rope", budget=BUDGET, measure="exact_match")),
    "pretrained.ablations.table3_claim": lambda: (ablations.table3_claim, dict(
        data=_table3(), variant="rope", budget=BUDGET, measure="bleu")),
    "pretrained.ablations.table3_verdict": lambda: (ablations.table3_verdict, dict(
        data=_table3(), variant="rope", budget=BUDGET, measure="exact_match")),
    "pretrained.ablations.paired_differences": lambda: (ablations.paired_differences, dict(
        data=_table3(), variant="rope", budget=BUDGET, measure="perplexity")),
    "pretrained.ablations.compare_with_table3": lambda: (ablations.compare_with_table3, dict(
        data=_table3(), run={**RUN, "budgets": {str(BUDGET): {"exact_match": 0.5}}})),
    "pretrained.ablations.narrow_query_key": lambda: (ablations.narrow_query_key, dict(d_k=4)),
    "pretrained.table3_report.table3_html": lambda: (table3_report.table3_html, dict(data=_table3())),
}

SLOW = "trains or evaluates a book-sized model (minutes): its arguments are tested in its own test file"
SHIPPED = "loads a shipped model from the package's files; its device and dtype go to checkpoint's checks"
EXEMPT: dict[str, str] = {
    "pretrained.digit_curve.compute_digit_curve": "trains sixty models (half a minute): tools/store.py calls it, and "
                                                  "tests/test_stored.py at the smallest size",
    "pretrained.table3_report.summarise": "Table 3's rows from its runs, as benchmarks/table3.py writes them: "
                                          "tests/test_stored.py checks the stored rows are its summary",
    "pretrained.table3_report.spread": "summarise's median and range of numbers it gathered (tests/test_table3.py)",
    "pretrained.table3_report.paired_effects": "summarise's paired changes of runs it gathered (tests/test_table3.py)",
    "pretrained.ablations.Table3Variant.book_recipe": "a stored variant's recipe at a seed, through "
                                                      "BookRecipe.with_training (tests/test_table3.py)",
    "pretrained.ablations.load_table3": "reads the stored JSON (package data); a path the reader gives is "
                                        "open()'s to refuse",
    "pretrained.ablations.measure_translation": SLOW + " (run_table3's, tests/test_table3.py)",
    "pretrained.ablations.run_table3": SLOW + " (tests/test_table3.py)",
    "pretrained.ablations.validation_loss": SLOW + " (tests/test_what_layers_compute.py)",
    "pretrained.comparison.compare_book_models": SLOW + " (tests/test_rnn_comparison.py)",
    "pretrained.comparison.load_comparison": "reads the stored JSON (package data): tests/test_rnn_comparison.py",
    "pretrained.comparison.same_scores": "compares two comparisons the library computed: "
                                         "tests/test_rnn_comparison.py",
    "pretrained.comparison.scores_to_json": "writes what compare_book_models computed: tests/test_rnn_comparison.py",
    "pretrained.language_model.LanguageModelRecipe.config": "the stored recipe's config at a vocabulary size: "
                                                            "TransformerConfig checks it (tests/test_pretrained_lm.py)",
    "pretrained.language_model.french_sentences": "the corpus's French side: tests/test_pretrained_lm.py",
    "pretrained.language_model.train_book_lm": SLOW + " (tests/test_pretrained_lm.py)",
    "pretrained.recipe.BookRecipe.config": "the stored recipe's config at vocabulary sizes: TransformerConfig "
                                           "checks them (tests/test_pretrained.py)",
    "pretrained.recipe.TrainsWithOptions.with_training": "TrainingOptions.replace, which the sweep covers, on the "
                                                         "recipe's options (tests/test_recipe.py)",
    "pretrained.recipe.book_vocabularies": "the vocabularies of a Corpus the library made: tests/test_pretrained.py",
    "pretrained.recipe.exact_match_on": SLOW + " (train_book_model's evaluation callback, tests/test_pretrained.py)",
    "pretrained.recipe.train_book_model": SLOW + " (tests/test_pretrained.py, tests/test_recipe.py)",
    "pretrained.recipe.train_book_rnn": SLOW + " (tests/test_pretrained.py)",
    "pretrained.shipped.book_lm": SHIPPED + " (tests/test_pretrained_lm.py)",
    "pretrained.shipped.book_rnn": SHIPPED + " (tests/test_pretrained.py)",
    "pretrained.shipped.book_rnn_attention": SHIPPED + " (tests/test_pretrained.py)",
    "pretrained.shipped.load_shipped": SHIPPED + " (tests/test_pretrained.py)",
    "pretrained.shipped.sha256_of": "the digest of a shipped file: tests/test_pretrained.py",
    "pretrained.shipped.write_shipped": "writes the shipped models' files: tests/test_pretrained.py",
    "pretrained.hub_references.load_reference": "reads the stored hub references (package data): tests/test_convert.py",
    "pretrained.snapshots.attention_change": "compares the attention maps of two stored snapshots "
                                             "(tools/train_book_models.py), tests/test_snapshots.py",
    "pretrained.snapshots.dequantize": "reads back what quantize stored: tests/test_snapshots.py",
    "pretrained.snapshots.quantize": "stores a state dict the training made: tests/test_snapshots.py",
    "pretrained.snapshots.snapshot_file": "the stored file of a snapshot step: tests/test_snapshots.py",
    "pretrained.snapshots.snapshot_record": "reads the stored record (package data): tests/test_snapshots.py",
    "pretrained.snapshots.snapshot_steps": "reads the stored record (package data): tests/test_snapshots.py",
    "pretrained.snapshots.snapshot_weights": "reads a stored snapshot (package data): tests/test_replay_page.py",
    "pretrained.snapshots.write_snapshots": "writes the snapshots' files (tools/train_book_models.py)",
}

"""Valid calls for the bad-input sweep (tests/test_bad_input_sweep.py), for the book's one rule for training
verdicts (``verdict``), the registry of stored results (``stored``) and the figure of Table 3's verdicts:
"module.name" -> a function returning (the callable, a dict of valid keyword arguments); EXEMPT:
"module.name" -> why it is not swept."""

from __future__ import annotations

from transformer_lib import verdict
from transformer_lib.figures import ledger
from transformer_lib.pretrained.ablations import load_table3

DIFFERENCES = [0.01, 0.02, 0.015, 0.012, 0.018]
CALLS = {
    "verdict.t_two_sided_probability": lambda: (verdict.t_two_sided_probability, dict(t=1.5, dof=4)),
    "verdict.t_quantile": lambda: (verdict.t_quantile, dict(confidence=0.95, dof=4)),
    "verdict.t_interval": lambda: (verdict.t_interval, dict(differences=list(DIFFERENCES), confidence=0.95)),
    "verdict.verdict": lambda: (verdict.verdict, dict(differences=list(DIFFERENCES), measure="perplexity", base=1.1)),
    "verdict.false_positive_rate": lambda: (verdict.false_positive_rate, dict(
        seeds=5, minimum_over_sd=0.5, confidence=0.95, points=200)),
    "figures.ledger.verdict_figure": lambda: (ledger.verdict_figure, dict(
        data=load_table3(), measure="exact_match", labels={"rope": "RoPE"}, apart=["no_residual"])),
}
EXEMPT: dict[str, str] = {
    "figures.ledger.runs_by_seed": "a helper of the ledger's figures, called with the benchmark's JSON the page read",
    "stored.store": "writes the package's stored files (and, for Table 3, trains for hours): tools/store.py calls it",
    "stored.check": "recomputes a stored file (a minute for the agreement heads): tests/test_stored.py calls it",
    "stored.check_table3_summary": "called on the stored Table 3 by tests/test_stored.py, planted copies included",
    "stored.check_digit_curve": "called on the stored learning curve by tests/test_stored.py, planted copies included",
    "stored.check_table3_run": "trains a model for 500 steps (40 s): tests/test_stored.py calls it once",
}

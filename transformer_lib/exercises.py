"""Exercises that check themselves: one ``check_...()`` per exercise of the book with a computable answer.

The reader calls a check on their own answer; each chapter's folded solution cell calls it on the book's,
so a solution that goes stale (the code changes, the answer does not) fails the notebook tests. A check
computes the answer from the library, compares, and returns a one-line confirmation; a wrong answer
raises ``AssertionError`` saying what was expected.
"""

from __future__ import annotations

import math

import torch

from . import config, language_model, models, oracle, training
from .validation import check_bool, check_instance, check_int, check_number, check_positive_int, check_sentence


def _agree(name: str, given: object, expected: object) -> None:
    if given != expected:
        raise AssertionError(f"{name}: the answer is {expected!r}, not {given!r}")


def check_sequential_steps(words: int, layers: int, pipelined: int, unpipelined: int) -> str:
    """Chapter 1, exercise 3: a ``layers``-deep RNN reading ``words`` words takes ``words + layers - 1``
    sequential steps when each layer starts on the first state of the one below, ``words * layers`` when
    each waits for the whole sequence."""
    check_positive_int("words", words)
    check_positive_int("layers", layers)
    check_int("pipelined", pipelined, minimum=0)
    check_int("unpipelined", unpipelined, minimum=0)
    _agree("pipelined", pipelined, words + layers - 1)
    _agree("unpipelined", unpipelined, words * layers)
    return f"right: {pipelined} steps pipelined, {unpipelined} without; one self-attention layer: 1"


def check_xavier_row_norm_ratio(vocab: int, d_models: tuple[int, ...], falls: bool, seed: int = 0) -> str:
    """Chapter 2, exercise 3: the norm of a Xavier-initialised embedding row over the positional
    encoding's ``sqrt(d_model / 2)`` is about ``2 / sqrt(vocab + d_model)`` (within 5%), falling as
    ``d_model`` grows (``falls``: the reader's answer)."""
    check_positive_int("vocab", vocab)
    check_instance("d_models", d_models, tuple | list, "a tuple of widths")
    for i, d_model in enumerate(d_models):
        check_positive_int(f"d_models[{i}]", d_model)
    if not d_models or any(b <= a for a, b in zip(d_models, d_models[1:], strict=False)):
        raise ValueError(f"d_models: expected at least one width, strictly increasing, got {d_models!r:.60}")
    check_bool("falls", falls)
    check_int("seed", seed, minimum=0)
    torch.manual_seed(seed)
    ratios = []
    for d_model in d_models:
        weight = torch.nn.init.xavier_uniform_(torch.empty(vocab, d_model))
        ratio = weight.norm(dim=1).mean().item() / math.sqrt(d_model / 2)
        if not math.isclose(ratio, 2 / math.sqrt(vocab + d_model), rel_tol=0.05):
            raise AssertionError(f"d_model={d_model}: the ratio is {ratio:.3f}, not 2/sqrt(V+d)")
        ratios.append(ratio)
    _agree("falls", falls, ratios == sorted(ratios, reverse=True))
    return "right: ratios " + ", ".join(f"{r:.3f}" for r in ratios) + " for d_model " + ", ".join(map(str, d_models))


def check_longest_wavelength(base: float, positions: int, sentence: int) -> str:
    """Chapter 3, exercise 1: with base ``base`` the slowest pair's wavelength approaches ``base * 2 pi``
    positions (rounded), shorter than a ``sentence``-position sentence."""
    check_number("base", base, positive=True)
    check_positive_int("positions", positions)
    check_positive_int("sentence", sentence)
    _agree("positions", positions, round(base * 2 * math.pi))
    if positions >= sentence:
        raise AssertionError(f"sentence: a wavelength of {positions} is not shorter than {sentence} positions")
    return f"right: about {positions} positions, shorter than the sentence's {sentence}"


DRAWS = 500  # random query-key sets in check_scores_divided_by_d_k


def check_scores_divided_by_d_k(d_k: int, keys: int, max_deviation: float, seed: int = 0) -> str:
    """Chapter 4, exercise 1: scores divided by ``d_k`` rather than its root give weights within
    ``max_deviation`` of the uniform ``1 / keys``, for random queries and keys (``DRAWS`` draws)."""
    check_positive_int("d_k", d_k)
    check_positive_int("keys", keys)
    check_number("max_deviation", max_deviation, positive=True)
    check_int("seed", seed, minimum=0)
    generator = torch.Generator().manual_seed(seed)
    # float32 and one batched product: the draws stay small (tens of MB at d_k = 1024), whatever the default dtype
    q = torch.randn(DRAWS, d_k, 1, generator=generator, dtype=torch.float32)
    k = torch.randn(DRAWS, keys, d_k, generator=generator, dtype=torch.float32)
    weights = (torch.bmm(k, q).squeeze(-1) / d_k).softmax(-1)  # (DRAWS, keys)
    deviation = (weights - 1 / keys).abs().max().item()
    if deviation >= max_deviation:
        raise AssertionError(f"max_deviation: the weights are up to {deviation:.3f} from 1/{keys}, "
                             f"not within {max_deviation}")
    return f"right: every weight within {deviation:.3f} of 1/{keys}"


def check_heads_must_divide(d_model: int, n_heads: int, refused: bool) -> str:
    """Chapter 5, exercise 1: whether ``MultiHeadAttention(d_model, n_heads)`` is refused (a ``ValueError``)."""
    from .multi_head_attention import MultiHeadAttention

    check_positive_int("d_model", d_model)
    check_positive_int("n_heads", n_heads)
    check_bool("refused", refused)
    try:
        MultiHeadAttention(d_model, n_heads)
        was_refused = False
    except ValueError:
        was_refused = True
    _agree("refused", refused, was_refused)
    return f"right: MultiHeadAttention({d_model}, {n_heads}) is " + ("refused" if refused else "built")


def check_base_layer_parameters(attention: int, feed_forward: int, encoder_layer: int, decoder_layer: int) -> str:
    """Chapter 6, exercise 1: the parameters of one attention block, one feed-forward network, one encoder
    layer and one decoder layer of the paper's base model, against ``models.parameter_breakdown``."""
    for name, answer in (("attention", attention), ("feed_forward", feed_forward), ("encoder_layer", encoder_layer),
                         ("decoder_layer", decoder_layer)):
        check_int(name, answer, minimum=0)
    cfg = config.TransformerConfig.preset("base")
    parts = models.parameter_breakdown(cfg)
    n_enc, n_dec = cfg.n_encoder_layers, cfg.n_decoder_layers
    _agree("attention", attention, parts["encoder self-attention"] // n_enc)
    _agree("feed_forward", feed_forward, parts["encoder feed-forward"] // n_enc)
    encoder = (parts["encoder self-attention"] + parts["encoder feed-forward"] + parts["encoder layer norms"]) // n_enc
    _agree("encoder_layer", encoder_layer, encoder)
    decoder = sum(parts[f"decoder {p}"] for p in ("self-attention", "cross-attention", "feed-forward",
                                                  "layer norms")) // n_dec
    _agree("decoder_layer", decoder_layer, decoder)
    return f"right: {encoder_layer:,} per encoder layer, {decoder_layer:,} per decoder layer"


def check_pre_norm_extra(extra: int) -> str:
    """Chapter 6, exercise 3: how many more parameters the pre-norm ``base`` has than the post-norm one."""
    check_int("extra", extra, minimum=0)
    cfg = config.TransformerConfig.preset("base")
    difference = models.parameter_count(config.TransformerConfig.preset("base", norm_first=True)) - (
        models.parameter_count(cfg))
    _agree("extra", extra, difference)
    return f"right: {extra} more (a final LayerNorm at the end of the encoder and of the decoder)"


def check_first_learning_rate(rate: float, d_model: int, scale: float) -> str:
    """Chapter 7, exercise 2: with ``warmup=1`` the first step's learning rate is the schedule's peak,
    ``scale * d_model ** -0.5`` (to four significant digits)."""
    check_number("rate", rate, positive=True)
    check_positive_int("d_model", d_model)
    check_number("scale", scale, positive=True)
    expected = training.transformer_lr(1, d_model, 1, scale)
    if not math.isclose(rate, expected, rel_tol=1e-4):
        raise AssertionError(f"rate: the answer is {expected:.4g}, not {rate}")
    return f"right: {rate}"


def check_top_k_one_is_greedy(model: torch.nn.Module, vocab: object, n: int, seed: int) -> str:
    """Chapter 8, exercise 1: ``n`` sentences drawn with ``top_k=1`` from seed ``seed`` are greedy decoding's."""
    check_int("seed", seed, minimum=0)
    greedy = language_model.sample_sentences(model, vocab, n, temperature=0.0)
    top_1 = language_model.sample_sentences(model, vocab, n, top_k=1, generator=torch.Generator().manual_seed(seed))
    if top_1 != greedy:
        raise AssertionError("top_k=1 drew other sentences than greedy decoding")
    return f"right: the {n} sentences drawn with top-k = 1 are greedy decoding's"


def check_judgements(judgements: dict[str, str], training_sentences: set[str]) -> str:
    """Chapter 8, exercise 2: the kind (``oracle.SENTENCE_KINDS``) of each sentence, as
    ``oracle.classify_sentence`` judges it against the training sentences."""
    check_instance("judgements", judgements, dict, "a dict sentence -> kind")
    check_instance("training_sentences", training_sentences, set | frozenset, "a set of sentences")
    for sentence, kind in judgements.items():
        check_sentence("judgements", sentence)
        check_instance(f"judgements[{sentence!r}]", kind, str, "a kind (str)")
    for sentence, kind in judgements.items():
        _agree(f"judgements[{sentence!r}]", kind, oracle.classify_sentence(sentence, training_sentences))
    return f"right: {len(judgements)} sentences judged as the grammar does"

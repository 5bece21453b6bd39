"""Sampling the next token: temperature, top-k and top-p (nucleus), and a decoder-only model's continuation.

* ``filter_logits``: keeps the ``top_k`` most probable tokens and/or the nucleus of ``top_p``
  (Holtzman et al. 2020: the smallest set of most probable tokens whose probability reaches
  ``top_p``), every other logit set to -inf. The one filter behind every sampler of the library
  (``decoding.sample_decode`` for translation, ``sample_continuation`` here).
* ``draw_next``: (B, V) logits -> (B,) tokens, at a temperature, after the filter; ``temperature=0``
  is greedy (the most probable token).
* ``sample_continuation``: a GPT-style model (``models.DecoderOnlyTransformer``) continues prompts
  one token at a time, on its key/value cache.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .validation import (
    check_bool,
    check_instance,
    check_number,
    check_positive_int,
    check_probability_mass,
    check_special_id,
)
from .validation_tensors import check_finite, check_ndim, check_tensor, check_token_ids


def check_sampling_args(temperature: object, top_k: object, top_p: object, generator: object,
                        allow_greedy: bool = False) -> float:
    """The arguments every sampler shares; returns the temperature as a float."""
    # finite: inf would give NaN at -inf; 0 (greedy) only where the sampler offers it
    if check_bool("allow_greedy", allow_greedy):
        temperature = check_number("temperature", temperature, minimum=0.0)
    else:
        temperature = check_number("temperature", temperature, positive=True)
    if top_k is not None:
        check_positive_int("top_k", top_k)
    if top_p is not None:
        check_probability_mass("top_p", top_p)
    if generator is not None:
        check_instance("generator", generator, torch.Generator, "a torch.Generator or None")
    return temperature


def _check_logits(logits: object) -> None:
    check_tensor("logits", logits)
    if not logits.is_floating_point():
        raise TypeError(f"logits: expected a floating-point tensor, got dtype {logits.dtype}")
    if logits.ndim == 0 or logits.shape[-1] == 0:
        raise ValueError(f"logits: expected shape (..., vocab) with vocab >= 1, got shape {tuple(logits.shape)}")
    check_finite("logits", logits, allow_minus_inf=True)  # -inf: an excluded token


def filter_logits(logits: Tensor, *, top_k: int | None = None, top_p: float | None = None) -> Tensor:
    """(..., V) logits with every token outside the top ``top_k`` and outside the nucleus of ``top_p``
    set to -inf (a new tensor; None leaves that filter out).

    A logit of -inf means "excluded" (a banned token); NaN and +inf are refused (``ValueError``), and
    so is a row in which every token is excluded.

    Ties at the boundary all stay, in both filters: a token is never dropped for a tie it would lose
    only by its id. Top-k keeps every token whose logit is at least the k-th largest. Top-p sorts the
    tokens by probability (softmax of ``logits``, after top-k) and finds the smallest set of most
    probable tokens whose probability reaches ``top_p`` (always the most probable token); it keeps
    every token at least as probable as the least probable of that set. ``top_p=1`` keeps every token.
    """
    _check_logits(logits)
    if logits.numel() and not bool((logits > float("-inf")).any(dim=-1).all()):
        row = tuple(int(i) for i in (~(logits > float("-inf")).any(dim=-1)).nonzero()[0])
        raise ValueError(f"logits: expected at least one finite logit per row, got every token at -inf in row {row}")
    if top_k is not None:
        check_positive_int("top_k", top_k)
    if top_p is not None:
        check_probability_mass("top_p", top_p)
    logits = logits.clone()
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]  # (..., 1): the k-th largest logit
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None and top_p < 1.0:
        probs = logits.softmax(dim=-1)
        ranked = probs.sort(dim=-1, descending=True).values  # most probable first
        before = ranked.cumsum(dim=-1) - ranked  # mass of the tokens ranked before each
        in_nucleus = before < top_p  # the first token has 0 before it: always in
        boundary = ranked.masked_fill(~in_nucleus, float("inf")).amin(dim=-1, keepdim=True)  # (..., 1)
        logits = logits.masked_fill(probs < boundary, float("-inf"))  # ties with the boundary stay
    return logits


def tempered_logits(logits: Tensor, temperature: float) -> Tensor:
    """logits / temperature, computed stably: in float64 (a temperature of 1e-300 or 1e300 is 0 or inf
    in float32), the best logit shifted to 0 first. A vanishing temperature then gives 0 for the best
    token and -inf for the others (greedy), a huge one 0 for every allowed token (uniform), and never
    inf - inf = NaN. The softmax is unchanged by the shift. Shared by sampling and ``language_model``."""
    _check_logits(logits)
    temperature = check_number("temperature", temperature, positive=True)
    logits = logits.double()
    return (logits - logits.max(dim=-1, keepdim=True).values) / temperature


def _banned_out(logits: Tensor, banned_ids: tuple[int, ...] | list[int]) -> Tensor:
    """``logits`` with the ``banned_ids`` set to -inf (a new tensor)."""
    if isinstance(banned_ids, str) or not isinstance(banned_ids, tuple | list):
        raise TypeError(f"banned_ids: expected a tuple of token ids, got {type(banned_ids).__name__}")
    for i, token in enumerate(banned_ids):
        check_special_id(f"banned_ids[{i}]", token, logits.shape[-1])
    logits = logits.clone()
    if banned_ids:
        logits[..., list(banned_ids)] = float("-inf")
    return logits


def next_token_probs(logits: Tensor, *, temperature: float = 1.0, top_k: int | None = None,
                     top_p: float | None = None, banned_ids: tuple[int, ...] = ()) -> Tensor:
    """(..., V) logits -> (..., V) float64 probabilities of the next draw: the ``banned_ids`` set to -inf,
    the temperature first (``tempered_logits``), then ``filter_logits(top_k, top_p)``, then softmax.
    ``temperature=0`` (greedy) puts all the mass on the most probable allowed token (the first of equal
    ones, as ``torch.argmax``). ``draw_next`` draws from exactly this distribution."""
    _check_logits(logits)
    temperature = check_sampling_args(temperature, top_k, top_p, None, allow_greedy=True)
    logits = _banned_out(logits, banned_ids)
    if temperature == 0.0:
        best = filter_logits(logits).argmax(dim=-1, keepdim=True)  # (..., 1); filter_logits checks the rows
        return torch.zeros(logits.shape, dtype=torch.float64, device=logits.device).scatter_(-1, best, 1.0)
    return filter_logits(tempered_logits(logits, temperature), top_k=top_k, top_p=top_p).softmax(dim=-1)


def draw_next(logits: Tensor, *, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
              generator: torch.Generator | None = None, banned_ids: tuple[int, ...] = ()) -> Tensor:
    """(B, V) logits -> (B,) tokens drawn from ``next_token_probs`` (softmax(logits / temperature), the
    ``banned_ids`` never drawn, filtered by ``filter_logits(top_k, top_p)``); ``temperature=0`` takes the
    most probable token (and draws no random number)."""
    check_ndim("logits", logits, 2, "(batch, vocab)")
    temperature = check_sampling_args(temperature, top_k, top_p, generator, allow_greedy=True)
    if temperature == 0.0:
        return _banned_out(logits, banned_ids).argmax(dim=-1)
    probs = next_token_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p, banned_ids=banned_ids)
    return torch.multinomial(probs, 1, generator=generator).squeeze(1)


@torch.inference_mode()
def sample_continuation(
    model: nn.Module,
    prompt_ids: Tensor,
    *,
    max_new_tokens: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
    eos_id: int | None = None,
    banned_ids: tuple[int, ...] = (),
    use_cache: bool = True,
) -> list[list[int]]:
    """Continue each row of ``prompt_ids`` (B, T), one drawn token at a time, with a decoder-only model
    (``model(ids, cache) -> logits`` and ``model.new_cache()``, as ``DecoderOnlyTransformer``).

    Each row gets up to ``max_new_tokens`` tokens and stops after its first ``eos_id`` (which is
    kept, last in its list, so the caller sees that the row ended), as ``transformers``' ``generate``
    stops at ``eos_token_id``: for GPT-2 (``convert.from_gpt2``), pass its ``<|endoftext|>``. ``temperature=0``
    is greedy. The padding id (``model.config.pad_id``, if not None) and ``banned_ids`` are never drawn, so
    an ``eos_id`` among them, which would never end a row, is refused. With the cache
    (the default), the prompt is read once and each step feeds only the newest token;
    ``use_cache=False`` feeds the whole sequence at every step and draws the same tokens.
    A seeded ``generator`` (on the model's device) makes the draws repeatable.
    """
    for name in ("new_cache", "config"):
        if not hasattr(model, name):
            raise TypeError(f"model: expected a decoder-only model with .{name} (a DecoderOnlyTransformer), "
                            f"got {type(model).__name__}")
    if hasattr(model, "encode"):  # it would read prompt_ids as a source and fail on a missing target
        raise TypeError(f"model: expected a decoder-only model (a DecoderOnlyTransformer), got the encoder-decoder "
                        f"{type(model).__name__}; decoding.sample_decode samples from one")
    vocab_size, pad_id = model.config.tgt_vocab_size, model.config.pad_id
    check_token_ids("prompt_ids", prompt_ids, vocab_size)
    check_ndim("prompt_ids", prompt_ids, 2, "(batch, prompt_len)")
    if prompt_ids.shape[1] == 0:
        raise ValueError("prompt_ids: expected at least one token per row (a <sos>, say), got none")
    if pad_id is not None and bool((prompt_ids == pad_id).any()):
        raise ValueError(f"prompt_ids: expected rows of real tokens, got the padding id {pad_id} inside")
    check_positive_int("max_new_tokens", max_new_tokens)
    # The model reads the prompt and every new token but the last: positions its table must hold.
    if prompt_ids.shape[1] + max_new_tokens - 1 > model.config.max_len:
        raise ValueError(f"max_new_tokens: the model reads at most config.max_len={model.config.max_len} positions; "
                         f"a prompt of {prompt_ids.shape[1]} allows at most "
                         f"{model.config.max_len - prompt_ids.shape[1] + 1} new tokens, got {max_new_tokens}")
    temperature = check_sampling_args(temperature, top_k, top_p, generator, allow_greedy=True)
    check_special_id("eos_id", eos_id, vocab_size, optional=True)
    if isinstance(banned_ids, str) or not isinstance(banned_ids, tuple | list):
        raise TypeError(f"banned_ids: expected a tuple of token ids, got {type(banned_ids).__name__}")
    for i, token in enumerate(banned_ids):
        check_special_id(f"banned_ids[{i}]", token, vocab_size)
    never = {*banned_ids} if pad_id is None else {pad_id, *banned_ids}  # never drawn
    if len(never) >= vocab_size:
        raise ValueError(f"banned_ids: expected to leave at least one token to draw, got all {vocab_size} banned "
                         f"(with the padding id {pad_id})")
    if eos_id in never:
        raise ValueError(f"eos_id: expected a token that can be drawn, got {eos_id}, "
                         f"{'the padding id' if eos_id == pad_id else 'one of banned_ids'}: no row would stop at it")
    check_bool("use_cache", use_cache)

    model.eval()
    banned = sorted(never)
    cache = model.new_cache() if use_cache else None
    tokens = prompt_ids.long()
    finished = torch.zeros(tokens.shape[0], dtype=torch.bool, device=tokens.device)
    fed = tokens
    for _ in range(max_new_tokens):
        logits = (model(fed, cache) if use_cache else model(tokens))[:, -1]  # (B, V)
        next_token = draw_next(logits, temperature=temperature, top_k=top_k, top_p=top_p, generator=generator,
                               banned_ids=banned)
        # finished rows only mark time (on padding, or on <eos> again where no id is padding); cut off below
        if eos_id is not None:
            next_token = next_token.masked_fill(finished, eos_id if pad_id is None else pad_id)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)
        fed = next_token[:, None]
        if eos_id is not None:
            finished |= next_token == eos_id
            if bool(finished.all()):
                break
    rows = []
    for row in tokens[:, prompt_ids.shape[1]:].tolist():
        end = row.index(eos_id) + 1 if eos_id in row else len(row)
        rows.append(row[:end])
    return rows

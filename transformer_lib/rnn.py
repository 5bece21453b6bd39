"""Recurrent networks, the models the Transformer replaced, and why.

A recurrent network reads a sequence one step at a time:

    h_t = tanh(W_xh x_t + W_hh h_{t-1} + b)

The gradient that reaches x_t from the last state h_T passes through T - t
multiplications by W_hh (and by tanh'), so it shrinks or grows geometrically with
the distance: vanishing and exploding gradients (Hochreiter & Schmidhuber 1997).
The LSTM's additive cell state c_t = f_t * c_{t-1} + i_t * g_t gives the gradient
a path that its gates can keep open.

``Seq2SeqGRU`` is the RNN translator the book compares with the Transformer: a GRU
encoder (Cho et al. 2014) whose final state is the only thing its decoder sees of the
source (Sutskever et al. 2014), with no attention. It has the Transformer's interface,
so ``training.train`` and the functions of ``decoding`` run on it unchanged.

``Seq2SeqGRUAttention`` is the same translator with the fix of Bahdanau, Cho & Bengio (2015):
at every step the decoder attends over all the encoder's states (additive attention), so the
source no longer has to pass through one vector. It keeps the recurrence, which is what the
Transformer removed next.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .attention import AdditiveAttention
from .validation import check_instance, check_number, check_positive_int, check_probability
from .validation_tensors import (
    check_features,
    check_finite,
    check_ndim,
    check_nonempty,
    check_row_index,
    check_tensor,
    check_token_ids,
    check_vectors,
    module_dtype,
)


def _check_inputs(x: Tensor, input_size: int, weight: Tensor) -> None:
    check_features("x", x, input_size, "(batch, seq_len, input_size)", module_dtype(weight), "input_size")


class VanillaRNN(nn.Module):
    """The Elman RNN, step by step. ``recurrent_scale`` sets W_hh to that multiple of a random
    orthogonal matrix, so that every singular value of W_hh equals the scale."""

    def __init__(self, input_size: int, hidden_size: int, recurrent_scale: float | None = None) -> None:
        super().__init__()
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        if recurrent_scale is not None:
            check_number("recurrent_scale", recurrent_scale)
        self.input_to_hidden = nn.Linear(input_size, hidden_size)  # W_xh, b_xh
        self.hidden_to_hidden = nn.Linear(hidden_size, hidden_size)  # W_hh, b_hh
        if recurrent_scale is not None:
            with torch.no_grad():
                nn.init.orthogonal_(self.hidden_to_hidden.weight)
                self.hidden_to_hidden.weight.mul_(recurrent_scale)

    def forward(self, x: Tensor, h: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """(B, T, input_size) -> outputs (B, T, hidden), last state (B, hidden)."""
        _check_inputs(x, self.input_size, self.input_to_hidden.weight)
        h = x.new_zeros(x.shape[0], self.hidden_size) if h is None else self._check_state(h, x)  # (B, hidden)
        outputs = []
        for t in range(x.shape[1]):  # one step after the other: nothing here runs in parallel
            h = torch.tanh(self.input_to_hidden(x[:, t]) + self.hidden_to_hidden(h))
            outputs.append(h)
        return torch.stack(outputs, dim=1), h

    def _check_state(self, h: Tensor, x: Tensor) -> Tensor:
        """A given first state: (batch, hidden), of ``x``'s batch and dtype."""
        check_vectors("h", h, self.hidden_size, dtype=x.dtype)
        if h.shape != (x.shape[0], self.hidden_size):
            raise ValueError(f"h: expected shape (batch, hidden) = {(x.shape[0], self.hidden_size)}, "
                             f"got {tuple(h.shape)}")
        return h


class LSTM(nn.Module):
    """The long short-term memory cell (Hochreiter & Schmidhuber 1997), step by step,
    with the gate order of ``torch.nn.LSTM``: input, forget, cell candidate, output.

    ``forget_bias`` is added to the forget gate's bias at initialisation: a positive value
    starts the gate open (sigmoid(f) near 1), so the cell state, and its gradient, is
    carried across many steps from the start (Gers et al. 2000; Jozefowicz et al. 2015
    recommend 1). The default 0 keeps ``torch.nn.LSTM``'s initialisation.
    """

    def __init__(self, input_size: int, hidden_size: int, forget_bias: float = 0.0) -> None:
        super().__init__()
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        forget_bias = check_number("forget_bias", forget_bias)
        self.input_gates = nn.Linear(input_size, 4 * hidden_size)
        self.hidden_gates = nn.Linear(hidden_size, 4 * hidden_size)
        with torch.no_grad():
            self.input_gates.bias[hidden_size : 2 * hidden_size] += forget_bias  # the forget gate's slice

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """(B, T, input_size) -> outputs (B, T, hidden), last (h, c)."""
        _check_inputs(x, self.input_size, self.input_gates.weight)
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        outputs = []
        for t in range(x.shape[1]):
            gates = self.input_gates(x[:, t]) + self.hidden_gates(h)  # (B, 4 * hidden)
            i, f, g, o = gates.chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)  # additive memory
            h = torch.sigmoid(o) * torch.tanh(c)
            outputs.append(h)
        return torch.stack(outputs, dim=1), (h, c)


def gradient_norms_through_time(model: Callable[[Tensor], object], x: Tensor) -> Tensor:
    """|| d h_T / d x_t || for every step t: how much the last output still feels input t.

    ``model`` maps (B, T, input_size) to outputs (B, T, hidden) or a tuple whose first
    element is that (as this module's RNNs and ``torch.nn.RNN/LSTM/GRU`` with
    ``batch_first=True`` do). Returns a (T,) tensor: the Frobenius norm of the Jacobian
    d h_T / d x_t, averaged over the batch.
    """
    _check_model_input(model, x)
    x = x.detach().clone().requires_grad_(True)
    outputs = _outputs_of(model, x)  # (B, T, hidden)
    last = outputs[:, -1]  # (B, hidden)
    squared = torch.zeros(x.shape[0], x.shape[1], dtype=x.dtype)
    for j in range(last.shape[1]):  # one row of the Jacobian per hidden unit
        (grad,) = torch.autograd.grad(last[:, j].sum(), x, retain_graph=True)  # (B, T, input_size)
        squared += grad.pow(2).sum(dim=-1).cpu()
    return squared.sqrt().mean(dim=0)  # (T,)


def _check_model_input(model: object, x: Tensor) -> None:
    """The inputs of ``gradient_norms_through_time``."""
    check_ndim("x", x, 3, "(batch, seq_len, input_size)")
    check_vectors("x", x, x.shape[-1])  # floating point: gradients need it
    check_nonempty("x", x)
    if not callable(model):
        raise TypeError(f"model: expected a module or function of x, got {type(model).__name__}")


def _outputs_of(model: Callable[[Tensor], object], x: Tensor) -> Tensor:
    """``model(x)``'s outputs (B, T, hidden): the result, or its first element; an error of the model
    on ``x`` (widths, dtypes) said under ``model``'s name."""
    try:
        result = model(x)
    except RuntimeError as error:
        raise ValueError(f"model: cannot be run on x of shape {tuple(x.shape)} and dtype {x.dtype} "
                         f"({str(error).splitlines()[0]:.150})") from None
    outputs = result[0] if isinstance(result, tuple) else result
    if not isinstance(outputs, Tensor) or outputs.dim() != 3:
        raise TypeError("model: expected outputs of shape (batch, seq_len, hidden)")
    return outputs


# --------------------------------------------------------------------------- the baseline translator


@dataclass(frozen=True)
class Seq2SeqGRUConfig:
    """The RNN encoder-decoder of Sutskever et al. 2014 / Cho et al. 2014, without attention."""

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 128  # embedding size (``train`` reads it for the learning-rate schedule)
    hidden_size: int = 256
    n_layers: int = 1
    dropout: float = 0.1
    pad_id: int = 0

    def __post_init__(self) -> None:
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "hidden_size", "n_layers"):
            check_positive_int(name, getattr(self, name))
        check_probability("dropout", self.dropout)
        if not 0 <= self.pad_id < min(self.src_vocab_size, self.tgt_vocab_size):
            raise ValueError(f"pad_id: expected an id inside both vocabularies, got {self.pad_id}")


@dataclass
class GRUDecoderState:
    """The decoder's cache: its hidden state after the tokens fed so far, (B, n_layers, hidden)."""

    hidden: Tensor | None = None

    def index_select(self, index: Tensor) -> None:
        """Keep rows ``index`` (beam search reorders its beams with this)."""
        check_row_index("index", index, None if self.hidden is None else self.hidden.shape[0])
        if self.hidden is not None:
            self.hidden = self.hidden.index_select(0, index)


class Seq2SeqGRU(nn.Module):
    """A GRU encoder reads the source; its last hidden state, one fixed-size vector per
    layer, is all the decoder GRU gets to see of it.

    Everything the decoder knows about a sentence of any length must pass through that
    vector: the bottleneck that attention removed (Bahdanau et al. 2014). Same interface
    as ``Transformer``: ``forward(src_ids, tgt_in) -> logits``, and ``encode`` /
    ``new_cache`` / ``decode`` / ``generator`` for the functions of ``decoding``.
    """

    def __init__(self, config: Seq2SeqGRUConfig) -> None:
        super().__init__()
        self.config = check_instance("config", config, Seq2SeqGRUConfig, "a Seq2SeqGRUConfig")
        c = config
        between_layers = c.dropout if c.n_layers > 1 else 0.0
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model, padding_idx=c.pad_id)
        self.tgt_embed = nn.Embedding(c.tgt_vocab_size, c.d_model, padding_idx=c.pad_id)
        self.encoder = nn.GRU(c.d_model, c.hidden_size, c.n_layers, batch_first=True, dropout=between_layers)
        self.decoder = nn.GRU(c.d_model, c.hidden_size, c.n_layers, batch_first=True, dropout=between_layers)
        self.dropout = nn.Dropout(c.dropout)
        self.generator = nn.Linear(c.hidden_size, c.tgt_vocab_size)

    def read_source(self, src_ids: Tensor) -> tuple[Tensor, Tensor]:
        """(B, S) source ids -> every top-layer state (B, S, hidden), zero at padding, and the
        last state of each layer (n_layers, B, hidden), after the last real token."""
        lengths = self._check_source(src_ids)  # (B,): the real tokens of each row
        packed = nn.utils.rnn.pack_padded_sequence(  # so padding never enters the state
            self.dropout(self.src_embed(src_ids)), lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        packed_states, last = self.encoder(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(packed_states, batch_first=True, total_length=src_ids.shape[1])
        return states, last

    def _check_source(self, src_ids: Tensor) -> Tensor:
        """``read_source``'s ids: in the vocabulary, with at least one real token a row; how many each has."""
        check_token_ids("src_ids", src_ids, self.config.src_vocab_size)
        lengths = (src_ids != self.config.pad_id).sum(dim=1)  # (B,)
        if int(lengths.min()) == 0:
            raise ValueError("src_ids: a row holds only padding; every source needs at least one token")
        return lengths

    def encode(self, src_ids: Tensor) -> Tensor:
        """(B, S) source ids -> (B, n_layers, hidden): the encoder's state after the last real token."""
        _, last = self.read_source(src_ids)  # (n_layers, B, hidden)
        return last.transpose(0, 1)  # (B, n_layers, hidden): batch first, like the Transformer's memory

    def new_cache(self) -> GRUDecoderState:
        return GRUDecoderState()

    def decode(
        self, tgt_ids: Tensor, memory: Tensor, src_ids: Tensor, cache: GRUDecoderState | None = None
    ) -> Tensor:
        """(B, T) target ids -> (B, T, hidden). Starts from the encoder's state ``memory``, or,
        with a ``cache``, from the state after the tokens fed before (then only new tokens are given)."""
        return self.dropout(self._run_decoder(tgt_ids, memory, cache))  # (B, T, hidden)

    def _run_decoder(self, tgt_ids: Tensor, first_state: Tensor, cache: GRUDecoderState | None) -> Tensor:
        """The decoder GRU over (B, T) target ids, from ``first_state`` (B, n_layers, hidden) or the
        cache's state; updates the cache. Returns its top-layer states (B, T, hidden)."""
        check_token_ids("tgt_ids", tgt_ids, self.config.tgt_vocab_size)
        check_vectors("memory", first_state, self.config.hidden_size, dtype=module_dtype(self.tgt_embed.weight))
        check_ndim("memory", first_state, 3, "(batch, n_layers, hidden)")
        if cache is not None and not isinstance(cache, GRUDecoderState):
            raise TypeError(f"cache: expected model.new_cache() (a GRUDecoderState) or None, "
                            f"got {type(cache).__name__}")
        state = first_state if cache is None or cache.hidden is None else cache.hidden  # (B, n_layers, hidden)
        out, last = self.decoder(self.dropout(self.tgt_embed(tgt_ids)), state.transpose(0, 1).contiguous())
        if cache is not None:
            cache.hidden = last.transpose(0, 1)
        return out

    def forward(self, src_ids: Tensor, tgt_ids: Tensor) -> Tensor:
        """(B, S) source ids and (B, T) decoder input ids -> (B, T, tgt_vocab_size) logits."""
        check_tensor("src_ids", src_ids)
        check_tensor("tgt_ids", tgt_ids)
        if tgt_ids.shape[0] != src_ids.shape[0]:
            raise ValueError(
                f"tgt_ids: expected batch size {src_ids.shape[0]} like src_ids, got shape {tuple(tgt_ids.shape)}"
            )
        return self.generator(self.decode(tgt_ids, self.encode(src_ids), src_ids))


class Seq2SeqGRUAttention(Seq2SeqGRU):
    """``Seq2SeqGRU`` whose decoder attends over every encoder state at every step.

    The score is additive (Bahdanau et al. 2015); where the context enters follows Luong, Pham &
    Manning (2015): the decoder GRU runs as before, then its state h_t is the query, the context
    c_t (the attention-weighted encoder states) joins it in h~_t = tanh(W_c [c_t; h_t]), and the
    generator reads h~_t. The GRU's input stays the previous word, so teacher forcing still runs the
    decoder over the whole target in one call, and the cache is the GRU's state alone.

    ``encode`` returns every encoder state (B, S, hidden), the memory the attention reads (like
    the Transformer's); the decoder starts from the state after the last real source token, as
    ``Seq2SeqGRU``'s does. Same config, same interface.
    """

    def __init__(self, config: Seq2SeqGRUConfig) -> None:
        super().__init__(config)
        hidden = config.hidden_size
        self.attention = AdditiveAttention(hidden, hidden, hidden)
        self.combine = nn.Linear(2 * hidden, hidden, bias=False)  # W_c

    def encode(self, src_ids: Tensor) -> Tensor:
        """(B, S) source ids -> (B, S, hidden): the encoder's top-layer state at every source position."""
        states, _ = self.read_source(src_ids)
        return states

    def decode(
        self, tgt_ids: Tensor, memory: Tensor, src_ids: Tensor, cache: GRUDecoderState | None = None
    ) -> Tensor:
        """(B, T) target ids -> (B, T, hidden), attending over ``memory`` (B, S, hidden) at every
        step; padding in ``src_ids`` is never attended to."""
        combined, _ = self.attend(tgt_ids, memory, src_ids, cache)
        return self.dropout(combined)

    def attention_map(self, src_ids: Tensor, tgt_ids: Tensor) -> Tensor:
        """(B, S) source and (B, T) decoder input ids -> (B, T, S) weights: where each step looked."""
        check_ndim("src_ids", src_ids, 2, "(batch, src_len)")
        check_ndim("tgt_ids", tgt_ids, 2, "(batch, tgt_len)")
        if tgt_ids.shape[0] != src_ids.shape[0]:
            raise ValueError(f"tgt_ids: expected batch size {src_ids.shape[0]} like src_ids, got shape "
                             f"{tuple(tgt_ids.shape)}")
        _, weights = self.attend(tgt_ids, self.encode(src_ids), src_ids, None)
        return weights

    def attend(self, tgt_ids: Tensor, memory: Tensor, src_ids: Tensor,
               cache: GRUDecoderState | None = None) -> tuple[Tensor, Tensor]:
        """The decoder's step(s), before dropout: h~ (B, T, hidden) and the weights (B, T, S) on the source."""
        self._check_memory(memory, src_ids)
        real = src_ids != self.config.pad_id  # (B, S)
        last_real = real.sum(dim=1) - 1  # (B,)
        first_state = memory[torch.arange(memory.shape[0], device=memory.device), last_real]  # (B, hidden)
        # every layer starts from it (with one layer, as here, it is exactly the encoder's last state)
        first_state = first_state[:, None].expand(-1, self.config.n_layers, -1)  # (B, n_layers, hidden)
        out = self._run_decoder(tgt_ids, first_state, cache)  # (B, T, hidden): the queries
        context, weights = self.attention(out[:, None], memory[:, None], memory[:, None],
                                          mask=real[:, None, None, :])  # (B, 1, T, hidden), (B, 1, T, S)
        combined = torch.tanh(self.combine(torch.cat([context[:, 0], out], dim=-1)))  # h~_t, (B, T, hidden)
        return combined, weights[:, 0]

    def _check_memory(self, memory: Tensor, src_ids: Tensor) -> None:
        """``attend``'s encoder states, for ``src_ids``, named here: attention would call a NaN in them "key"."""
        check_vectors("memory", memory, self.config.hidden_size, dtype=module_dtype(self.tgt_embed.weight))
        check_finite("memory", memory)
        check_token_ids("src_ids", src_ids, self.config.src_vocab_size)
        if memory.dim() != 3 or memory.shape[:2] != src_ids.shape:
            raise ValueError(f"memory: expected (batch, src_len, hidden) = {tuple(src_ids.shape)} + (hidden,) like "
                             f"src_ids, from encode(src_ids); got shape {tuple(memory.shape)}")

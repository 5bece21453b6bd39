"""transformer_lib: the Transformer of "Attention Is All You Need", one concept per module.

Chapter by chapter: ``rnn`` (1), ``embeddings``, ``vocabulary``, ``tokenization`` and ``batching`` (2),
``positional_encoding`` (3), ``attention`` (4), ``multi_head_attention`` (5), ``residual``,
``feed_forward``, ``encoder``, ``decoder``, ``models`` and ``config`` (6), ``corpus``
(with ``grammar`` and ``lexicon``), ``loss``, ``optimiser``, ``training_step``, ``training``,
``decoding``, ``greedy_trace``, ``checkpoint``, ``evaluation`` and ``capture`` (7), ``language_model``
and ``sampling`` (8). The appendix "how fast is it?" shows what the scripts in ``benchmarks/``
measure: these modules timed against PyTorch's own, which ``torch_reference`` builds from our
weights, with ``measure``'s timer.

Around them: the book's figures are in the ``figures`` package, one module per kind of picture
(figures only draw); ``analysis`` measures what the chapters assert on (contextual outputs and
analogies: 2; head statistics: 5; norm placement: 6; exposure bias: 7); ``pretrained`` ships
the book's trained models; ``validation`` holds every argument check (``validation_tensors`` those of
tensors, ``validation_models`` those against a model); ``source`` shows the library's code in the book.

This package namespace exports the model pieces. Import the rest from its module
(``from transformer_lib.training import train``): they bring in heavier libraries
(tqdm, sacrebleu, plotly, ipywidgets) that a model alone does not need.
"""

from importlib.metadata import PackageNotFoundError, version

from .attention import AdditiveAttention, causal_mask, combine_masks, padding_mask, scaled_dot_product_attention
from .capture import AttentionMaps, capture_attention
from .config import PRESETS, TransformerConfig
from .decoder import Decoder, DecoderLayer, DecoderLayerCache
from .embeddings import TokenEmbedding
from .encoder import Encoder, EncoderLayer
from .feed_forward import PositionwiseFeedForward
from .models import (
    DecoderOnlyTransformer,
    EncoderOnlyTransformer,
    InputEmbedding,
    Transformer,
    count_parameters,
    parameter_count,
)
from .multi_head_attention import KVCache, LayerCaches, MultiHeadAttention
from .positional_encoding import (
    LearnedPositionalEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    relative_position_map,
    sinusoidal_table,
)
from .residual import LayerNorm, Residual, layer_norm
from .rnn import LSTM, VanillaRNN, gradient_norms_through_time

try:  # pyproject.toml states the version, once; the installed package's metadata carries it
    __version__ = version("transformer_lib")
except PackageNotFoundError:  # the checkout on sys.path without an install: no metadata to read
    __version__ = "unknown"

__all__ = [
    "AdditiveAttention", "AttentionMaps", "Decoder", "DecoderLayer", "DecoderLayerCache", "DecoderOnlyTransformer",
    "Encoder", "EncoderLayer", "EncoderOnlyTransformer", "InputEmbedding", "KVCache", "LSTM",
    "LayerCaches", "LayerNorm", "LearnedPositionalEmbedding", "MultiHeadAttention", "PRESETS",
    "PositionwiseFeedForward", "Residual", "RotaryEmbedding", "SinusoidalPositionalEncoding",
    "TokenEmbedding", "Transformer", "TransformerConfig", "VanillaRNN", "capture_attention",
    "causal_mask", "combine_masks", "count_parameters", "gradient_norms_through_time",
    "layer_norm", "padding_mask", "parameter_count", "relative_position_map",
    "scaled_dot_product_attention", "sinusoidal_table", "__version__",
]

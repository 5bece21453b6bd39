"""The bad-input sweep (issue 26): every public callable of transformer_lib, found by walking the package,
has a valid call here (or a stated reason to stand outside the sweep); the sweep then replaces one
argument at a time by each value of the wrong type, shape or dtype, NaN, an infinity or a negative number
(``bad_input_sweep.bad_values``). Each case must be refused, with a TypeError (wrong type) or ValueError
(wrong value) whose message names the argument replaced, or be one ``sweep_accepted.ACCEPTED`` lists, with
the reason the library takes that value (``bad_input_sweep.check_outcome``).

A new public function fails ``test_every_public_callable_is_in_the_sweep`` until it gets a valid call
below: the sweep grows with the library. The number of cases run is printed at the end (``-s``).
"""

from __future__ import annotations

import inspect
import random
from functools import partial

import pytest
import torch

from transformer_lib import (
    analysis,
    attention,
    capture,
    checkpoint,
    convert,
    corpus,
    decoder,
    decoding,
    decoding_steps,
    embeddings,
    encoder,
    evaluation,
    feed_forward,
    greedy_trace,
    html_embed,
    language_model,
    measure,
    models,
    multi_head_attention,
    optimiser,
    oracle,
    paper,
    positional_encoding,
    progress,
    prose,
    residual,
    rnn,
    sampling,
    tokenization,
    training,
    vocabularies,
)
from transformer_lib.browser import lm_explorer
from transformer_lib.browser import model as browser_model
from transformer_lib.browser import page as live_explorers
from transformer_lib.config import TransformerConfig
from transformer_lib.figures import architecture, display, positions
from transformer_lib.figures import attention as attention_figures
from transformer_lib.figures import decoding_steps as step_figures
from transformer_lib.figures import embeddings as embeddings_figures
from transformer_lib.figures import ledger as ledger_figures
from transformer_lib.figures import models as models_figures
from transformer_lib.figures import rnn as rnn_figures
from transformer_lib.figures import sampling as sampling_figures
from transformer_lib.figures import training as training_figures
from transformer_lib.pretrained import snapshots
from transformer_lib.pretrained.hub_references import load_reference
from transformer_lib.tokenization import Vocab
from transformer_lib.train import data as train_data
from transformer_lib.vocabulary import SpecialIds

from . import (
    sweep_calls_agreement,
    sweep_calls_beyond,
    sweep_calls_errors,
    sweep_calls_explorer,
    sweep_calls_interventions,
    sweep_calls_pretrained,
    sweep_calls_verdict,
)
from .bad_input_sweep import (
    SWEEP_OUTCOMES,
    bad_values,
    check_outcome,
    none_is_documented,
    public_callables,
)
from .sweep_accepted import ACCEPTED

WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran"]
VOCAB = Vocab(WORDS)  # 12 tokens with the four specials
SENTENCES = ["the cat sat", "a dog ran on the mat"]
PAIRS = [("the cat sat", "the cat sat"), ("a dog ran", "a dog ran")]
CONFIG = TransformerConfig(src_vocab_size=12, tgt_vocab_size=12, d_model=8, n_heads=2, n_encoder_layers=1,
                           n_decoder_layers=1, d_ff=16, dropout=0.0, max_len=16)
torch.manual_seed(0)
MODEL = models.Transformer(CONFIG).eval()
LM = models.DecoderOnlyTransformer(CONFIG).eval()
ENCODER_ONLY = models.EncoderOnlyTransformer(CONFIG).eval()
TINY_GPT2, TINY_BERT = load_reference("tiny_gpt2"), load_reference("tiny_bert")  # Hugging Face's layouts
GPT2, BERT = convert.from_gpt2(TINY_GPT2[1], TINY_GPT2[0]), convert.from_bert(TINY_BERT[1], TINY_BERT[0])
GRU_CONFIG = rnn.Seq2SeqGRUConfig(12, 12, d_model=8, hidden_size=8, n_layers=1, dropout=0.0)
GRU = rnn.Seq2SeqGRU(GRU_CONFIG).eval()
GRU_ATTENTION = rnn.Seq2SeqGRUAttention(GRU_CONFIG).eval()
MHA = multi_head_attention.MultiHeadAttention(8, 2)
SRC = torch.tensor([[4, 5, 6]])
TGT = torch.tensor([[1, 4]])
X = torch.randn(1, 3, 8)
Q4 = torch.randn(1, 2, 3, 4)
MAPS = capture.capture_attention(MODEL, SRC, TGT, VOCAB.itos, VOCAB.itos)
TRANSLATION = decoding.translate(MODEL, "the cat", VOCAB, VOCAB, max_len=3)
SPECIAL = dict(special=SpecialIds(1, 2, 0), max_len=3)
TRACE = decoding_steps.trace_decoding(MODEL, SRC, VOCAB.itos, **SPECIAL, beam_size=2)


def _vectors() -> torch.Tensor:
    return torch.randn(12, 8)


# "module.name" -> a function returning (the callable, a dict of valid keyword arguments)
CALLS = {
    # attention
    "attention.causal_mask": lambda: (attention.causal_mask, dict(n_queries=2, n_keys=3)),
    "attention.padding_mask": lambda: (attention.padding_mask, dict(ids=SRC.clone(), pad_id=0)),
    "attention.masked_softmax": lambda: (attention.masked_softmax, dict(scores=torch.randn(1, 2, 3, 3),
                                                                        mask=attention.causal_mask(3))),
    "attention.attention_weights": lambda: (attention.attention_weights, dict(query=Q4.clone(), key=Q4.clone())),
    "attention.scaled_dot_product_attention": lambda: (attention.scaled_dot_product_attention, dict(
        query=Q4.clone(), key=Q4.clone(), value=Q4.clone(), mask=attention.causal_mask(3), dropout_p=0.0,
        need_weights=True)),
    "attention.AdditiveAttention": lambda: (attention.AdditiveAttention, dict(d_query=4, d_key=4, d_attention=3)),
    "attention.AdditiveAttention.forward": lambda: (attention.AdditiveAttention(4, 4, 3), dict(
        query=Q4.clone(), key=Q4.clone(), value=Q4.clone())),
    "attention.AdditiveAttention.scores": lambda: (attention.AdditiveAttention(4, 4, 3).scores, dict(
        query=Q4.clone(), key=Q4.clone())),
    # multi-head attention and layers
    "multi_head_attention.MultiHeadAttention": lambda: (multi_head_attention.MultiHeadAttention, dict(
        d_model=8, n_heads=2, dropout=0.0)),
    "multi_head_attention.MultiHeadAttention.forward": lambda: (MHA, dict(query=X.clone(), key=X.clone(),
                                                                          value=X.clone(), need_weights=True)),
    "multi_head_attention.MultiHeadAttention.split_heads": lambda: (MHA.split_heads, dict(x=X.clone())),
    "multi_head_attention.MultiHeadAttention.merge_heads": lambda: (MHA.merge_heads, dict(x=Q4.clone())),
    "embeddings.TokenEmbedding": lambda: (embeddings.TokenEmbedding, dict(vocab_size=12, d_model=8)),
    "embeddings.TokenEmbedding.forward": lambda: (embeddings.TokenEmbedding(12, 8), dict(ids=SRC.clone())),
    "feed_forward.PositionwiseFeedForward": lambda: (feed_forward.PositionwiseFeedForward, dict(
        d_model=8, d_ff=16, activation="relu")),
    "feed_forward.PositionwiseFeedForward.forward": lambda: (feed_forward.PositionwiseFeedForward(8, 16), dict(
        x=X.clone())),
    "residual.layer_norm": lambda: (residual.layer_norm, dict(x=X.clone(), gamma=torch.ones(8), beta=torch.zeros(8),
                                                              eps=1e-5)),
    "residual.LayerNorm": lambda: (residual.LayerNorm, dict(d_model=8, eps=1e-5)),
    "residual.LayerNorm.forward": lambda: (residual.LayerNorm(8), dict(x=X.clone())),
    "residual.Residual": lambda: (residual.Residual, dict(d_model=8, dropout=0.0, norm_first=False, eps=1e-5)),
    "residual.Residual.forward": lambda: (residual.Residual(8, 0.0), dict(x=X.clone(), sublayer=torch.tanh)),
    "residual.NoResidual": lambda: (residual.NoResidual, dict(d_model=8, dropout=0.0, norm_first=False, eps=1e-5)),
    "residual.NoResidual.forward": lambda: (residual.NoResidual(8, 0.0), dict(x=X.clone(), sublayer=torch.tanh)),
    "encoder.EncoderLayer": lambda: (encoder.EncoderLayer, dict(d_model=8, n_heads=2, d_ff=16, dropout=0.0)),
    "encoder.EncoderLayer.forward": lambda: (encoder.EncoderLayer(8, 2, 16, 0.0), dict(
        x=X.clone(), mask=attention.causal_mask(3))),
    "encoder.EncoderLayer.check_inputs": lambda: (encoder.EncoderLayer(8, 2, 16, 0.0).check_inputs, dict(x=X.clone())),
    "encoder.TransformerLayer.stack": lambda: (encoder.EncoderLayer(8, 2, 16, 0.0).stack, dict(n_layers=2)),
    "encoder.Encoder": lambda: (encoder.Encoder, dict(layer=encoder.EncoderLayer(8, 2, 16, 0.0), n_layers=2)),
    "encoder.Encoder.forward": lambda: (encoder.Encoder(encoder.EncoderLayer(8, 2, 16, 0.0), 1), dict(x=X.clone())),
    "decoder.DecoderLayer": lambda: (decoder.DecoderLayer, dict(d_model=8, n_heads=2, d_ff=16, dropout=0.0)),
    "decoder.DecoderLayer.forward": lambda: (decoder.DecoderLayer(8, 2, 16, 0.0), dict(
        x=X.clone(), memory=torch.randn(1, 4, 8), tgt_mask=attention.causal_mask(3))),
    "decoder.DecoderLayer.check_inputs": lambda: (decoder.DecoderLayer(8, 2, 16, 0.0).check_inputs, dict(
        x=X.clone(), memory=torch.randn(1, 4, 8), tgt_mask=attention.causal_mask(3), memory_mask=None,
        cache=decoder.DecoderLayerCache())),
    "decoder.Decoder": lambda: (decoder.Decoder, dict(layer=decoder.DecoderLayer(8, 2, 16, 0.0), n_layers=2)),
    "decoder.Decoder.forward": lambda: (decoder.Decoder(decoder.DecoderLayer(8, 2, 16, 0.0), 1), dict(
        x=X.clone(), memory=torch.randn(1, 4, 8))),
    # positions
    "positional_encoding.sinusoidal_table": lambda: (positional_encoding.sinusoidal_table, dict(max_len=5, d_model=8)),
    "positional_encoding.relative_position_map": lambda: (positional_encoding.relative_position_map, dict(
        offset=2, d_model=8)),
    "positional_encoding.SinusoidalPositionalEncoding": lambda: (positional_encoding.SinusoidalPositionalEncoding,
                                                                 dict(d_model=8, max_len=10)),
    "positional_encoding.SinusoidalPositionalEncoding.forward": lambda: (
        positional_encoding.SinusoidalPositionalEncoding(8, 10), dict(x=X.clone(), offset=1)),
    "positional_encoding.LearnedPositionalEmbedding": lambda: (positional_encoding.LearnedPositionalEmbedding,
                                                               dict(d_model=8, max_len=10)),
    "positional_encoding.LearnedPositionalEmbedding.forward": lambda: (
        positional_encoding.LearnedPositionalEmbedding(8, 10), dict(x=X.clone(), offset=1)),
    "positional_encoding.RotaryEmbedding": lambda: (positional_encoding.RotaryEmbedding, dict(
        d_head=4, max_len=10, base=100.0)),
    "positional_encoding.RotaryEmbedding.forward": lambda: (positional_encoding.RotaryEmbedding(4, 10), dict(
        x=Q4.clone(), offset=1)),
    # models
    "models.InputEmbedding": lambda: (models.InputEmbedding, dict(vocab_size=12, config=CONFIG)),
    "models.InputEmbedding.forward": lambda: (models.InputEmbedding(12, CONFIG), dict(ids=SRC.clone(), offset=1)),
    "models.Transformer": lambda: (models.Transformer, dict(config=CONFIG)),
    "models.Transformer.forward": lambda: (MODEL, dict(src_ids=SRC.clone(), tgt_ids=TGT.clone())),
    "models.Transformer.encode": lambda: (MODEL.encode, dict(src_ids=SRC.clone())),
    "models.Transformer.decode": lambda: (MODEL.decode, dict(tgt_ids=TGT.clone(), memory=MODEL.encode(SRC),
                                                             src_ids=SRC.clone(), cache=MODEL.new_cache())),
    "models.Transformer.src_mask": lambda: (MODEL.src_mask, dict(src_ids=SRC.clone())),
    "models.Transformer.tgt_mask": lambda: (MODEL.tgt_mask, dict(tgt_ids=TGT.clone())),
    "models.DecoderOnlyTransformer": lambda: (models.DecoderOnlyTransformer, dict(config=CONFIG)),
    "models.DecoderOnlyTransformer.forward": lambda: (LM, dict(ids=SRC.clone(), cache=LM.new_cache())),
    "models.EncoderOnlyTransformer": lambda: (models.EncoderOnlyTransformer, dict(config=CONFIG)),
    "models.EncoderOnlyTransformer.forward": lambda: (ENCODER_ONLY, dict(ids=SRC.clone())),
    "models.EncoderOnlyTransformer.encode": lambda: (ENCODER_ONLY, dict(ids=SRC.clone())),
    "models.EncoderOnlyTransformer.pool": lambda: (BERT.pool, dict(hidden=torch.randn(2, 5, 16, dtype=torch.float64))),
    "models.FirstTokenPooler": lambda: (models.FirstTokenPooler, dict(d_model=8)),
    "models.FirstTokenPooler.forward": lambda: (models.FirstTokenPooler(8), dict(hidden=torch.randn(2, 5, 8))),
    "convert.from_gpt2": lambda: (convert.from_gpt2, dict(state_dict=dict(TINY_GPT2[1]), config=dict(TINY_GPT2[0]))),
    "convert.to_gpt2": lambda: (convert.to_gpt2, dict(model=GPT2)),
    "convert.gpt2_config": lambda: (convert.gpt2_config, dict(config=dict(TINY_GPT2[0]))),
    "convert.from_bert": lambda: (convert.from_bert, dict(state_dict=dict(TINY_BERT[1]), config=dict(TINY_BERT[0]))),
    "convert.bert_config": lambda: (convert.bert_config, dict(config=dict(TINY_BERT[0]))),
    "models.DecoderOnlyCache.index_select": lambda: (_filled_lm_cache().index_select, dict(index=torch.tensor([0]))),
    "models.count_parameters": lambda: (models.count_parameters, dict(model=MODEL)),
    "models.parameter_count": lambda: (models.parameter_count, dict(config=CONFIG)),
    # decoding and sampling
    "decoding.greedy_decode": lambda: (decoding.greedy_decode, dict(model=MODEL, src_ids=SRC.clone(), **SPECIAL,
                                                                    use_cache=True)),
    "decoding.beam_search": lambda: (decoding.beam_search, dict(model=MODEL, src_ids=SRC.clone(), **SPECIAL,
                                                                beam_size=2, alpha=0.6)),
    "decoding.sample_decode": lambda: (decoding.sample_decode, dict(
        model=MODEL, src_ids=SRC.clone(), **SPECIAL, temperature=1.0, top_k=3, top_p=0.9,
        generator=torch.Generator().manual_seed(0))),
    "decoding.length_penalty": lambda: (decoding.length_penalty, dict(length=3, alpha=0.6)),
    "decoding.generate": lambda: (decoding.generate, dict(model=MODEL, src_ids=SRC.clone(), tgt_vocab=VOCAB,
                                                          beam_size=2, alpha=0.6, max_len=3)),
    "decoding.translate": lambda: (decoding.translate, dict(model=MODEL, sentence="the cat", src_vocab=VOCAB,
                                                            tgt_vocab=VOCAB, beam_size=1, alpha=0.6, max_len=3)),
    "decoding.check_translation_model": lambda: (decoding.check_translation_model, dict(
        model=MODEL, src_vocab=VOCAB, tgt_vocab=VOCAB, need_source=True)),
    "decoding.default_max_len": lambda: (decoding.default_max_len, dict(model=MODEL, src_len=3)),
    "decoding.next_token_logits": lambda: (decoding.next_token_logits, dict(
        model=MODEL, hidden=torch.randn(1, 2, 8), banned=[0, 1])),
    "sampling.filter_logits": lambda: (sampling.filter_logits, dict(logits=torch.randn(2, 5), top_k=2, top_p=0.9)),
    "sampling.tempered_logits": lambda: (sampling.tempered_logits, dict(logits=torch.randn(2, 5), temperature=0.5)),
    "sampling.draw_next": lambda: (sampling.draw_next, dict(logits=torch.randn(2, 5), temperature=1.0, top_k=3,
                                                            top_p=0.9, generator=torch.Generator().manual_seed(0))),
    "sampling.sample_continuation": lambda: (sampling.sample_continuation, dict(
        model=LM, prompt_ids=TGT.clone(), max_new_tokens=2, temperature=1.0, top_k=3, top_p=0.9,
        generator=torch.Generator().manual_seed(0), eos_id=2, banned_ids=(3,), use_cache=True)),
    "sampling.check_sampling_args": lambda: (sampling.check_sampling_args, dict(
        temperature=1.0, top_k=3, top_p=0.9, generator=None, allow_greedy=False)),
    "greedy_trace.trace_greedy": lambda: (greedy_trace.trace_greedy, dict(
        model=MODEL, src_ids=SRC.clone(), itos=VOCAB.itos, **SPECIAL, top_k=3)),
    "decoding_steps.trace_decoding": lambda: (decoding_steps.trace_decoding, dict(
        model=MODEL, src_ids=SRC.clone(), itos=VOCAB.itos, **SPECIAL, beam_size=2, alpha=0.6, top_k=3,
        src_itos=VOCAB.itos)),
    "decoding_steps.trace_translation": lambda: (decoding_steps.trace_translation, dict(
        model=MODEL, sentence="the cat", src_vocab=VOCAB, tgt_vocab=VOCAB, beam_size=2, alpha=0.6, top_k=3)),
    "figures.decoding_steps.candidate_marks": lambda: (step_figures.candidate_marks, dict(trace=TRACE, step=1)),
    "figures.decoding_steps.step_figures": lambda: (step_figures.step_figures, dict(trace=TRACE, step=1)),
    "figures.decoding_steps.step_summary_html": lambda: (step_figures.step_summary_html, dict(trace=TRACE, step=1)),
    # text
    "vocabulary.Vocab": lambda: (Vocab, dict(tokens=list(WORDS))),
    "vocabulary.SpecialIds": lambda: (SpecialIds, dict(sos=1, eos=2, pad=0)),
    "vocabulary.SpecialIds.replace": lambda: (SpecialIds(1, 2, 0).replace, dict(eos=None)),
    "vocabulary.Vocab.build": lambda: (Vocab.build, dict(sentences=list(SENTENCES), min_freq=1)),
    "vocabulary.Vocab.encode": lambda: (VOCAB.encode, dict(sentence="the cat")),
    "vocabulary.Vocab.encode_with_unknowns": lambda: (VOCAB.encode_with_unknowns, dict(sentence="the cat")),
    "vocabulary.Vocab.decode": lambda: (VOCAB.decode, dict(ids=[4, 5, 2], stop_at_eos=True)),
    "vocabulary.Vocab.from_dict": lambda: (Vocab.from_dict, dict(data=VOCAB.to_dict())),
    "tokenization.normalize_sentence": lambda: (tokenization.normalize_sentence, dict(text="The cat, sat.")),
    "tokenization.learn_bpe": lambda: (tokenization.learn_bpe, dict(text=list(SENTENCES), n_merges=3,
                                                                    end_of_word="</w>")),
    "tokenization.bpe_trace": lambda: (tokenization.bpe_trace, dict(text="the cat sat", n_merges=2)),
    "tokenization.BPETokenizer.learn": lambda: (tokenization.BPETokenizer.learn, dict(text=list(SENTENCES),
                                                                                      n_merges=3)),
    "tokenization.BPETokenizer.tokenize": lambda: (_bpe().tokenize, dict(sentence="the cat")),
    "tokenization.BPETokenizer.tokenize_word": lambda: (_bpe().tokenize_word, dict(word="cat")),
    "tokenization.BPETokenizer.detokenize": lambda: (_bpe().detokenize, dict(symbols=["c", "at</w>"])),
    "batching.encode_pairs": lambda: (tokenization.encode_pairs, dict(pairs=list(PAIRS), src_vocab=VOCAB,
                                                                          tgt_vocab=VOCAB)),
    "batching.pad_sequences": lambda: (tokenization.pad_sequences, dict(sequences=[[4, 5], [6]], pad_id=0)),
    "batching.collate": lambda: (tokenization.collate, dict(encoded=[([4, 5], [6]), ([7], [8, 9])],
                                                                tgt_vocab=VOCAB)),
    "batching.make_batches": lambda: (tokenization.make_batches, dict(
        pairs=list(PAIRS), src_vocab=VOCAB, tgt_vocab=VOCAB, batch_size=1, shuffle=True, seed=0, by_length=False)),
    "batching.Batch.to": lambda: (tokenization.make_batches(PAIRS, VOCAB, VOCAB, 2)[0].to, dict(device="cpu")),
    "corpus.split_by_length": lambda: (corpus.split_by_length, dict(pairs=list(PAIRS), edges=[1, 3, 9])),
    "corpus.make_corpus": lambda: (corpus.make_corpus, dict(seed=0, n_pairs=20, held_out=[("white", "car")],
                                                            novel_per_combination=1)),
    # language model, evaluation, analysis
    "language_model.lm_batches": lambda: (language_model.lm_batches, dict(sentences=list(SENTENCES), vocab=VOCAB,
                                                                          batch_size=1, shuffle=True, seed=0)),
    "language_model.perplexity": lambda: (language_model.perplexity, dict(model=LM, sentences=list(SENTENCES),
                                                                          vocab=VOCAB, batch_size=2)),
    "language_model.next_token_entropy": lambda: (language_model.next_token_entropy, dict(
        model=LM, sentences=list(SENTENCES), vocab=VOCAB, temperature=0.5, batch_size=2)),
    "language_model.bigram_perplexity": lambda: (language_model.bigram_perplexity, dict(
        train_sentences=list(SENTENCES), test_sentences=["the cat ran"], vocab=VOCAB, alpha=0.1)),
    "language_model.sample_sentences": lambda: (language_model.sample_sentences, dict(
        model=LM, vocab=VOCAB, n=2, max_new_tokens=3, temperature=1.0, top_k=3, top_p=0.9,
        generator=torch.Generator().manual_seed(0), prompt="the cat")),
    "evaluation.exact_match": lambda: (evaluation.exact_match, dict(hypotheses=["a b"], references=["a c"])),
    "evaluation.bleu": lambda: (evaluation.bleu, dict(hypotheses=["the cat sat on"], references=["the cat sat on"])),
    "evaluation.accuracy_by_length": lambda: (evaluation.accuracy_by_length, dict(
        sources=["a b", "a b c d"], hypotheses=["x", "y"], references=["x", "z"], edges=[1, 3, 9])),
    "evaluation.translate_batch": lambda: (evaluation.translate_batch, dict(
        model=MODEL, sentences=list(SENTENCES), src_vocab=VOCAB, tgt_vocab=VOCAB, batch_size=1, beam_size=1,
        alpha=0.6, max_len=3)),
    "evaluation.evaluate_translation": lambda: (evaluation.evaluate_translation, dict(
        model=MODEL, pairs=list(PAIRS), src_vocab=VOCAB, tgt_vocab=VOCAB, batch_size=2, beam_size=1, alpha=0.6)),
    "evaluation.score_translations": lambda: (evaluation.score_translations, dict(
        pairs=list(PAIRS), hypotheses=[t for _, t in PAIRS])),
    "evaluation.greedy_exact_check": lambda: (evaluation.greedy_exact_check, dict(
        model=MODEL, pairs=list(PAIRS), src_vocab=VOCAB, tgt_vocab=VOCAB, batch_size=2, tolerance=1e-3)),
    "analysis.nearest_words": lambda: (analysis.nearest_words, dict(vectors=_vectors(), vocab=VOCAB, word="cat",
                                                                    k=3)),
    "analysis.analogy": lambda: (analysis.analogy, dict(vectors=_vectors(), vocab=VOCAB, a="cat", b="dog", c="mat",
                                                        k=3)),
    "analysis.analogy_ranks": lambda: (analysis.analogy_ranks, dict(vectors=_vectors(), vocab=VOCAB,
                                                                    pairs=[("cat", "dog"), ("mat", "sat")])),
    "analysis.contextual_occurrences": lambda: (analysis.contextual_occurrences, dict(
        model=MODEL, src_vocab=VOCAB, sentences=list(SENTENCES), word="the")),
    "analysis.encoder_unit_activations": lambda: (analysis.encoder_unit_activations, dict(
        model=MODEL, src_vocab=VOCAB, sentences=list(SENTENCES), layer=0)),
    "analysis.encoder_unit_activations_by_layer": lambda: (analysis.encoder_unit_activations_by_layer, dict(
        model=MODEL, src_vocab=VOCAB, sentences=list(SENTENCES))),
    "analysis.prefix_corruption": lambda: (analysis.prefix_corruption, dict(
        model=MODEL, pairs=list(PAIRS), src_vocab=VOCAB, tgt_vocab=VOCAB, position=1, seed=0)),
    # capture, training
    "capture.capture_attention": lambda: (capture.capture_attention, dict(
        model=MODEL, src_ids=SRC.clone(), tgt_ids=TGT.clone(), src_vocab=VOCAB.itos, tgt_vocab=VOCAB.itos)),
    "capture.capture_translation": lambda: (capture.capture_translation, dict(
        model=MODEL, translation=TRANSLATION, src_vocab=VOCAB, tgt_vocab=VOCAB)),
    "capture.capture_feed_forward": lambda: (capture.capture_feed_forward, dict(model=MODEL, src_ids=SRC.clone(),
                                                                                tgt_ids=TGT.clone())),
    "capture.AttentionMaps.bertviz_kwargs": lambda: (MAPS.bertviz_kwargs, dict(index=0)),
    "loss.label_smoothed_cross_entropy": lambda: (training.label_smoothed_cross_entropy, dict(
        logits=torch.randn(3, 5), target=torch.tensor([1, 2, 3]), smoothing=0.1, pad_id=0, reduction="mean")),
    "optimiser.transformer_lr": lambda: (training.transformer_lr, dict(step=3, d_model=16, warmup=10, scale=1.0)),
    "optimiser.paper_adam": lambda: (training.paper_adam, dict(params=list(torch.nn.Linear(2, 2).parameters()),
                                                              lr=1.0)),
    "optimiser.PaperAdam": lambda: (optimiser.PaperAdam, dict(params=list(torch.nn.Linear(2, 2).parameters()),
                                                             lr=1.0, betas=(0.9, 0.98), eps=1e-9)),
    "optimiser.contiguous_parameters": lambda: (optimiser.contiguous_parameters, dict(model=torch.nn.Linear(2, 2))),
    "training.pick_device": lambda: (training.pick_device, dict(device="cpu")),
    "browser.page.translation_payload": lambda: (live_explorers.translation_payload, dict(
        translation=TRANSLATION, maps=capture.capture_translation(MODEL, TRANSLATION, VOCAB, VOCAB),
        src_vocab=VOCAB, tgt_vocab=VOCAB, notes=["a note"])),
    "html_embed.json_for_script": lambda: (html_embed.json_for_script, dict(value={"a": [1, "<b>"]})),
    "html_embed.script_safe": lambda: (html_embed.script_safe, dict(source="var a = '<b>';")),
    "checkpoint.state_dict_sha256": lambda: (checkpoint.state_dict_sha256, dict(
        state_dict=torch.nn.Linear(2, 2).state_dict())),
    # figures
    "figures.attention.attention_figure": lambda: (attention_figures.attention_figure, dict(
        maps=MAPS, kind="cross", layer=0, head=0, index=0)),
    "figures.attention.attention_menu_figure": lambda: (attention_figures.attention_menu_figure, dict(maps=MAPS,
                                                                                                      index=0)),
    "analysis.head_statistics": lambda: (analysis.head_statistics, dict(maps=MAPS, index=0)),
    "figures.attention.mask_figure": lambda: (attention_figures.mask_figure, dict(
        mask=attention.causal_mask(3), queries=["a", "b", "c"], keys=["a", "b", "c"], title="mask")),
    "figures.positions.similarity_by_offset": lambda: (positions.similarity_by_offset, dict(d_model=8,
                                                                                           max_offset=5)),
    "figures.positions.rope_scores": lambda: (positions.rope_scores, dict(d_head=4, positions=(0, 5), seed=0)),
    "figures.positions.check_positional_settings": lambda: (positions.check_positional_settings, dict(
        d_model=8, dims=(0, 3), positions=(0, 10))),
    "figures.positions.positional_encoding_figure": lambda: (positions.positional_encoding_figure, dict(
        d_model=8, dims=(0, 3), positions=(0, 10))),
    "figures.training.moving_average": lambda: (training_figures.moving_average, dict(values=[1.0, 2.0, 3.0],
                                                                                      window=2)),
    "figures.attention.attention_heads_menu_figure": lambda: (attention_figures.attention_heads_menu_figure, dict(
        maps=MAPS, index=0)),
    "figures.attention.scaling_figure": lambda: (attention_figures.scaling_figure, dict(
        d_ks=[1, 4], measures={"panel": {"curve": [1.0, 2.0]}}, log_y=["panel"], title="t")),
    "figures.attention.weights_side_by_side_figure": lambda: (attention_figures.weights_side_by_side_figure, dict(
        weights={"a": torch.rand(2, 3)}, queries=["q", "r"], keys=["x", "y", "z"], title="t")),
    "figures.architecture.architecture_blocks": lambda: (architecture.architecture_blocks, dict(
        model=MODEL, src_len=3, tgt_len=2, batch=1)),
    "figures.architecture.architecture_svg": lambda: (architecture.architecture_svg, dict(
        blocks=architecture.architecture_blocks(MODEL, 3, 2), title="t")),
    "figures.embeddings.embedding_scatter_figure": lambda: (embeddings_figures.embedding_scatter_figure, dict(
        points=[[0.0, 1.0], [1.0, 0.0]], words=["a", "b"], groupings={"kind": ["x", None]}, title="t")),
    "figures.embeddings.french_word_labels": lambda: (embeddings_figures.french_word_labels, dict(
        words=["chat", "chien"])),
    "models.parameter_breakdown": lambda: (models.parameter_breakdown, dict(config=CONFIG)),
    "models.breakdown_on_meta": lambda: (models.breakdown_on_meta, dict(config=CONFIG)),
    "figures.models.parameter_breakdown_figure": lambda: (models_figures.parameter_breakdown_figure, dict(
        presets=["small"])),
    "analysis.norm_placement_scales": lambda: (analysis.norm_placement_scales, dict(
        norm_first=True, n_layers=2, d_model=8, n_heads=2, d_ff=16, seq_len=3, batch=2, seed=0, n_seeds=1)),
    "figures.models.norm_placement_figure": lambda: (models_figures.norm_placement_figure, dict(
        n_layers=2, d_model=8, n_heads=2, d_ff=16, seq_len=3, batch=2, n_seeds=1)),
    "figures.models.ablation_figure": lambda: (models_figures.ablation_figure, dict(curves={"a": [1.0, 2.0, 3.0]},
                                                                                    window=2)),
    "figures.positions.positional_waves_menu_figure": lambda: (positions.positional_waves_menu_figure, dict(
        d_model=8, positions=(0, 10))),
    "figures.positions.positional_encoding_menu_figure": lambda: (positions.positional_encoding_menu_figure, dict(
        d_models=[8, 16], positions=(0, 10))),
    "figures.positions.similarity_by_offset_figure": lambda: (positions.similarity_by_offset_figure, dict(
        d_models=[8], max_offset=5)),
    "figures.rnn.gradient_norm_figure": lambda: (rnn_figures.gradient_norm_figure, dict(
        by_scale={0.5: [1.0, 0.5]}, fixed={"LSTM": [1.0, 0.9]})),
    "figures.rnn.timing_figure": lambda: (rnn_figures.timing_figure, dict(lengths=[2, 4],
                                                                          seconds={"rnn": [0.1, 0.2]})),
    "figures.rnn.accuracy_by_length_figure": lambda: (rnn_figures.accuracy_by_length_figure, dict(
        buckets={"rnn": evaluation.accuracy_by_length(["a b"], ["x"], ["x"], [1, 3])})),
    "figures.training.learning_rate_figure": lambda: (training_figures.learning_rate_figure, dict(
        d_model=16, warmups=[2, 4], steps=10, active=1)),
    "figures.training.loss_curve_figure": lambda: (training_figures.loss_curve_figure, dict(
        history=_history(), window=2, loss_name="loss")),
    "figures.training.replay_curve_figure": lambda: (training_figures.replay_curve_figure, dict(
        curve={"train_loss": [3.0, 2.0, 1.5, 1.2], "valid_steps": [0, 2, 4], "valid_loss": [3.1, 2.1, 1.3]},
        steps=[0, 4], step=4, window=2)),
    "figures.training.replay_step_marker": lambda: (training_figures.replay_step_marker, dict(step=4)),
    "browser.model.snapshot_file": lambda: (browser_model.snapshot_file, dict(step=40)),
    "pretrained.snapshots.book_model": lambda: (snapshots.book_model, dict(step=0, device="cpu")),
    "pretrained.snapshots.choose_steps": lambda: (snapshots.choose_steps, dict(
        steps=[0, 10, 20, 30], changes=[3.0, 1.0, 0.5], count=3)),
    "pretrained.snapshots.excess_change": lambda: (snapshots.excess_change, dict(
        steps=[0, 10, 20, 30], changes=[3.0, 1.0, 0.5], settled_from=10)),
    "training.TrainingHistory.first_reaching": lambda: (_history().first_reaching, dict(metric="exact", value=0.5)),
    "analysis.UnitActivations.top_tokens": lambda: (_units().top_tokens, dict(unit=0, k=2)),
    "analysis.UnitActivations.class_means": lambda: (_units().class_means, dict(
        word_classes={w: "word" for w in WORDS})),
    "attention.combine_masks": lambda: (attention.combine_masks, dict()),
    "capture.keep_attention_weights": lambda: (lambda model: capture.keep_attention_weights(model).__enter__(),
                                               dict(model=MODEL)),
    "config.TransformerConfig.replace": lambda: (CONFIG.replace, dict(d_model=16, n_heads=4)),
    "config.TransformerConfig.preset": lambda: (TransformerConfig.preset, dict(name="small", d_model=16)),
    "decoder.check_memory": lambda: (decoder.check_memory, dict(memory=torch.randn(1, 4, 8), x=X.clone(),
                                                                cross_attn=MHA)),
    "decoding.max_decode_length": lambda: (decoding.max_decode_length, dict(model=MODEL)),
    "decoding.check_decoding_args": lambda: (decoding.check_decoding_args, dict(
        model=MODEL, src_ids=SRC.clone(), special=SpecialIds(1, 2, 0), max_len=3)),
    "evaluation.EvaluationResult.by_length": lambda: (_evaluation().by_length, dict(edges=[1, 4, 9])),
    "evaluation.compare_decodings": lambda: (evaluation.compare_decodings, dict(first=_evaluation(),
                                                                                second=_evaluation())),
    "language_model.ReadsTargetOnly": lambda: (language_model.ReadsTargetOnly, dict(model=LM)),
    "language_model.ReadsTargetOnly.forward": lambda: (language_model.ReadsTargetOnly(LM), dict(
        src=SRC.clone(), tgt_in=TGT.clone())),
    "browser.page.live_explorer_html": lambda: (live_explorers.live_explorer_html, dict(
        kind="positional", d_model=8, dims=[0, 3], positions=[0, 10])),
    "browser.page.page_scripts": lambda: (live_explorers.page_scripts, dict(kinds=["attention", "stepper"])),
    "models.DecoderOnlyCache": lambda: (models.DecoderOnlyCache, dict(caches=[multi_head_attention.KVCache()])),
    "residual.without_residuals": lambda: (residual.without_residuals, dict(model=models.Transformer(CONFIG))),
    "rnn.VanillaRNN": lambda: (rnn.VanillaRNN, dict(input_size=4, hidden_size=5, recurrent_scale=0.5)),
    "rnn.VanillaRNN.forward": lambda: (rnn.VanillaRNN(4, 5), dict(x=torch.randn(1, 3, 4), h=torch.zeros(1, 5))),
    "rnn.LSTM": lambda: (rnn.LSTM, dict(input_size=4, hidden_size=5, forget_bias=1.0)),
    "rnn.LSTM.forward": lambda: (rnn.LSTM(4, 5), dict(x=torch.randn(1, 3, 4))),
    "rnn.gradient_norms_through_time": lambda: (rnn.gradient_norms_through_time, dict(
        model=rnn.VanillaRNN(4, 5), x=torch.randn(1, 3, 4))),
    "rnn.GRUDecoderState.index_select": lambda: (rnn.GRUDecoderState(torch.zeros(1, 2, 8)).index_select, dict(
        index=torch.tensor([0, 0]))),
    "rnn.Seq2SeqGRU": lambda: (rnn.Seq2SeqGRU, dict(config=GRU_CONFIG)),
    "rnn.Seq2SeqGRU.read_source": lambda: (GRU.read_source, dict(src_ids=SRC.clone())),
    "rnn.Seq2SeqGRU.encode": lambda: (GRU.encode, dict(src_ids=SRC.clone())),
    "rnn.Seq2SeqGRU.decode": lambda: (GRU.decode, dict(tgt_ids=TGT.clone(), memory=GRU.encode(SRC),
                                                       src_ids=SRC.clone(), cache=GRU.new_cache())),
    "rnn.Seq2SeqGRU.forward": lambda: (GRU, dict(src_ids=SRC.clone(), tgt_ids=TGT.clone())),
    "rnn.Seq2SeqGRUAttention": lambda: (rnn.Seq2SeqGRUAttention, dict(config=GRU_CONFIG)),
    "rnn.Seq2SeqGRUAttention.encode": lambda: (GRU_ATTENTION.encode, dict(src_ids=SRC.clone())),
    "rnn.Seq2SeqGRUAttention.decode": lambda: (GRU_ATTENTION.decode, dict(
        tgt_ids=TGT.clone(), memory=GRU_ATTENTION.encode(SRC), src_ids=SRC.clone(), cache=GRU_ATTENTION.new_cache())),
    "rnn.Seq2SeqGRUAttention.attend": lambda: (GRU_ATTENTION.attend, dict(
        tgt_ids=TGT.clone(), memory=GRU_ATTENTION.encode(SRC), src_ids=SRC.clone())),
    "rnn.Seq2SeqGRUAttention.attention_map": lambda: (GRU_ATTENTION.attention_map, dict(src_ids=SRC.clone(),
                                                                                        tgt_ids=TGT.clone())),
    "tokenization.BPETokenizer": lambda: (tokenization.BPETokenizer, dict(
        merges=tokenization.learn_bpe(SENTENCES, 2), end_of_word="</w>", alphabet=["a", "b"])),
    "figures.display.div_id": lambda: (display.div_id, dict(content="abc", prefix="fig")),
    "figures.display.rounded_numbers": lambda: (display.rounded_numbers, dict(value=[1.234567], digits=3)),
    # caches
    "multi_head_attention.KVCache.update": lambda: (_kv_cache().update, dict(k=Q4.clone(), v=Q4.clone())),
    "multi_head_attention.KVCache.index_select": lambda: (_kv_cache().index_select, dict(
        index=torch.tensor([0, 0]))),
    "multi_head_attention.LayerCaches.index_select": lambda: (
        multi_head_attention.LayerCaches([_kv_cache(), _kv_cache()]).index_select, dict(index=torch.tensor([0, 0]))),
    "decoder.DecoderLayerCache.index_select": lambda: (_filled_cache()[0].index_select, dict(
        index=torch.tensor([0, 0]))),
    "multi_head_attention.MultiHeadAttention.rotate": lambda: (
        multi_head_attention.MultiHeadAttention(
        8, 2, rotary=positional_encoding.RotaryEmbedding(4, 10)).rotate, dict(x=Q4.clone(), offset=1)),
    "multi_head_attention.MultiHeadAttention.check_inputs": lambda: (MHA.check_inputs, dict(
        query=X.clone(), key=X.clone(), value=X.clone(), cache=multi_head_attention.KVCache(), need_weights=False)),
    # training pieces
    "training_step.TrainingOptions.replace": lambda: (training.TrainingOptions(steps=2).replace, dict(
        steps=3, epochs=1, time_budget_s=10.0, warmup=4, lr_scale=1.0, label_smoothing=0.1, clip_norm=1.0,
        pad_id=0, seed=0, shuffle=True, device="cpu", eval_every=1, progress=False)),
    "training_step.training_step": lambda: (training.training_step, _step_arguments()),
    "training.train": lambda: (training.train, dict(  # two steps of a d_model-8 model: a fraction of a second
        model=models.Transformer(CONFIG), batches=[_batch(), _batch()], options=training.TrainingOptions(
            steps=2, warmup=2, eval_every=1, progress=False), evaluate=lambda model: {"score": 1.0},
        callback=lambda report: None)),
    "training_step.check_batch": lambda: (training.check_batch, dict(
        batch=tokenization.collate([([4, 5], [6]), ([7], [8, 9])], VOCAB), name="batch", index=None)),
    "training.batch_order": lambda: (training.batch_order, dict(n_batches=3, epoch=1, seed=0, shuffle=True)),
    "training.TrainingHistory.record": lambda: (_history().record, dict(
        result=training.StepResult(loss=1.0, grad_norm=0.5, lr=0.1, tokens=3), elapsed_s=0.5)),
    "training_step.schedule_for": lambda: (training.schedule_for, dict(model=models.Transformer(CONFIG),
                                                                  options=training.TrainingOptions(steps=1))),
    # the grammar as an oracle, the paper's ledger, the prose's numbers
    "oracle.parse_french": lambda: (oracle.parse_french, dict(sentence=FRENCH)),
    "oracle.makes_sense": lambda: (oracle.makes_sense, dict(sentence=oracle.parse_french(FRENCH))),
    "oracle.classify_sentence": lambda: (oracle.classify_sentence, dict(sentence=FRENCH, training=[FRENCH])),
    "oracle.classify_error": lambda: (oracle.classify_error, dict(hypothesis="nous achetons nos grandes",
                                                                  reference=FRENCH)),
    "oracle.classify_errors": lambda: (oracle.classify_errors, dict(
        errors=[("we buy our big cars", "nous achetons nos grandes", FRENCH)])),
    "language_model.sample_shares": lambda: (language_model.sample_shares, dict(
        drawn=[language_model.SampledSentence(FRENCH, True), language_model.SampledSentence("la", False)],
        training=[FRENCH])),
    "paper.row": lambda: (paper.row, dict(key=paper.LEDGER[0].key)),
    "paper.ledger": lambda: (paper.ledger, dict(keys=[paper.LEDGER[0].key])),
    "paper.Ledger": lambda: (paper.Ledger, dict(rows=paper.ledger([paper.LEDGER[0].key]).rows)),
    "prose.Shown": lambda: (prose.Shown, dict(value=0.4912, spec=".2f")),
    "prose.shown": lambda: (prose.shown, dict(value=0.4912, spec=".2f")),
    "prose.expressions": lambda: (prose.expressions, dict(markdown="{eval}`x` and {eval}`y`")),
    "figures.ledger.ledger_effects_figure": lambda: (ledger_figures.ledger_effects_figure, dict(
        results=_ledger_results(), measure="exact_match", labels={"warmup": "warm-up"}, apart=["beam_search"])),
    "figures.architecture.text_alternative": lambda: (architecture.text_alternative, dict(
        blocks=architecture.architecture_blocks(MODEL, 3, 2))),
    "train.data.TextData.to_tokens": lambda: (_text_data().to_tokens, dict(sentence="the cat sat")),
    "train.data.TextData.from_tokens": lambda: (_text_data().from_tokens, dict(tokens=["the", "cat"])),
    "vocabularies.Vocabularies": lambda: (vocabularies.Vocabularies, dict(src=VOCAB, tgt=VOCAB)),
    "vocabularies.Vocabularies.to_tokens": lambda: (vocabularies.Vocabularies(VOCAB, VOCAB).to_tokens,
                                                    dict(sentence="the cat sat")),
    "vocabularies.Vocabularies.encode_with_unknowns": lambda: (vocabularies.Vocabularies(VOCAB, VOCAB)
                                                               .encode_with_unknowns, dict(sentence="the cat")),
    "vocabularies.Vocabularies.to_text": lambda: (vocabularies.Vocabularies(VOCAB, VOCAB).to_text,
                                                  dict(tokens=["the", "cat"])),
    "vocabularies.Vocabularies.from_record": lambda: (vocabularies.Vocabularies.from_record, dict(
        record=vocabularies.Vocabularies(VOCAB, VOCAB).record())),
    "vocabularies.vocabularies_for": lambda: (vocabularies.vocabularies_for, dict(
        model=MODEL, src_vocab=VOCAB, tgt_vocab=VOCAB)),
    "train.data.generated_text": lambda: (train_data.generated_text, dict(seed=0, n_pairs=20)),
    "train.data.global_batches": lambda: (train_data.global_batches, dict(data=_text_data(), batch_size=2, seed=0,
                                                                          min_rows=1)),
    "train.data.local_part": lambda: (train_data.local_part, dict(
        batch=tokenization.collate([([4, 5], [6]), ([7], [8, 9])], VOCAB), rank=1, world_size=2)),
    "browser.model.browser_model_files": lambda: (browser_model.browser_model_files, dict(
        model=MODEL, src_vocab=VOCAB, tgt_vocab=VOCAB)),
    # chapter 8's language model, live (issue 23)
    "sampling.next_token_probs": lambda: (sampling.next_token_probs, dict(
        logits=torch.randn(2, 5), temperature=0.7, top_k=3, top_p=0.9, banned_ids=(0,))),
    "language_model.never_drawn": lambda: (language_model.never_drawn, dict(vocab=VOCAB)),
    "language_model.next_word_probs": lambda: (language_model.next_word_probs, dict(
        model=LM, vocab=VOCAB, prompt="the cat", temperature=0.8, top_k=3, top_p=0.9)),
    "browser.model.file_names": lambda: (browser_model.file_names, dict(stem="book-lm")),
    "browser.lm_explorer.read_lm_settings": lambda: (lm_explorer.read_lm_settings, dict(
        temperature=1.0, top_k="3", top_p=0.9, seed="0")),
    "figures.sampling.next_word_figure": lambda: (sampling_figures.next_word_figure, dict(
        unfiltered=language_model.next_word_probs(LM, VOCAB, "the").tolist(),
        probs=language_model.next_word_probs(LM, VOCAB, "the", top_k=2).tolist(), vocab=list(VOCAB.itos),
        prompt="the", temperature=1.0, top_k=2, top_p=0.9, shown=5)),
    # the training bar (issue 24): tqdm's widget in a notebook, one line of text in the book's build
    "progress.progress_bar": lambda: (progress.progress_bar, dict(total=5, enabled=False)),
    "progress.close_bar": lambda: (progress.close_bar, dict(bar=progress.progress_bar(5, enabled=False))),
    "measure.chapter_times_table": lambda: (measure.chapter_times_table, dict(results=dict(
        host=dict(cpu="a CPU", cores=2, threads=1, torch="2", load_average_before=0.5, load_average_after=1.0),
        date="2026-11-26", chapters=[dict(notebook="01.ipynb", seconds=9.0, cpu_seconds=8.0, first_cell_seconds=3.0,
                                          peak_rss_mb=400.0, budget_seconds=10.0, budget_peak_rss_mb=600.0)]))),
    "measure.seed_claims_table": lambda: (measure.seed_claims_table, dict(results=dict(
        date="2026-11-29", seeds=[0, 1], runs=[dict(notebook="07.ipynb", seed=0, seconds=40.0)],
        asserts=[dict(notebook="07.ipynb", cell=3, line=1, held=2, seeds=2, failed_on=[], not_reached_on=[],
                      **{"assert": "assert True"})]))),
    "measure.time_to_target_table": lambda: (measure.time_to_target_table, dict(results=dict(target=0.95, dispatch=dict(
        avx2=dict(cpu="a CPU", cpu_count=2, load_average=[1.0, 1.0, 1.0], torch="2", runs=[{}], summary=dict(
            book={**{key: dict(min=1.0, median=2.0, max=3.0) for key in (
                "seconds", "steps", "floor_seconds", "torch_seconds")}, "every_seed_reached": True})))))),
}

FRENCH = "nous achetons nos grandes voitures"


def _text_data() -> train_data.TextData:
    return train_data.TextData(PAIRS, VOCAB)


def _kv_cache() -> multi_head_attention.KVCache:
    return multi_head_attention.KVCache(key=Q4.clone(), value=Q4.clone())


def _batch() -> tokenization.Batch:
    return tokenization.collate([([4, 5, 6], [4, 5]), ([7], [8, 9, 10])], VOCAB)


def _step_arguments() -> dict:
    model = models.Transformer(CONFIG)
    options = training.TrainingOptions(steps=1)
    optimizer, scheduler = training.schedule_for(model, options)
    return dict(model=model, batch=_batch(), optimizer=optimizer, scheduler=scheduler, options=options,
                token_total=None)


def _ledger_results() -> dict:
    runs = []
    for seed, (base, warm) in enumerate([(0.8, 0.5), (0.7, 0.5)]):
        runs.append({"variant": "book", "seed": seed, "exact_match": base, "bleu": 90.0, "valid_loss": 1.0,
                     "beam_search": {"exact_match": base + 0.01, "bleu": 90.5}})
        runs.append({"variant": "warmup", "seed": seed, "exact_match": warm, "bleu": 60.0, "valid_loss": 1.5})
    return {"rows": {"book": {}, "warmup": {}, "beam_search": {}}, "runs": runs}


def _filled_cache() -> list:
    cache = MODEL.new_cache()
    memory = MODEL.encode(SRC)
    MODEL.decode(TGT, memory, SRC, cache)
    return cache


def _filled_lm_cache() -> models.DecoderOnlyCache:
    cache = LM.new_cache()
    LM(SRC, cache)
    return cache


def _history() -> training.TrainingHistory:
    history = training.TrainingHistory()
    for step, loss in enumerate([3.0, 2.0, 1.5, 1.0], start=1):
        history.steps.append(step)
        history.losses.append(loss)
        history.lrs.append(0.1)
    history.evaluations.append({"step": 4, "exact": 0.6})
    return history


def _units() -> analysis.UnitActivations:
    return analysis.encoder_unit_activations(MODEL, VOCAB, SENTENCES)


def _evaluation() -> evaluation.EvaluationResult:
    return evaluation.evaluate_translation(MODEL, PAIRS, VOCAB, VOCAB)


def _bpe() -> tokenization.BPETokenizer:
    return tokenization.BPETokenizer.learn(SENTENCES, 3)


# Outside the sweep, each with its reason.
RECORD = "a plain record (dataclass or exception): its fields are what the library wrote, not a reader's input"
SLOW = "trains or evaluates a book-sized model (minutes): its arguments are tested in its own test file"
EXEMPT_PREFIXES = {
    **{prefix: "the checks themselves: they report the name they are given (tests/test_bad_input_*.py)"
       for prefix in ("validation.", "validation_tensors.", "validation_models.")},
    "browser.explorers.": "widgets: every error becomes a message in the widget (tests/test_figures_explorers.py)",
    "browser.lm_explorer.LanguageModelExplorer": "a widget: every error becomes a message in it "
                                                 "(tests/test_live_lm.py)",
    "browser.stepper.": "a widget: every error becomes a message in the widget (tests/test_decoding_steps.py)",
    "lexicon.": RECORD,
    "grammar.": "the corpus grammar's internals, driven by make_corpus (tests/test_corpus.py)",
    "torch_reference.": "copies weights between two modules the tests build themselves (tests/test_layers.py)",
    **{prefix: "the torchrun command (python -m transformer_lib.train): trains a model (minutes, several "
                "processes); train.cli's parser checks every option before any of this runs, and "
                "tests/test_distributed.py tests bad options (exit 2, one line naming the option)"
       for prefix in ("train.cli.", "train.run.", "train.distributed.", "train.demo.", "train.launch.",
                      "train.stops.")},
}


def _exempt(name: str, value: object) -> str | None:
    short = name.removeprefix("transformer_lib.")
    for prefix, reason in EXEMPT_PREFIXES.items():
        if short.startswith(prefix):
            return reason
    if inspect.isclass(value) and (hasattr(value, "__dataclass_fields__") or issubclass(value, Exception)):
        return RECORD
    if inspect.isclass(value) and issubclass(value, tuple) and hasattr(value, "_fields"):
        return RECORD
    owner = getattr(value, "__qualname__", "").split(".")[0]
    if getattr(getattr(inspect.getmodule(value), owner, None), "_is_protocol", False):
        return "a typing.Protocol: describes what decoding needs, nothing to call"
    try:
        parameters = [p for p in inspect.signature(value).parameters if p not in ("self", "cls")]
    except (TypeError, ValueError):
        parameters = []
    if not parameters:
        return "takes no argument"
    return OTHER_EXEMPT.get(short)


OTHER_EXEMPT = {
    "language_model.train_language_model": SLOW,
    "optimiser.PaperAdam.step": "torch.optim.Optimizer's protocol: reads the gradients torch's backward wrote",
    "optimiser.PaperAdam.zero_grad": "torch.optim.Optimizer's own method, unwrapped (its argument is a flag)",
    "optimiser.PaperAdam.add_param_group": "torch.optim.Optimizer's own method, unwrapped: torch checks the group",
    "optimiser.warmup_scheduler": "wraps torch's LambdaLR around an optimizer; its numbers go to transformer_lr",
    "measure.best_time": "times a callable the caller writes (tests/test_measure.py)",
    "pretrained.recipe.write_corpus": "writes the stored corpus: tests/test_book_corpus.py",
    "pretrained.recipe.read_corpus": "reads what write_corpus wrote: tests/test_book_corpus.py",
    "checkpoint.save_checkpoint": "writes files: tests/test_checkpoint.py tests its arguments",
    "checkpoint.load_checkpoint": "reads files: tests/test_checkpoint.py tests its arguments",
    "checkpoint.write_atomically": "writes files: tests/test_checkpoint.py",
    "checkpoint.remove_temporary_files": "removes files: tests/test_checkpoint.py",
    "checkpoint.checkpoint_from_parts": "reads what load_checkpoint and load_shipped read: CheckpointError",
    "checkpoint.check_dtypes": "reads what load_checkpoint and load_shipped read: CheckpointError",
    "checkpoint.check_sha256": "compares two digests the library computed",
    "browser.model.write_browser_model": "writes files: tests/test_live_model.py",
    "browser.model.write_book_model": "writes files: tests/test_live_model.py",
    "browser.model.write_book_lm": "writes files: tests/test_live_lm.py",
    "browser.model.read_weights": "reads files: tests/test_live_model.py",
    "browser.model.read_snapshot_weights": "reads files: tests/test_replay_page.py",
    "browser.model.snapshot_files": "the replay's files from what pretrained.snapshots stored: "
                                    "tests/test_replay_page.py",
    "browser.page.write_page_files": "writes files: tests/test_live_model.py",
    "encoder.TransformerLayer": "the base of EncoderLayer and DecoderLayer, built through them with the same "
                                "arguments: their constructors are in the sweep",
    "multi_head_attention.LayerCaches": "list's own constructor (positional only): a list of caches; its "
                                        "index_select is in the sweep",
    "source.source_url": "tests/test_source.py",
    **{f"train.data.{name}": "reads the command's data files: a bad file is a DataError naming the file and "
                             "line (tests/test_distributed.py)"
       for name in ("read_lines", "read_parallel", "load_vocab_file", "load_text")},
    "figures.bertviz.bertviz_head_view": "tests/test_figures_bertviz.py",
    "figures.bertviz.bertviz_model_view": "tests/test_figures_bertviz.py",
    "figures.display.show": "displays in a notebook",
    "figures.display.figure_mimebundle": "takes plotly's own figure; tests/test_figures_display.py",
    "figures.display.BookRenderer.to_mimebundle": "plotly's renderer interface",
    "source.source_of": "tests/test_source.py",
    "source.show_source": "tests/test_source.py",
}
# The calls and reasons of later modules, one file per group (chapter 9's models; agreement, relative positions
# and the exercises; the whole-model explorer)
for _group in (sweep_calls_agreement, sweep_calls_beyond, sweep_calls_errors, sweep_calls_explorer,
               sweep_calls_interventions, sweep_calls_pretrained, sweep_calls_verdict):
    CALLS.update(_group.CALLS)
    OTHER_EXEMPT.update(_group.EXEMPT)


def _entries() -> dict[str, tuple[object, str | None]]:
    return {name.removeprefix("transformer_lib."): (value, _exempt(name, value))
            for name, value in public_callables().items()}


def test_every_public_callable_is_in_the_sweep():
    missing = [name for name, (_, reason) in _entries().items() if reason is None and name not in CALLS]
    assert not missing, f"give these a valid call in CALLS (or a reason in OTHER_EXEMPT): {missing}"
    stale = [name for name in CALLS if name not in _entries()]
    assert not stale, f"CALLS names callables that no longer exist: {stale}"
    stale_reasons = [name for name in OTHER_EXEMPT if name not in _entries()]
    assert not stale_reasons, f"OTHER_EXEMPT names callables that no longer exist: {stale_reasons}"


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_valid_call_works(name):
    function, kwargs = CALLS[name]()
    function(**kwargs)


ARGUMENTS = [(name, argument) for name in sorted(CALLS) for argument in CALLS[name]()[1]]


def sweep_argument(name: str, argument: str) -> list[str]:
    """Every bad value of ``argument`` in ``CALLS[name]``'s valid call, one case each (``check_outcome``):
    what went wrong, one line per case (empty: each was refused naming ``argument``, or is in ACCEPTED)."""
    findings = []
    valid = CALLS[name]()[1][argument]
    if not bad_values(valid):  # a sweep that tries nothing must not pass
        findings.append(f"{name}({argument}): no bad value to try for the valid {valid!r} (bad_values gave none)")
    for bad in bad_values(valid):
        function, kwargs = CALLS[name]()
        kwargs[argument] = bad.value
        random.seed(0)
        torch.manual_seed(0)
        key = (name, argument, bad.label)
        documented = bad.value is None and none_is_documented(function, argument)
        accepted = "its type hint or default says None" if documented else ACCEPTED.get(key)
        try:
            outcome = check_outcome(f"{name}({argument}={bad.label})", partial(function, **kwargs), argument, bad,
                                    accepted, documented)
            SWEEP_OUTCOMES[key] = outcome
        except AssertionError as finding:
            findings.append(str(finding))
    return findings


@pytest.mark.parametrize("name, argument", ARGUMENTS, ids=[f"{n}-{a}" for n, a in ARGUMENTS])
def test_a_bad_argument_is_refused_by_name(name, argument):
    findings = sweep_argument(name, argument)
    assert not findings, "\n".join(findings)


def test_every_acceptance_names_a_case_and_says_why():
    labels = {(name, argument): {bad.label for bad in bad_values(CALLS[name]()[1][argument])}
              for name, argument in ARGUMENTS}
    unknown = [key for key in ACCEPTED if key[2] not in labels.get(key[:2], ())]
    assert not unknown, f"ACCEPTED names cases the sweep does not run: {unknown}"
    assert all(isinstance(reason, str) and len(reason) > 20 for reason in ACCEPTED.values())

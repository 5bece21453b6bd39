"""The bad values the library deliberately accepts, for the bad-input sweep (tests/test_bad_input_sweep.py):
(callable, argument, the bad value's label in ``bad_input_sweep.bad_values``) -> why the value is accepted.

A case listed in ACCEPTED must succeed (a refusal makes the entry stale, and the sweep says so); a case not
listed must be refused with a TypeError or ValueError naming its argument. Each reason says why the value is
a valid input there, not a wrong one. KNOWN_DEFECTS lists, apart, the cases the stricter sweep (issue 41)
found that are defects still open: they are not acceptances (the sweep reports them as defects, by count),
and each fails the sweep as stale the day the library refuses it, so the list can only shrink."""

from __future__ import annotations


def _each(reason: str, label: str, cases: list[tuple[str, str]]) -> dict[tuple[str, str, str], str]:
    return {(name, argument, label): reason for name, argument in cases}


REPEATED = ('a list may hold the same item twice: each item is read on its own (a sentence twice is two '
            'sentences)')
LONG_TEXT = ('any str is valid text: 10,000 letters are one long (unknown) word, or a long title, read like any '
             'other')
SEED = 'a seed is any int torch.manual_seed and random.Random take, negative ones included'
TEXT_BOX = "reads the page's text boxes: the number a box's text stands for is as good as the text"
ANY_VOCAB = ('encodes text with the vocabulary it is given (an unknown word becomes <unk>); no model here for its '
             'size to disagree with')
SIZED_BY_VOCAB = 'builds its model for the vocabulary it is given: any size is the right size'
IGNORES_SRC = 'a language model in the seq2seq harness: it reads the target only and ignores src by design'
GRU_NO_ATTENTION = "the GRU without attention never reads src_ids in decode (the parameter is Seq2SeqModel's interface)"
PAD_COMPARE = ('ids read only to find <pad> (ids != pad_id), never to index: any int compares; the embedding that '
               'indexes them checks their range')
X_FOR_BATCH = 'check_memory checks memory; x is read only for its batch size (the layer checks x itself)'
BLOCK = ("a building block inside the layers: it computes what it is given (NaN in, NaN out, as torch's own "
         'modules do); the finiteness check runs once where data enter a layer or a model, not in every '
         'sublayer at every step')
MASK_BROADCAST = 'a mask broadcasts: (T, T), (B, T, T) and (B, 1, T, T) all apply (check_mask)'
LEADING_DIMS = 'works position-wise on (..., d): any number of leading dimensions is a valid batch shape'
NUMBERS_ANY_DTYPE = 'pixels, 0/1 labels and probe features are numbers: any numeric dtype is read as its values'
PURE_DTYPE = 'a function without parameters: it computes in the dtype it is given (float64 in, float64 out)'
RESHAPE = 'a reshape: it moves values of any dtype'
EMPTY = 'an empty collection is a valid one here: the result is empty too (no sentences, no notes, no merges)'
EMPTY_INDEX = 'an empty index keeps no rows, as Tensor.index_select does'
NONE_OFF = "None leaves that filter out (or uses torch's global generator), as in every sampler's signature"
INF_OFF = 'inf is documented there: no time limit, or no clipping (check_number with allow_inf)'
INDEX_INT = 'index is an int or None: 3 is a valid index'
FORMATS_ANY = 'formats any value format() takes: NaN prints as nan, True as True, a negative number with its sign'
ROUNDS_ANY = 'rounds the floats inside any JSON-like value and leaves everything else as it is (its docstring)'
ANY_JSON = ('any JSON value is valid: None is null, a str a string, [] an empty array; a non-str key becomes a '
            'string, as json.dumps makes it')
THRESHOLD = ('any threshold is a question with an answer: -inf is reached at the first evaluation, inf never '
             '(None)')
SIGNED_KNOB = ('a teaching knob of either sign: a negative forget bias shuts the gate, a negative recurrent scale '
               'flips the recurrence')
SIGNED_OFFSET = 'an offset before the position is a negative offset: the map is defined for every int'
BEFORE_START = 'a step before 0 means settled from the start'
NO_POSITION_TABLE = "a module without a positional table has no length limit, as the RNN has none"
ANY_MODULE = 'takes any torch module: counts, captures, trains or strips what it has'
ONE_TEXT = 'text is a str or a list of str (its type hint): one str is one text'
SEARCHED_ONLY = ('training is only searched (sentence in training): an item that is no str can never match, so it '
                 'changes nothing; checking the 15,000 items on every call would cost more than the search')

ACCEPTED: dict[tuple[str, str, str], str] = {
    **_each(ANY_JSON, 'None', [
        ('html_embed.json_for_script', 'value'),
    ]),
    **_each(ANY_JSON, '[]', [
        ('html_embed.json_for_script', 'value'),
    ]),
    **_each(ANY_JSON, 'a string', [
        ('html_embed.json_for_script', 'value'),
    ]),
    **_each(ANY_JSON, '{3: None}', [
        ('html_embed.json_for_script', 'value'),
    ]),
    **_each(ANY_MODULE, 'an nn.Linear', [
        ('capture.keep_attention_weights', 'model'),
        ('class_token.adam_steps', 'model'),
        ('models.count_parameters', 'model'),
        ('residual.without_residuals', 'model'),
    ]),
    **_each(ANY_VOCAB, 'a one-word Vocab', [
        ('batching.collate', 'tgt_vocab'),
        ('batching.encode_pairs', 'src_vocab'),
        ('batching.encode_pairs', 'tgt_vocab'),
        ('batching.make_batches', 'src_vocab'),
        ('batching.make_batches', 'tgt_vocab'),
        ('language_model.bigram_perplexity', 'vocab'),
        ('language_model.lm_batches', 'vocab'),
        ('language_model.never_drawn', 'vocab'),
        ('masked_lm.encode_sentences', 'vocab'),
        ('masked_lm.mask_id', 'vocab'),
        ('vocabularies.Vocabularies', 'src'),
        ('vocabularies.Vocabularies', 'tgt'),
    ]),
    **_each(BEFORE_START, '-1', [
        ('pretrained.snapshots.excess_change', 'settled_from'),
    ]),
    **_each(BEFORE_START, '-1000000', [
        ('pretrained.snapshots.excess_change', 'settled_from'),
    ]),
    **_each(BLOCK, 'a NaN', [
        ('attention.attention_weights', 'key'),
        ('attention.attention_weights', 'query'),
        ('attention.masked_softmax', 'scores'),
        ('decoding.next_token_logits', 'hidden'),
        ('feed_forward.PositionwiseFeedForward.forward', 'x'),
        ('models.EncoderOnlyTransformer.pool', 'hidden'),
        ('models.FirstTokenPooler.forward', 'hidden'),
        ('multi_head_attention.KVCache.update', 'k'),
        ('multi_head_attention.KVCache.update', 'v'),
        ('multi_head_attention.MultiHeadAttention.check_inputs', 'key'),
        ('multi_head_attention.MultiHeadAttention.check_inputs', 'query'),
        ('multi_head_attention.MultiHeadAttention.check_inputs', 'value'),
        ('multi_head_attention.MultiHeadAttention.merge_heads', 'x'),
        ('multi_head_attention.MultiHeadAttention.rotate', 'x'),
        ('multi_head_attention.MultiHeadAttention.split_heads', 'x'),
        ('positional_encoding.LearnedPositionalEmbedding.forward', 'x'),
        ('positional_encoding.RotaryEmbedding.forward', 'x'),
        ('positional_encoding.SinusoidalPositionalEncoding.forward', 'x'),
        ('residual.LayerNorm.forward', 'x'),
        ('residual.NoResidual.forward', 'x'),
        ('residual.Residual.forward', 'x'),
        ('residual.layer_norm', 'beta'),
        ('residual.layer_norm', 'gamma'),
        ('residual.layer_norm', 'x'),
        ('rnn.LSTM.forward', 'x'),
        ('rnn.Seq2SeqGRU.decode', 'memory'),
        ('rnn.VanillaRNN.forward', 'h'),
        ('rnn.VanillaRNN.forward', 'x'),
        ('rnn.gradient_norms_through_time', 'x'),
    ]),
    **_each(BLOCK, 'an infinity', [
        ('attention.attention_weights', 'key'),
        ('attention.attention_weights', 'query'),
        ('attention.masked_softmax', 'scores'),
        ('decoding.next_token_logits', 'hidden'),
        ('feed_forward.PositionwiseFeedForward.forward', 'x'),
        ('models.EncoderOnlyTransformer.pool', 'hidden'),
        ('models.FirstTokenPooler.forward', 'hidden'),
        ('multi_head_attention.KVCache.update', 'k'),
        ('multi_head_attention.KVCache.update', 'v'),
        ('multi_head_attention.MultiHeadAttention.check_inputs', 'key'),
        ('multi_head_attention.MultiHeadAttention.check_inputs', 'query'),
        ('multi_head_attention.MultiHeadAttention.check_inputs', 'value'),
        ('multi_head_attention.MultiHeadAttention.merge_heads', 'x'),
        ('multi_head_attention.MultiHeadAttention.rotate', 'x'),
        ('multi_head_attention.MultiHeadAttention.split_heads', 'x'),
        ('positional_encoding.LearnedPositionalEmbedding.forward', 'x'),
        ('positional_encoding.RotaryEmbedding.forward', 'x'),
        ('positional_encoding.SinusoidalPositionalEncoding.forward', 'x'),
        ('residual.LayerNorm.forward', 'x'),
        ('residual.NoResidual.forward', 'x'),
        ('residual.Residual.forward', 'x'),
        ('residual.layer_norm', 'beta'),
        ('residual.layer_norm', 'gamma'),
        ('residual.layer_norm', 'x'),
        ('rnn.LSTM.forward', 'x'),
        ('rnn.Seq2SeqGRU.decode', 'memory'),
        ('rnn.VanillaRNN.forward', 'h'),
        ('rnn.VanillaRNN.forward', 'x'),
        ('rnn.gradient_norms_through_time', 'x'),
    ]),
    **_each(EMPTY, 'empty', [
        ('attention.padding_mask', 'ids'),
        ('browser.page.translation_payload', 'notes'),
        ('corpus.make_corpus', 'held_out'),
        ('decoding.next_token_logits', 'banned'),
        ('evaluation.translate_batch', 'sentences'),
        ('figures.activations.activation_panel', 'src_tokens'),
        ('figures.activations.keys_of', 'src_tokens'),
        ('figures.activations.keys_of', 'tgt_tokens'),
        ('figures.activations.panel_title', 'shape'),
        ('figures.activations.panel_title', 'whole'),
        ('figures.activations.token_path', 'names'),
        ('figures.attention.scaling_figure', 'log_y'),
        ('figures.embeddings.french_word_labels', 'words'),
        ('figures.ledger.ledger_effects_figure', 'apart'),
        ('figures.training.moving_average', 'values'),
        ('language_model.sample_shares', 'training'),
        ('markov.agreement_examples', 'sentences'),
        ('markov.bigram_table', 'sentences'),
        ('markov.skip_bigram_table', 'sentences'),
        ('oracle.classify_errors', 'errors'),
        ('paper.Ledger', 'rows'),
        ('paper.ledger', 'keys'),
        ('sampling.next_token_probs', 'banned_ids'),
        ('sampling.sample_continuation', 'banned_ids'),
        ('tokenization.BPETokenizer', 'alphabet'),
        ('tokenization.BPETokenizer', 'merges'),
        ('tokenization.BPETokenizer.detokenize', 'symbols'),
        ('train.data.TextData.from_tokens', 'tokens'),
        ('vocabularies.Vocabularies.to_text', 'tokens'),
        ('vocabulary.Vocab', 'tokens'),
        ('vocabulary.Vocab.build', 'sentences'),
        ('vocabulary.Vocab.decode', 'ids'),
    ]),
    **_each(EMPTY_INDEX, 'empty', [
        ('decoder.DecoderLayerCache.index_select', 'index'),
        ('models.DecoderOnlyCache.index_select', 'index'),
        ('multi_head_attention.KVCache.index_select', 'index'),
        ('multi_head_attention.LayerCaches.index_select', 'index'),
        ('rnn.GRUDecoderState.index_select', 'index'),
    ]),
    **_each(FORMATS_ANY, '-1000000.0', [
        ('prose.Shown', 'value'),
        ('prose.shown', 'value'),
    ]),
    **_each(FORMATS_ANY, '-1e-06', [
        ('prose.Shown', 'value'),
        ('prose.shown', 'value'),
    ]),
    **_each(FORMATS_ANY, '-inf', [
        ('prose.Shown', 'value'),
        ('prose.shown', 'value'),
    ]),
    **_each(FORMATS_ANY, 'NaN', [
        ('prose.Shown', 'value'),
        ('prose.shown', 'value'),
    ]),
    **_each(FORMATS_ANY, 'True', [
        ('prose.Shown', 'value'),
        ('prose.shown', 'value'),
    ]),
    **_each(FORMATS_ANY, 'inf', [
        ('prose.Shown', 'value'),
        ('prose.shown', 'value'),
    ]),
    **_each(GRU_NO_ATTENTION, 'None', [
        ('rnn.Seq2SeqGRU.decode', 'src_ids'),
    ]),
    **_each(GRU_NO_ATTENTION, 'a list', [
        ('rnn.Seq2SeqGRU.decode', 'src_ids'),
    ]),
    **_each(GRU_NO_ATTENTION, 'bool dtype', [
        ('rnn.Seq2SeqGRU.decode', 'src_ids'),
    ]),
    **_each(GRU_NO_ATTENTION, 'empty', [
        ('rnn.Seq2SeqGRU.decode', 'src_ids'),
    ]),
    **_each(GRU_NO_ATTENTION, 'float dtype', [
        ('rnn.Seq2SeqGRU.decode', 'src_ids'),
    ]),
    **_each(GRU_NO_ATTENTION, 'float16 dtype', [
        ('rnn.Seq2SeqGRU.decode', 'src_ids'),
    ]),
    **_each(GRU_NO_ATTENTION, 'ids + 10000', [
        ('rnn.Seq2SeqGRU.decode', 'src_ids'),
    ]),
    **_each(GRU_NO_ATTENTION, 'ids - 10000', [
        ('rnn.Seq2SeqGRU.decode', 'src_ids'),
    ]),
    **_each(GRU_NO_ATTENTION, 'one dimension fewer', [
        ('rnn.Seq2SeqGRU.decode', 'src_ids'),
    ]),
    **_each(GRU_NO_ATTENTION, 'one dimension more', [
        ('rnn.Seq2SeqGRU.decode', 'src_ids'),
    ]),
    **_each(GRU_NO_ATTENTION, 'uint8 dtype', [
        ('rnn.Seq2SeqGRU.decode', 'src_ids'),
    ]),
    **_each(IGNORES_SRC, 'None', [
        ('language_model.ReadsTargetOnly.forward', 'src'),
    ]),
    **_each(IGNORES_SRC, 'a list', [
        ('language_model.ReadsTargetOnly.forward', 'src'),
    ]),
    **_each(IGNORES_SRC, 'bool dtype', [
        ('language_model.ReadsTargetOnly.forward', 'src'),
    ]),
    **_each(IGNORES_SRC, 'empty', [
        ('language_model.ReadsTargetOnly.forward', 'src'),
    ]),
    **_each(IGNORES_SRC, 'float dtype', [
        ('language_model.ReadsTargetOnly.forward', 'src'),
    ]),
    **_each(IGNORES_SRC, 'float16 dtype', [
        ('language_model.ReadsTargetOnly.forward', 'src'),
    ]),
    **_each(IGNORES_SRC, 'ids + 10000', [
        ('language_model.ReadsTargetOnly.forward', 'src'),
    ]),
    **_each(IGNORES_SRC, 'ids - 10000', [
        ('language_model.ReadsTargetOnly.forward', 'src'),
    ]),
    **_each(IGNORES_SRC, 'one dimension fewer', [
        ('language_model.ReadsTargetOnly.forward', 'src'),
    ]),
    **_each(IGNORES_SRC, 'one dimension more', [
        ('language_model.ReadsTargetOnly.forward', 'src'),
    ]),
    **_each(IGNORES_SRC, 'uint8 dtype', [
        ('language_model.ReadsTargetOnly.forward', 'src'),
    ]),
    **_each(INDEX_INT, '3', [
        ('training_step.check_batch', 'index'),
    ]),
    **_each(INF_OFF, 'inf', [
        ('training_step.TrainingOptions.replace', 'clip_norm'),
        ('training_step.TrainingOptions.replace', 'time_budget_s'),
    ]),
    **_each(LEADING_DIMS, 'one dimension fewer', [
        ('attention.attention_weights', 'key'),
        ('attention.attention_weights', 'query'),
        ('attention.masked_softmax', 'scores'),
        ('feed_forward.PositionwiseFeedForward.forward', 'x'),
        ('residual.LayerNorm.forward', 'x'),
        ('residual.NoResidual.forward', 'x'),
        ('residual.Residual.forward', 'x'),
        ('residual.layer_norm', 'x'),
        ('sampling.filter_logits', 'logits'),
        ('sampling.next_token_probs', 'logits'),
        ('sampling.tempered_logits', 'logits'),
    ]),
    **_each(LEADING_DIMS, 'one dimension more', [
        ('attention.attention_weights', 'key'),
        ('attention.attention_weights', 'query'),
        ('attention.masked_softmax', 'scores'),
        ('feed_forward.PositionwiseFeedForward.forward', 'x'),
        ('residual.LayerNorm.forward', 'x'),
        ('residual.NoResidual.forward', 'x'),
        ('residual.Residual.forward', 'x'),
        ('residual.layer_norm', 'x'),
        ('sampling.filter_logits', 'logits'),
        ('sampling.next_token_probs', 'logits'),
        ('sampling.tempered_logits', 'logits'),
    ]),
    **_each(LONG_TEXT, '10,000 characters', [
        ('browser.model.file_names', 'stem'),
        ('browser.model_explorer.ModelExplorer', 'sentence'),
        ('decoding.translate', 'sentence'),
        ('decoding_steps.trace_translation', 'sentence'),
        ('figures.activations.panel_title', 'extra'),
        ('figures.activations.panel_title', 'token'),
        ('figures.agreement.head_agreement_figure', 'title'),
        ('figures.architecture.architecture_svg', 'title'),
        ('figures.attention.mask_figure', 'title'),
        ('figures.attention.scaling_figure', 'title'),
        ('figures.attention.weights_side_by_side_figure', 'title'),
        ('figures.display.div_id', 'content'),
        ('figures.display.div_id', 'prefix'),
        ('figures.embeddings.embedding_scatter_figure', 'title'),
        ('figures.sampling.next_word_figure', 'prompt'),
        ('figures.training.loss_curve_figure', 'loss_name'),
        ('figures.vision.patch_attention_figure', 'title'),
        ('html_embed.script_safe', 'source'),
        ('language_model.next_word_probs', 'prompt'),
        ('language_model.sample_sentences', 'prompt'),
        ('oracle.classify_error', 'hypothesis'),
        ('oracle.classify_error', 'reference'),
        ('oracle.classify_sentence', 'sentence'),
        ('oracle.first_difference', 'hypothesis'),
        ('oracle.first_difference', 'reference'),
        ('oracle.parse_french', 'sentence'),
        ('oracle.source_positions', 'french_word'),
        ('oracle.source_positions', 'source'),
        ('prose.expressions', 'markdown'),
        ('tokenization.BPETokenizer', 'end_of_word'),
        ('tokenization.BPETokenizer.tokenize', 'sentence'),
        ('tokenization.BPETokenizer.tokenize_word', 'word'),
        ('tokenization.bpe_trace', 'text'),
        ('tokenization.learn_bpe', 'end_of_word'),
        ('tokenization.normalize_sentence', 'text'),
        ('train.data.TextData.to_tokens', 'sentence'),
        ('training.TrainingHistory.first_reaching', 'metric'),
        ('training_step.check_batch', 'name'),
        ('vocabularies.Vocabularies.to_tokens', 'sentence'),
        ('vocabulary.Vocab.encode', 'sentence'),
        ('vocabulary.Vocab.encode_with_unknowns', 'sentence'),
    ]),
    **_each(MASK_BROADCAST, 'one dimension fewer', [
        ('attention.masked_softmax', 'mask'),
    ]),
    **_each(MASK_BROADCAST, 'one dimension more', [
        ('attention.masked_softmax', 'mask'),
        ('attention.scaled_dot_product_attention', 'mask'),
        ('decoder.DecoderLayer.check_inputs', 'tgt_mask'),
        ('decoder.DecoderLayer.forward', 'tgt_mask'),
        ('encoder.EncoderLayer.forward', 'mask'),
        ('relative_position.RelativePositions.forward', 'mask'),
    ]),
    **_each(NONE_OFF, 'None', [
        ('sampling.check_sampling_args', 'generator'),
        ('sampling.check_sampling_args', 'top_k'),
        ('sampling.check_sampling_args', 'top_p'),
    ]),
    **_each(NUMBERS_ANY_DTYPE, 'bool dtype', [
        ('agreement.linear_probe', 'test_x'),
        ('agreement.linear_probe', 'train_x'),
        ('agreement.linear_probe', 'train_y'),
        ('figures.vision.patch_attention_figure', 'image'),
        ('figures.vision.patch_attention_figure', 'weights'),
        ('vision.digit_sets', 'images'),
        ('vision.digit_sets', 'labels'),
        ('vision.image_patches', 'images'),
    ]),
    **_each(NUMBERS_ANY_DTYPE, 'float dtype', [
        ('agreement.linear_probe', 'train_y'),
        ('figures.attention.mask_figure', 'mask'),
        ('vision.digit_sets', 'labels'),
    ]),
    **_each(NUMBERS_ANY_DTYPE, 'float16 dtype', [
        ('agreement.linear_probe', 'test_x'),
        ('agreement.linear_probe', 'train_x'),
        ('agreement.linear_probe', 'train_y'),
        ('figures.attention.mask_figure', 'mask'),
        ('figures.vision.patch_attention_figure', 'image'),
        ('figures.vision.patch_attention_figure', 'weights'),
        ('vision.digit_sets', 'images'),
        ('vision.digit_sets', 'labels'),
        ('vision.image_patches', 'images'),
    ]),
    **_each(NUMBERS_ANY_DTYPE, 'float64 dtype', [
        ('agreement.linear_probe', 'test_x'),
        ('agreement.linear_probe', 'train_x'),
        ('figures.vision.patch_attention_figure', 'image'),
        ('figures.vision.patch_attention_figure', 'weights'),
        ('vision.digit_sets', 'images'),
        ('vision.image_patches', 'images'),
    ]),
    **_each(NUMBERS_ANY_DTYPE, 'int64 dtype', [
        ('agreement.linear_probe', 'test_x'),
        ('agreement.linear_probe', 'train_x'),
        ('figures.attention.mask_figure', 'mask'),
        ('figures.vision.patch_attention_figure', 'image'),
        ('figures.vision.patch_attention_figure', 'weights'),
        ('vision.digit_sets', 'images'),
        ('vision.image_patches', 'images'),
    ]),
    **_each(NUMBERS_ANY_DTYPE, 'uint8 dtype', [
        ('agreement.linear_probe', 'train_y'),
        ('figures.attention.mask_figure', 'mask'),
        ('vision.digit_sets', 'labels'),
    ]),
    **_each(ONE_TEXT, 'a string', [
        ('tokenization.BPETokenizer.learn', 'text'),
        ('tokenization.learn_bpe', 'text'),
    ]),
    **_each(PAD_COMPARE, 'ids + 10000', [
        ('attention.padding_mask', 'ids'),
        ('models.Transformer.decode', 'src_ids'),
        ('models.Transformer.src_mask', 'src_ids'),
        ('models.Transformer.tgt_mask', 'tgt_ids'),
    ]),
    **_each(PAD_COMPARE, 'ids - 10000', [
        ('attention.padding_mask', 'ids'),
        ('models.Transformer.decode', 'src_ids'),
        ('models.Transformer.src_mask', 'src_ids'),
        ('models.Transformer.tgt_mask', 'tgt_ids'),
    ]),
    **_each(PURE_DTYPE, 'float16 dtype', [
        ('analysis.analogy', 'vectors'),
        ('analysis.analogy_ranks', 'vectors'),
        ('analysis.nearest_words', 'vectors'),
        ('attention.masked_softmax', 'scores'),
        ('loss.label_smoothed_cross_entropy', 'logits'),
        ('multi_head_attention.MultiHeadAttention.merge_heads', 'x'),
        ('multi_head_attention.MultiHeadAttention.rotate', 'x'),
        ('multi_head_attention.MultiHeadAttention.split_heads', 'x'),
        ('positional_encoding.LearnedPositionalEmbedding.forward', 'x'),
        ('positional_encoding.RotaryEmbedding.forward', 'x'),
        ('positional_encoding.SinusoidalPositionalEncoding.forward', 'x'),
        ('sampling.draw_next', 'logits'),
        ('sampling.filter_logits', 'logits'),
        ('sampling.next_token_probs', 'logits'),
        ('sampling.tempered_logits', 'logits'),
    ]),
    **_each(PURE_DTYPE, 'float64 dtype', [
        ('analysis.analogy', 'vectors'),
        ('analysis.analogy_ranks', 'vectors'),
        ('analysis.nearest_words', 'vectors'),
        ('attention.masked_softmax', 'scores'),
        ('loss.label_smoothed_cross_entropy', 'logits'),
        ('multi_head_attention.MultiHeadAttention.merge_heads', 'x'),
        ('multi_head_attention.MultiHeadAttention.rotate', 'x'),
        ('multi_head_attention.MultiHeadAttention.split_heads', 'x'),
        ('positional_encoding.LearnedPositionalEmbedding.forward', 'x'),
        ('positional_encoding.RotaryEmbedding.forward', 'x'),
        ('positional_encoding.SinusoidalPositionalEncoding.forward', 'x'),
        ('sampling.draw_next', 'logits'),
        ('sampling.filter_logits', 'logits'),
        ('sampling.next_token_probs', 'logits'),
        ('sampling.tempered_logits', 'logits'),
    ]),
    **_each(REPEATED, 'its first item twice', [
        ('agreement.head_agreement', 'weights'),
        ('agreement.position_baseline', 'links'),
        ('analysis.analogy_ranks', 'pairs'),
        ('analysis.contextual_occurrences', 'sentences'),
        ('analysis.encoder_unit_activations', 'sentences'),
        ('analysis.prefix_corruption', 'pairs'),
        ('batching.collate', 'encoded'),
        ('batching.encode_pairs', 'pairs'),
        ('batching.make_batches', 'pairs'),
        ('batching.pad_sequences', 'sequences'),
        ('browser.page.translation_payload', 'notes'),
        ('corpus.make_corpus', 'held_out'),
        ('corpus.split_by_length', 'pairs'),
        ('decoding.next_token_logits', 'banned'),
        ('error_attention.own_word_weights', 'pairs'),
        ('error_attention.wrong_word_rows', 'errors'),
        ('evaluation.accuracy_by_length', 'hypotheses'),
        ('evaluation.accuracy_by_length', 'references'),
        ('evaluation.accuracy_by_length', 'sources'),
        ('evaluation.evaluate_translation', 'pairs'),
        ('evaluation.greedy_exact_check', 'pairs'),
        ('evaluation.translate_batch', 'sentences'),
        ('figures.activations.activation_panel', 'src_tokens'),
        ('figures.activations.keys_of', 'src_tokens'),
        ('figures.activations.keys_of', 'tgt_tokens'),
        ('figures.activations.panel_title', 'shape'),
        ('figures.activations.panel_title', 'whole'),
        ('figures.activations.token_path', 'names'),
        ('figures.architecture.architecture_svg', 'blocks'),
        ('figures.architecture.text_alternative', 'blocks'),
        ('figures.attention.scaling_figure', 'd_ks'),
        ('figures.attention.scaling_figure', 'log_y'),
        ('figures.attention.weights_side_by_side_figure', 'queries'),
        ('figures.embeddings.embedding_scatter_figure', 'points'),
        ('figures.embeddings.embedding_scatter_figure', 'words'),
        ('figures.embeddings.french_word_labels', 'words'),
        ('figures.errors.wrong_word_rows_figure', 'rows'),
        ('figures.ledger.ledger_effects_figure', 'apart'),
        ('figures.models.parameter_breakdown_figure', 'presets'),
        ('figures.positions.positional_encoding_figure', 'dims'),
        ('figures.positions.positional_encoding_figure', 'positions'),
        ('figures.positions.positional_encoding_menu_figure', 'd_models'),
        ('figures.positions.positional_encoding_menu_figure', 'positions'),
        ('figures.positions.positional_waves_menu_figure', 'positions'),
        ('figures.positions.rope_scores', 'positions'),
        ('figures.positions.similarity_by_offset_figure', 'd_models'),
        ('figures.rnn.timing_figure', 'lengths'),
        ('figures.training.learning_rate_figure', 'warmups'),
        ('figures.training.moving_average', 'values'),
        ('language_model.bigram_perplexity', 'test_sentences'),
        ('language_model.bigram_perplexity', 'train_sentences'),
        ('language_model.lm_batches', 'sentences'),
        ('language_model.next_token_entropy', 'sentences'),
        ('language_model.perplexity', 'sentences'),
        ('language_model.sample_shares', 'drawn'),
        ('language_model.sample_shares', 'training'),
        ('markov.AgreementReader.encode', 'examples'),
        ('markov.HandSetAgreement.features', 'prefix'),
        ('markov.HandSetAgreement.forward', 'prefix'),
        ('markov.agreement_accuracy', 'choices'),
        ('markov.agreement_accuracy', 'examples'),
        ('markov.agreement_examples', 'sentences'),
        ('markov.bigram_choice', 'forms'),
        ('markov.bigram_choice', 'prefix'),
        ('markov.bigram_table', 'sentences'),
        ('markov.labels', 'examples'),
        ('markov.skip_bigram_table', 'sentences'),
        ('markov.skip_vote_choice', 'forms'),
        ('markov.skip_vote_choice', 'prefix'),
        ('masked_lm.encode_sentences', 'sentences'),
        ('models.DecoderOnlyCache', 'caches'),
        ('oracle.classify_errors', 'errors'),
        ('paper.Ledger', 'rows'),
        ('paper.ledger', 'keys'),
        ('sampling.next_token_probs', 'banned_ids'),
        ('sampling.sample_continuation', 'banned_ids'),
        ('tokenization.BPETokenizer', 'alphabet'),
        ('tokenization.BPETokenizer', 'merges'),
        ('tokenization.BPETokenizer.detokenize', 'symbols'),
        ('tokenization.BPETokenizer.learn', 'text'),
        ('tokenization.learn_bpe', 'text'),
        ('train.data.TextData.from_tokens', 'tokens'),
        ('training.train', 'batches'),
        ('vocabularies.Vocabularies.to_text', 'tokens'),
        ('vocabulary.Vocab.build', 'sentences'),
        ('vocabulary.Vocab.decode', 'ids'),
    ]),
    **_each(RESHAPE, 'bool dtype', [
        ('multi_head_attention.MultiHeadAttention.merge_heads', 'x'),
    ]),
    **_each(RESHAPE, 'int64 dtype', [
        ('multi_head_attention.MultiHeadAttention.merge_heads', 'x'),
    ]),
    **_each(ROUNDS_ANY, '3', [
        ('figures.display.rounded_numbers', 'value'),
    ]),
    **_each(ROUNDS_ANY, 'None', [
        ('figures.display.rounded_numbers', 'value'),
    ]),
    **_each(ROUNDS_ANY, '[NaN]', [
        ('figures.display.rounded_numbers', 'value'),
    ]),
    **_each(ROUNDS_ANY, '[None]', [
        ('figures.display.rounded_numbers', 'value'),
    ]),
    **_each(ROUNDS_ANY, '[an unknown object]', [
        ('figures.display.rounded_numbers', 'value'),
    ]),
    **_each(ROUNDS_ANY, 'a string', [
        ('figures.display.rounded_numbers', 'value'),
    ]),
    **_each(ROUNDS_ANY, 'an unknown object', [
        ('figures.display.rounded_numbers', 'value'),
    ]),
    **_each(ROUNDS_ANY, 'empty', [
        ('figures.display.rounded_numbers', 'value'),
    ]),
    **_each(ROUNDS_ANY, 'its first item twice', [
        ('figures.display.rounded_numbers', 'value'),
    ]),
    **_each(SEARCHED_ONLY, '[NaN]', [
        ('oracle.classify_sentence', 'training'),
    ]),
    **_each(SEARCHED_ONLY, '[None]', [
        ('oracle.classify_sentence', 'training'),
    ]),
    **_each(SEARCHED_ONLY, '[an unknown object]', [
        ('oracle.classify_sentence', 'training'),
    ]),
    **_each(SEARCHED_ONLY, 'empty', [
        ('oracle.classify_sentence', 'training'),
    ]),
    **_each(SEARCHED_ONLY, 'its first item twice', [
        ('oracle.classify_sentence', 'training'),
    ]),
    **_each(SEED, '-1', [
        ('analysis.norm_placement_scales', 'seed'),
        ('analysis.prefix_corruption', 'seed'),
        ('batching.make_batches', 'seed'),
        ('class_token.fit_classifier', 'seed'),
        ('corpus.make_corpus', 'seed'),
        ('figures.positions.rope_scores', 'seed'),
        ('language_model.lm_batches', 'seed'),
        ('masked_lm.train_masked_lm', 'seed'),
        ('train.data.generated_text', 'seed'),
        ('train.data.global_batches', 'seed'),
        ('training.batch_order', 'seed'),
        ('training_step.TrainingOptions.replace', 'seed'),
        ('vision.digit_sets', 'seed'),
        ('vision.load_digit_images', 'seed'),
    ]),
    **_each(SEED, '-1000000', [
        ('analysis.norm_placement_scales', 'seed'),
        ('analysis.prefix_corruption', 'seed'),
        ('batching.make_batches', 'seed'),
        ('class_token.fit_classifier', 'seed'),
        ('corpus.make_corpus', 'seed'),
        ('figures.positions.rope_scores', 'seed'),
        ('language_model.lm_batches', 'seed'),
        ('masked_lm.train_masked_lm', 'seed'),
        ('train.data.generated_text', 'seed'),
        ('train.data.global_batches', 'seed'),
        ('training.batch_order', 'seed'),
        ('training_step.TrainingOptions.replace', 'seed'),
        ('vision.digit_sets', 'seed'),
        ('vision.load_digit_images', 'seed'),
    ]),
    **_each(SIGNED_KNOB, '-1000000.0', [
        ('rnn.LSTM', 'forget_bias'),
        ('rnn.VanillaRNN', 'recurrent_scale'),
    ]),
    **_each(SIGNED_KNOB, '-1e-06', [
        ('rnn.LSTM', 'forget_bias'),
        ('rnn.VanillaRNN', 'recurrent_scale'),
    ]),
    **_each(SIGNED_OFFSET, '-1', [
        ('positional_encoding.relative_position_map', 'offset'),
    ]),
    **_each(SIGNED_OFFSET, '-1000000', [
        ('positional_encoding.relative_position_map', 'offset'),
    ]),
    **_each(SIZED_BY_VOCAB, 'a one-word Vocab', [
        ('markov.AgreementReader', 'vocab'),
    ]),
    **_each(TEXT_BOX, '3', [
        ('browser.lm_explorer.read_lm_settings', 'seed'),
        ('browser.lm_explorer.read_lm_settings', 'top_k'),
    ]),
    **_each(THRESHOLD, '-1000000.0', [
        ('training.TrainingHistory.first_reaching', 'value'),
    ]),
    **_each(THRESHOLD, '-1e-06', [
        ('training.TrainingHistory.first_reaching', 'value'),
    ]),
    **_each(THRESHOLD, '-inf', [
        ('training.TrainingHistory.first_reaching', 'value'),
    ]),
    **_each(THRESHOLD, 'inf', [
        ('training.TrainingHistory.first_reaching', 'value'),
    ]),
    **_each(X_FOR_BATCH, 'a NaN', [
        ('decoder.check_memory', 'x'),
    ]),
    **_each(X_FOR_BATCH, 'an infinity', [
        ('decoder.check_memory', 'x'),
    ]),
    **_each(X_FOR_BATCH, 'bool dtype', [
        ('decoder.check_memory', 'x'),
    ]),
    **_each(X_FOR_BATCH, 'empty', [
        ('decoder.check_memory', 'x'),
    ]),
    **_each(X_FOR_BATCH, 'float16 dtype', [
        ('decoder.check_memory', 'x'),
    ]),
    **_each(X_FOR_BATCH, 'float64 dtype', [
        ('decoder.check_memory', 'x'),
    ]),
    **_each(X_FOR_BATCH, 'int64 dtype', [
        ('decoder.check_memory', 'x'),
    ]),
    **_each(X_FOR_BATCH, 'one dimension more', [
        ('decoder.check_memory', 'x'),
    ]),
}

ACCEPTED.update(_each(REPEATED, "its first item twice", [  # (0, 0): the first dimension or position alone
    ("browser.page.live_explorer_html", "dims"),
    ("browser.page.live_explorer_html", "positions"),
    ("figures.positions.check_positional_settings", "dims"),
    ("figures.positions.check_positional_settings", "positions"),
]))
ACCEPTED.update(_each(NO_POSITION_TABLE, "an nn.Linear", [
    ("decoding.default_max_len", "model"),
    ("decoding.max_decode_length", "model"),
]))

KNOWN_DEFECTS: dict[tuple[str, str, str], str] = {
    **_each("a float16 input is promoted to the model's float32 (torch.cat), not refused", 'float16 dtype', [
        ('class_token.ClassTokenClassifier.encode', 'x'),
        ('class_token.ClassTokenClassifier.forward', 'x'),
        ('class_token.accuracy', 'inputs'),
        ('class_token.fit_classifier', 'inputs'),
    ]),
    **_each('a model that is no translation model is not refused', 'an nn.Linear', [
        ('vocabularies.vocabularies_for', 'model'),
    ]),
    **_each('a step before the first is not refused', '-1', [
        ('browser.model_explorer.ModelExplorer.go', 'step'),
    ]),
    **_each("a vocabulary of another size than the model's is not refused", 'a one-word Vocab', [
        ('browser.model.browser_model_files', 'src_vocab'),
        ('browser.model.browser_model_files', 'tgt_vocab'),
        ('browser.model_explorer.ModelExplorer', 'src_vocab'),
        ('browser.model_explorer.ModelExplorer', 'tgt_vocab'),
        ('browser.page.translation_payload', 'tgt_vocab'),
        ('masked_lm.fill_masked', 'vocab'),
        ('masked_lm.lm_fill', 'vocab'),
        ('vocabularies.vocabularies_for', 'src_vocab'),
        ('vocabularies.vocabularies_for', 'tgt_vocab'),
    ]),
    **_each('an empty list of caches is not refused', 'empty', [
        ('models.DecoderOnlyCache', 'caches'),
    ]),
    **_each('an empty prefix is not refused', 'empty', [
        ('markov.skip_vote_choice', 'prefix'),
    ]),
    **_each('an empty source is not refused', 'empty', [
        ('models.Transformer.src_mask', 'src_ids'),
    ]),
    **_each('labels outside 0..9 are not refused', 'ids + 10000', [
        ('vision.digit_sets', 'labels'),
    ]),
    **_each('labels outside 0..9 are not refused', 'ids - 10000', [
        ('vision.digit_sets', 'labels'),
    ]),
    **_each("labels' keys and values are not checked", "{'key': an unknown object}", [
        ('figures.ledger.ledger_effects_figure', 'labels'),
    ]),
    **_each("labels' keys and values are not checked", '{3: None}', [
        ('figures.ledger.ledger_effects_figure', 'labels'),
    ]),
    **_each('src_ids is not checked (dtype, range, emptiness)', 'bool dtype', [
        ('decoding.check_decoding_args', 'src_ids'),
    ]),
    **_each('src_ids is not checked (dtype, range, emptiness)', 'empty', [
        ('decoding.check_decoding_args', 'src_ids'),
    ]),
    **_each('src_ids is not checked (dtype, range, emptiness)', 'float dtype', [
        ('decoding.check_decoding_args', 'src_ids'),
    ]),
    **_each('src_ids is not checked (dtype, range, emptiness)', 'float16 dtype', [
        ('decoding.check_decoding_args', 'src_ids'),
    ]),
    **_each('src_ids is not checked (dtype, range, emptiness)', 'ids + 10000', [
        ('decoding.check_decoding_args', 'src_ids'),
    ]),
    **_each('src_ids is not checked (dtype, range, emptiness)', 'ids - 10000', [
        ('decoding.check_decoding_args', 'src_ids'),
    ]),
    **_each('src_ids is not checked (dtype, range, emptiness)', 'uint8 dtype', [
        ('decoding.check_decoding_args', 'src_ids'),
    ]),
    **_each('weights of another shape than the patches are not refused', 'one dimension more', [
        ('figures.vision.patch_attention_figure', 'weights'),
    ]),
}

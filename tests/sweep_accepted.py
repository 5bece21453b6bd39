"""The bad values the library deliberately accepts, for the bad-input sweep (tests/test_bad_input_sweep.py):
(callable, argument, the bad value's label in ``bad_input_sweep.bad_values``) -> why the value is accepted.

A case listed in ACCEPTED must succeed (a refusal makes the entry stale, and the sweep says so); a case not
listed must be refused with a TypeError or ValueError naming its argument. Each reason says why the value is
a valid input there, not a wrong one."""

from __future__ import annotations


def _each(reasons: dict[str, str], cases: list[tuple[str, str]]) -> dict[tuple[str, str, str], str]:
    """Each case (callable, argument) with each bad value's label -> the reason it is accepted."""
    return {(name, argument, label): reason for name, argument in cases for label, reason in reasons.items()}


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
TABLE_IN_X_DTYPE = ("adds or rotates by a fixed table cast to x's dtype (.to(x.dtype)): no learned weight to "
                    "disagree with")
RESHAPE = 'a reshape: it moves values of any dtype'
INK_ANY_FLOAT = "a digit's ink in [0, 1] is read as its values, in the model's own dtype (the page's: rounded)"
NO_INTERVENTION = ('no head switched off, no block patched: the plain forward pass, which the interventions '
                   'reproduce bit for bit (tests/test_interventions.py)')
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
STEP_BACK = ("-1 is the previous block (the explorer's 'previous' button calls go(-1)); at the first block it "
             'stays there, as its docstring says ("kept inside it"), and the button is disabled there')
NO_POSITION_TABLE = "a module without a positional table has no length limit, as the RNN has none"
ANY_MODULE = 'takes any torch module: counts, captures, trains or strips what it has'
ONE_TEXT = 'text is a str or a list of str (its type hint): one str is one text'
SEARCHED_ONLY = ('training is only searched (sentence in training): an item that is no str can never match, so it '
                 'changes nothing; checking the 15,000 items on every call would cost more than the search')

ACCEPTED: dict[tuple[str, str, str], str] = {
    ('seeding.seed_range', 'values', 'its first item twice'): ('two seeds may give the same result: each value '
                                                              'is one seed\'s'),
    ('optimiser.PaperAdam', 'betas', 'its first item twice'): ('beta_1 = beta_2 is a valid Adam: each is a '
                                                              'decay rate in [0, 1) of its own average'),
    ('vocabulary.SpecialIds.replace', 'eos', '3'): ('any id is a special id of some vocabulary: the decoding call '
                                                    "that uses it checks it against its model's vocabulary"),
    **_each({'None': ANY_JSON, '[]': ANY_JSON, 'a string': ANY_JSON, '{3: None}': ANY_JSON}, [
        ('html_embed.json_for_script', 'value'),
    ]),
    **_each({'an nn.Linear': ANY_MODULE}, [
        ('capture.keep_attention_weights', 'model'),
        ('optimiser.contiguous_parameters', 'model'),
        ('class_token.adam_steps', 'model'),
        ('models.count_parameters', 'model'),
        ('residual.without_residuals', 'model'),
    ]),
    **_each({'a one-word Vocab': ANY_VOCAB}, [
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
    **_each({'-1': STEP_BACK}, [
        ('browser.model_explorer.ModelExplorer.go', 'step'),
    ]),
    **_each({'-1': BEFORE_START, '-1000000': BEFORE_START}, [
        ('pretrained.snapshots.excess_change', 'settled_from'),
    ]),
    **_each({'a NaN': BLOCK, 'an infinity': BLOCK}, [
        ('decoding.next_token_logits', 'hidden'),
        ('models.EncoderOnlyTransformer.pool', 'hidden'),
        ('models.FirstTokenPooler.forward', 'hidden'),
        ('multi_head_attention.KVCache.update', 'k'),
        ('multi_head_attention.KVCache.update', 'v'),
        ('multi_head_attention.MultiHeadAttention.check_inputs', 'key'),
        ('multi_head_attention.MultiHeadAttention.check_inputs', 'query'),
        ('multi_head_attention.MultiHeadAttention.check_inputs', 'value'),
        ('positional_encoding.LearnedPositionalEmbedding.forward', 'x'),
        ('residual.layer_norm', 'beta'),
        ('residual.layer_norm', 'gamma'),
        ('rnn.LSTM.forward', 'x'),
        ('rnn.Seq2SeqGRU.decode', 'memory'),
        ('rnn.VanillaRNN.forward', 'h'),
        ('rnn.VanillaRNN.forward', 'x'),
        ('rnn.gradient_norms_through_time', 'x'),
    ]),
    **_each({
        'a NaN': BLOCK,
        'an infinity': BLOCK,
        'bool dtype': RESHAPE,
        'float16 dtype': PURE_DTYPE,
        'float64 dtype': PURE_DTYPE,
        'int64 dtype': RESHAPE,
    }, [
        ('multi_head_attention.MultiHeadAttention.merge_heads', 'x'),
    ]),
    **_each({'a NaN': BLOCK, 'an infinity': BLOCK, 'float16 dtype': PURE_DTYPE, 'float64 dtype': PURE_DTYPE}, [
        ('multi_head_attention.MultiHeadAttention.split_heads', 'x'),
    ]),
    **_each({
        'a NaN': BLOCK,
        'an infinity': BLOCK,
        'float16 dtype': PURE_DTYPE,
        'float64 dtype': PURE_DTYPE,
        'one dimension fewer': LEADING_DIMS,
        'one dimension more': LEADING_DIMS,
    }, [
        ('attention.masked_softmax', 'scores'),
    ]),
    **_each({
        'a NaN': BLOCK,
        'an infinity': BLOCK,
        'float16 dtype': TABLE_IN_X_DTYPE,
        'float64 dtype': TABLE_IN_X_DTYPE,
    }, [
        ('multi_head_attention.MultiHeadAttention.rotate', 'x'),
        ('positional_encoding.RotaryEmbedding.forward', 'x'),
        ('positional_encoding.SinusoidalPositionalEncoding.forward', 'x'),
    ]),
    **_each({
        'a NaN': BLOCK,
        'an infinity': BLOCK,
        'one dimension fewer': LEADING_DIMS,
        'one dimension more': LEADING_DIMS,
    }, [
        ('attention.attention_weights', 'key'),
        ('attention.attention_weights', 'query'),
        ('feed_forward.PositionwiseFeedForward.forward', 'x'),
        ('residual.LayerNorm.forward', 'x'),
        ('residual.NoResidual.forward', 'x'),
        ('residual.Residual.forward', 'x'),
        ('residual.layer_norm', 'x'),
    ]),
    **_each({'empty': EMPTY}, [
        ('vocabulary.Vocab', 'tokens'),
    ]),
    **_each({'empty': EMPTY, 'ids + 10000': PAD_COMPARE, 'ids - 10000': PAD_COMPARE}, [
        ('attention.padding_mask', 'ids'),
    ]),
    **_each({'empty': EMPTY, 'its first item twice': REPEATED}, [
        ('browser.page.page_scripts', 'kinds'),  # a page without explorers; a page with two of one kind
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
        ('figures.ledger.verdict_figure', 'apart'),
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
        ('vocabulary.Vocab.build', 'sentences'),
        ('vocabulary.Vocab.decode', 'ids'),
    ]),
    **_each({'empty': EMPTY_INDEX}, [
        ('decoder.DecoderLayerCache.index_select', 'index'),
        ('models.DecoderOnlyCache.index_select', 'index'),
        ('multi_head_attention.KVCache.index_select', 'index'),
        ('multi_head_attention.LayerCaches.index_select', 'index'),
        ('rnn.GRUDecoderState.index_select', 'index'),
    ]),
    **_each({
        '-1000000.0': FORMATS_ANY,
        '-1e-06': FORMATS_ANY,
        '-inf': FORMATS_ANY,
        'NaN': FORMATS_ANY,
        'True': FORMATS_ANY,
        'inf': FORMATS_ANY,
    }, [
        ('prose.Shown', 'value'),
        ('prose.shown', 'value'),
    ]),
    **_each({
        'None': GRU_NO_ATTENTION,
        'a list': GRU_NO_ATTENTION,
        'bool dtype': GRU_NO_ATTENTION,
        'empty': GRU_NO_ATTENTION,
        'float dtype': GRU_NO_ATTENTION,
        'float16 dtype': GRU_NO_ATTENTION,
        'ids + 10000': GRU_NO_ATTENTION,
        'ids - 10000': GRU_NO_ATTENTION,
        'one dimension fewer': GRU_NO_ATTENTION,
        'one dimension more': GRU_NO_ATTENTION,
        'uint8 dtype': GRU_NO_ATTENTION,
    }, [
        ('rnn.Seq2SeqGRU.decode', 'src_ids'),
    ]),
    **_each({
        'None': IGNORES_SRC,
        'a list': IGNORES_SRC,
        'bool dtype': IGNORES_SRC,
        'empty': IGNORES_SRC,
        'float dtype': IGNORES_SRC,
        'float16 dtype': IGNORES_SRC,
        'ids + 10000': IGNORES_SRC,
        'ids - 10000': IGNORES_SRC,
        'one dimension fewer': IGNORES_SRC,
        'one dimension more': IGNORES_SRC,
        'uint8 dtype': IGNORES_SRC,
    }, [
        ('language_model.ReadsTargetOnly.forward', 'src'),
    ]),
    **_each({'3': INDEX_INT}, [
        ('training_step.check_batch', 'index'),
    ]),
    **_each({'inf': INF_OFF}, [
        ('training_step.TrainingOptions.replace', 'clip_norm'),
        ('training_step.TrainingOptions.replace', 'time_budget_s'),
    ]),
    **_each({'10,000 characters': LONG_TEXT}, [
        ('browser.live.message', 'text'),
        ('browser.live.sentence_case', 'text'),
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
        ('figures.vision.learning_curve_figure', 'title'),
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
        ('vocabularies.Vocabularies.encode_with_unknowns', 'sentence'),
        ('vocabularies.Vocabularies.to_tokens', 'sentence'),
        ('vocabulary.Vocab.encode', 'sentence'),
        ('vocabulary.Vocab.encode_with_unknowns', 'sentence'),
    ]),
    **_each({'one dimension fewer': MASK_BROADCAST, 'one dimension more': MASK_BROADCAST}, [
        ('attention.masked_softmax', 'mask'),
    ]),
    **_each({'one dimension more': MASK_BROADCAST}, [
        ('attention.scaled_dot_product_attention', 'mask'),
        ('decoder.DecoderLayer.check_inputs', 'tgt_mask'),
        ('decoder.DecoderLayer.forward', 'tgt_mask'),
        ('encoder.EncoderLayer.forward', 'mask'),
        ('relative_position.RelativePositions.forward', 'mask'),
    ]),
    **_each({'None': NONE_OFF}, [
        ('sampling.check_sampling_args', 'generator'),
        ('sampling.check_sampling_args', 'top_k'),
        ('sampling.check_sampling_args', 'top_p'),
    ]),
    **_each({'float16 dtype': INK_ANY_FLOAT, 'float64 dtype': INK_ANY_FLOAT}, [
        ('browser.vit_explorer.digit_state', 'image'),
        ('browser.vit_explorer.read_digit', 'image'),
    ]),
    **_each({'an nn.Linear': NO_POSITION_TABLE}, [
        ('decoding.default_max_len', 'model'),
        ('decoding.max_decode_length', 'model'),
    ]),
    **_each({
        'bool dtype': NUMBERS_ANY_DTYPE,
        'float dtype': NUMBERS_ANY_DTYPE,
        'float16 dtype': NUMBERS_ANY_DTYPE,
        'uint8 dtype': NUMBERS_ANY_DTYPE,
    }, [
        ('agreement.linear_probe', 'train_y'),
        ('vision.digit_sets', 'labels'),
    ]),
    **_each({
        'bool dtype': NUMBERS_ANY_DTYPE,
        'float16 dtype': NUMBERS_ANY_DTYPE,
        'float64 dtype': NUMBERS_ANY_DTYPE,
        'int64 dtype': NUMBERS_ANY_DTYPE,
    }, [
        ('agreement.linear_probe', 'test_x'),
        ('agreement.linear_probe', 'train_x'),
        ('figures.vision.patch_attention_figure', 'image'),
        ('figures.vision.patch_attention_figure', 'weights'),
        ('vision.digit_sets', 'images'),
        ('vision.image_patches', 'images'),
    ]),
    **_each({
        'float dtype': NUMBERS_ANY_DTYPE,
        'float16 dtype': NUMBERS_ANY_DTYPE,
        'int64 dtype': NUMBERS_ANY_DTYPE,
        'uint8 dtype': NUMBERS_ANY_DTYPE,
    }, [
        ('figures.attention.mask_figure', 'mask'),
    ]),
    **_each({'a string': ONE_TEXT, 'its first item twice': REPEATED}, [
        ('tokenization.BPETokenizer.learn', 'text'),
        ('tokenization.learn_bpe', 'text'),
    ]),
    **_each({'ids + 10000': PAD_COMPARE, 'ids - 10000': PAD_COMPARE}, [
        ('models.Transformer.decode', 'src_ids'),
        ('models.Transformer.src_mask', 'src_ids'),
        ('models.Transformer.tgt_mask', 'tgt_ids'),
    ]),
    **_each({'float16 dtype': PURE_DTYPE, 'float64 dtype': PURE_DTYPE}, [
        ('analysis.analogy', 'vectors'),
        ('analysis.analogy_ranks', 'vectors'),
        ('analysis.nearest_words', 'vectors'),
        ('loss.label_smoothed_cross_entropy', 'logits'),
        ('sampling.draw_next', 'logits'),
    ]),
    **_each({
        'float16 dtype': PURE_DTYPE,
        'float64 dtype': PURE_DTYPE,
        'one dimension fewer': LEADING_DIMS,
        'one dimension more': LEADING_DIMS,
    }, [
        ('sampling.filter_logits', 'logits'),
        ('sampling.next_token_probs', 'logits'),
        ('sampling.tempered_logits', 'logits'),
    ]),
    **_each({'its first item twice': REPEATED}, [
        ('verdict.t_interval', 'differences'),  # two seeds may differ from the base by the same amount
        ('verdict.verdict', 'differences'),
        ('analysis.encoder_unit_activations_by_layer', 'sentences'),
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
        ('browser.page.live_explorer_html', 'dims'),
        ('browser.page.live_explorer_html', 'positions'),
        ('corpus.split_by_length', 'pairs'),
        ('error_attention.own_word_weights', 'pairs'),
        ('error_attention.wrong_word_rows', 'errors'),
        ('evaluation.accuracy_by_length', 'hypotheses'),
        ('evaluation.accuracy_by_length', 'references'),
        ('evaluation.accuracy_by_length', 'sources'),
        ('evaluation.evaluate_translation', 'pairs'),
        ('evaluation.greedy_exact_check', 'pairs'),
        ('evaluation.score_translations', 'hypotheses'),
        ('evaluation.score_translations', 'pairs'),
        ('figures.architecture.architecture_svg', 'blocks'),
        ('figures.architecture.text_alternative', 'blocks'),
        ('figures.attention.scaling_figure', 'd_ks'),
        ('figures.attention.weights_side_by_side_figure', 'queries'),
        ('figures.embeddings.embedding_scatter_figure', 'points'),
        ('figures.embeddings.embedding_scatter_figure', 'words'),
        ('figures.errors.wrong_word_rows_figure', 'rows'),
        ('figures.models.parameter_breakdown_figure', 'presets'),
        ('figures.positions.check_positional_settings', 'dims'),
        ('figures.positions.check_positional_settings', 'positions'),
        ('figures.positions.positional_encoding_figure', 'dims'),
        ('figures.positions.positional_encoding_figure', 'positions'),
        ('figures.positions.positional_encoding_menu_figure', 'd_models'),
        ('figures.positions.positional_encoding_menu_figure', 'positions'),
        ('figures.positions.positional_waves_menu_figure', 'positions'),
        ('figures.positions.positions_note', 'positions'),
        ('figures.positions.rope_scores', 'positions'),
        ('figures.positions.similarity_by_offset_figure', 'd_models'),
        ('figures.rnn.timing_figure', 'lengths'),
        ('figures.training.learning_rate_figure', 'warmups'),
        ('language_model.bigram_perplexity', 'test_sentences'),
        ('language_model.bigram_perplexity', 'train_sentences'),
        ('language_model.lm_batches', 'sentences'),
        ('language_model.next_token_entropy', 'sentences'),
        ('language_model.perplexity', 'sentences'),
        ('language_model.sample_shares', 'drawn'),
        ('markov.AgreementReader.encode', 'examples'),
        ('markov.HandSetAgreement.features', 'prefix'),
        ('markov.HandSetAgreement.forward', 'prefix'),
        ('markov.agreement_accuracy', 'choices'),
        ('markov.agreement_accuracy', 'examples'),
        ('markov.bigram_choice', 'forms'),
        ('markov.bigram_choice', 'prefix'),
        ('markov.labels', 'examples'),
        ('markov.skip_vote_choice', 'forms'),
        ('markov.skip_vote_choice', 'prefix'),
        ('masked_lm.encode_sentences', 'sentences'),
        ('models.DecoderOnlyCache', 'caches'),
        ('training.train', 'batches'),
    ]),
    **_each({
        '3': ROUNDS_ANY,
        'None': ROUNDS_ANY,
        '[NaN]': ROUNDS_ANY,
        '[None]': ROUNDS_ANY,
        '[an unknown object]': ROUNDS_ANY,
        'a string': ROUNDS_ANY,
        'an unknown object': ROUNDS_ANY,
        'empty': ROUNDS_ANY,
        'its first item twice': ROUNDS_ANY,
    }, [
        ('figures.display.rounded_numbers', 'value'),
    ]),
    **_each({
        '[NaN]': SEARCHED_ONLY,
        '[None]': SEARCHED_ONLY,
        '[an unknown object]': SEARCHED_ONLY,
        'empty': SEARCHED_ONLY,
        'its first item twice': SEARCHED_ONLY,
    }, [
        ('oracle.classify_sentence', 'training'),
    ]),
    **_each({'-1': SEED, '-1000000': SEED}, [
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
    **_each({'-1000000.0': SIGNED_KNOB, '-1e-06': SIGNED_KNOB}, [
        ('rnn.LSTM', 'forget_bias'),
        ('rnn.VanillaRNN', 'recurrent_scale'),
    ]),
    **_each({'-1': SIGNED_OFFSET, '-1000000': SIGNED_OFFSET}, [
        ('positional_encoding.relative_position_map', 'offset'),
    ]),
    **_each({'a one-word Vocab': SIZED_BY_VOCAB}, [
        ('markov.AgreementReader', 'vocab'),
    ]),
    **_each({'3': TEXT_BOX}, [
        ('browser.lm_explorer.read_lm_settings', 'seed'),
        ('browser.lm_explorer.read_lm_settings', 'top_k'),
    ]),
    **_each({'-1000000.0': THRESHOLD, '-1e-06': THRESHOLD, '-inf': THRESHOLD, 'inf': THRESHOLD}, [
        ('training.TrainingHistory.first_reaching', 'value'),
    ]),
    **_each({'empty': NO_INTERVENTION}, [
        ('interventions.intervene', 'ablate'), ('interventions.intervene', 'patches'),
        ('interventions.interventions', 'ablate'), ('interventions.interventions', 'patches'),
    ]),
    ('interventions.head_ablation_drops', 'pairs', 'its first item twice'): REPEATED,
    **_each({
        'a NaN': X_FOR_BATCH,
        'an infinity': X_FOR_BATCH,
        'bool dtype': X_FOR_BATCH,
        'empty': X_FOR_BATCH,
        'float16 dtype': X_FOR_BATCH,
        'float64 dtype': X_FOR_BATCH,
        'int64 dtype': X_FOR_BATCH,
        'one dimension more': X_FOR_BATCH,
    }, [
        ('decoder.check_memory', 'x'),
    ]),
}

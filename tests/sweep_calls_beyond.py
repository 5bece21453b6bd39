"""Valid calls for the bad-input sweep (tests/test_bad_input_sweep.py), for the beyond modules: "module.name" ->
a function returning (the callable, a dict of valid keyword arguments); EXEMPT: "module.name" -> why it is not
swept (where else its arguments are tested).

Chapter 9's modules (markov, class_token, vision, masked_lm, figures.vision, seed_batch, seeding), on tiny
models: d_model 8, one layer, one or two training steps."""

from __future__ import annotations

import torch

from transformer_lib import class_token, markov, masked_lm, models, seed_batch, seeding, vision
from transformer_lib.browser import vit_explorer
from transformer_lib.config import TransformerConfig
from transformer_lib.figures import vision as vision_figures
from transformer_lib.tokenization import Vocab

FRENCH = ["son beau canard dans les villes froides est vieux", "les chats sont noirs"]
EXAMPLES = markov.agreement_examples(FRENCH)
FRENCH_VOCAB = Vocab(sorted({w for s in FRENCH for w in s.split()}))
BIGRAMS = markov.bigram_table(FRENCH)
SKIP_BIGRAMS = markov.skip_bigram_table(FRENCH)
PREFIX = list(EXAMPLES[0].prefix)
FORMS = list(EXAMPLES[0].forms)

ENGLISH = ["the cat sat on the mat", "a dog ran"]
VOCAB = Vocab(["the", "cat", "sat", "on", "a", "mat", "dog", "ran"])  # 12 tokens with the four specials
CONFIG = TransformerConfig(src_vocab_size=13, tgt_vocab_size=13, d_model=8, n_heads=2, n_encoder_layers=1,
                           n_decoder_layers=1, d_ff=16, dropout=0.0, max_len=16)  # 13: VOCAB and <mask>
torch.manual_seed(0)
MASKED_LM = models.EncoderOnlyTransformer(CONFIG).eval()
LM = models.DecoderOnlyTransformer(CONFIG.replace(src_vocab_size=12, tgt_vocab_size=12)).eval()
IDS = masked_lm.encode_sentences(ENGLISH, VOCAB)  # (2, 6)

VECTORS = torch.randn(2, 3, 8)  # (B, T, d_model)
REAL = torch.tensor([[True, True, True], [True, True, False]])
CLASSIFIER = class_token.ClassTokenClassifier(CONFIG, 3).eval()
CLASS_LABELS = torch.tensor([0, 2])

IMAGES = torch.rand(2, 4, 4)  # (B, H, W) in [0, 1]
VIT = vision.VisionTransformer(CONFIG, 3, patch=2).eval()
SETS = torch.rand(2, 3, 16)  # (B, k, element_size)
SET_MODEL = vision.SetClassifier(CONFIG, 3, element_size=16).eval()
CNN = vision.DigitCNN(channels=2, n_classes=3).eval()
# chapter 9's digits explorer: a small Vision Transformer on the 8 x 8 digits (learned positions, as the chapter's)
DIGITS = vision.load_digit_images()
DIGIT_VIT = vision.VisionTransformer(CONFIG.replace(max_len=16), 10, patch=2).eval()
DIGIT_LINEAR = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 10)).eval()
ATTENTION = torch.softmax(torch.randn(4), dim=0)  # over (4/2) * (4/2) patches


def _reader() -> markov.AgreementReader:
    torch.manual_seed(0)
    return markov.AgreementReader(FRENCH_VOCAB, CONFIG).eval()


def _batch_loss(model: torch.nn.Module):
    return lambda: model(VECTORS).logsumexp(-1).mean()


def _draw(generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    pick = torch.randint(2, (2,), generator=generator)
    return VECTORS[pick], CLASS_LABELS[pick]


def _class_loss(model, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(model(x), y)


def _fresh_classifier() -> class_token.ClassTokenClassifier:
    torch.manual_seed(0)
    return class_token.ClassTokenClassifier(CONFIG, 3)


CALLS: dict = {
    "markov.agreement_examples": lambda: (markov.agreement_examples, dict(sentences=list(FRENCH))),
    "markov.correct": lambda: (markov.correct, dict(example=EXAMPLES[0], choice=2)),
    "markov.bigram_table": lambda: (markov.bigram_table, dict(sentences=list(FRENCH))),
    "markov.skip_bigram_table": lambda: (markov.skip_bigram_table, dict(sentences=list(FRENCH))),
    "markov.bigram_choice": lambda: (markov.bigram_choice, dict(table=BIGRAMS.copy(), prefix=list(PREFIX),
                                                                forms=list(FORMS))),
    "markov.row_totals": lambda: (markov.row_totals, dict(table=SKIP_BIGRAMS.copy())),
    "markov.skip_vote_choice": lambda: (markov.skip_vote_choice, dict(table=SKIP_BIGRAMS.copy(),
                                                                      prefix=list(PREFIX), forms=list(FORMS))),
    "markov.HandSetAgreement": lambda: (markov.HandSetAgreement, dict(sharpness=40.0, max_len=16)),
    "markov.HandSetAgreement.features": lambda: (markov.HandSetAgreement().features, dict(prefix=list(PREFIX))),
    "markov.HandSetAgreement.forward": lambda: (markov.HandSetAgreement(), dict(prefix=list(PREFIX))),
    "markov.AgreementReader": lambda: (markov.AgreementReader, dict(vocab=FRENCH_VOCAB, config=CONFIG)),
    "markov.AgreementReader.forward": lambda: (_reader(), dict(ids=_reader().encode(EXAMPLES))),
    "markov.AgreementReader.encode": lambda: (_reader().encode, dict(examples=list(EXAMPLES))),
    "markov.labels": lambda: (markov.labels, dict(examples=list(EXAMPLES))),
    "markov.agreement_accuracy": lambda: (markov.agreement_accuracy, dict(examples=list(EXAMPLES),
                                                                          choices=[0, 2])),
    "class_token.ClassTokenClassifier": lambda: (class_token.ClassTokenClassifier, dict(
        config=CONFIG, n_classes=3, positions=True)),
    "class_token.ClassTokenClassifier.encode": lambda: (CLASSIFIER.encode, dict(x=VECTORS.clone(),
                                                                                real=REAL.clone())),
    "class_token.ClassTokenClassifier.forward": lambda: (CLASSIFIER, dict(x=VECTORS.clone(), real=REAL.clone())),
    "class_token.fit_classifier": lambda: (class_token.fit_classifier, dict(
        model=_fresh_classifier(), inputs=VECTORS.clone(), labels=CLASS_LABELS.clone(), steps=1, batch_size=2,
        lr=1e-3, seed=0)),
    "class_token.adam_steps": lambda: (class_token.adam_steps, dict(
        model=(model := _fresh_classifier()), batch_loss=_batch_loss(model), steps=1, lr=1e-3)),
    "class_token.accuracy": lambda: (class_token.accuracy, dict(model=CLASSIFIER, inputs=VECTORS.clone(),
                                                                labels=CLASS_LABELS.clone())),
    "vision.load_digit_images": lambda: (vision.load_digit_images, dict(n_test=497, seed=0)),
    "vision.image_patches": lambda: (vision.image_patches, dict(images=IMAGES.clone(), patch=2)),
    "vision.VisionTransformer": lambda: (vision.VisionTransformer, dict(config=CONFIG, n_classes=3, patch=2)),
    "vision.VisionTransformer.tokens": lambda: (VIT.tokens, dict(images=IMAGES.clone())),
    "vision.VisionTransformer.forward": lambda: (VIT, dict(images=IMAGES.clone())),
    "vision.digit_sets": lambda: (vision.digit_sets, dict(images=IMAGES.clone(), labels=CLASS_LABELS.clone(),
                                                          n_sets=3, set_size=2, seed=0)),
    "vision.SetClassifier": lambda: (vision.SetClassifier, dict(config=CONFIG, n_classes=3, element_size=16)),
    "vision.SetClassifier.forward": lambda: (SET_MODEL, dict(sets=SETS.clone())),
    "masked_lm.mask_id": lambda: (masked_lm.mask_id, dict(vocab=VOCAB)),
    "masked_lm.encode_sentences": lambda: (masked_lm.encode_sentences, dict(sentences=list(ENGLISH), vocab=VOCAB)),
    "masked_lm.mask_tokens": lambda: (masked_lm.mask_tokens, dict(
        ids=IDS.clone(), vocab=VOCAB, rate=0.15, generator=torch.Generator().manual_seed(0))),
    "masked_lm.train_masked_lm": lambda: (masked_lm.train_masked_lm, dict(
        model=models.EncoderOnlyTransformer(CONFIG), ids=IDS.clone(), vocab=VOCAB, steps=1, batch_size=2,
        lr=1e-3, rate=0.15, seed=0)),
    "masked_lm.fill_masked": lambda: (masked_lm.fill_masked, dict(model=MASKED_LM, vocab=VOCAB,
                                                                  sentence=ENGLISH[0], position=1)),
    "masked_lm.lm_fill": lambda: (masked_lm.lm_fill, dict(model=LM, vocab=VOCAB, sentence=ENGLISH[0], position=1)),
    "vision.DigitCNN": lambda: (vision.DigitCNN, dict(channels=2, n_classes=3)),
    "vision.DigitCNN.forward": lambda: (CNN, dict(images=torch.rand(2, 8, 8))),
    "masked_lm.fill_failure": lambda: (masked_lm.fill_failure, dict(sentence="le chat dort", filled="le chat ne",
                                                                    position=2)),
    "seeding.book_seed": lambda: (seeding.book_seed, {}),
    "seeding.book_seeds": lambda: (seeding.book_seeds, dict(n=2)),
    "seeding.seed_range": lambda: (seeding.seed_range, dict(values=[0.9, 0.95], spec=".0%")),
    "seed_batch.fit_seeds": lambda: (seed_batch.fit_seeds, dict(
        build=lambda: class_token.ClassTokenClassifier(CONFIG, 3), seeds=[0, 1], draw=_draw, loss=_class_loss,
        steps=1, lr=1e-3)),
    "seed_batch.fit_classifier_seeds": lambda: (seed_batch.fit_classifier_seeds, dict(
        build=lambda: class_token.ClassTokenClassifier(CONFIG, 3), seeds=[0, 1], inputs=VECTORS.clone(),
        labels=CLASS_LABELS.clone(), steps=1, batch_size=2, lr=1e-3)),
    "figures.vision.patch_attention_figure": lambda: (vision_figures.patch_attention_figure, dict(
        image=IMAGES[0].clone(), weights=ATTENTION.clone(), patch=2, title="a digit")),
    "figures.vision.learning_curve_figure": lambda: (vision_figures.learning_curve_figure, dict(
        curve={"a model": {100: [0.5, 0.6]}, "another": {100: [0.7, 0.8], 400: [0.9, 0.95]}}, title="a curve")),
    "browser.vit_explorer.next_level": lambda: (vit_explorer.next_level, dict(value=0.5)),
    "browser.vit_explorer.read_digit": lambda: (vit_explorer.read_digit, dict(
        vit=DIGIT_VIT, linear=DIGIT_LINEAR, image=DIGITS.test_images[0].clone())),
    "browser.vit_explorer.digit_state": lambda: (vit_explorer.digit_state, dict(
        vit=DIGIT_VIT, linear=DIGIT_LINEAR, digits=DIGITS, image=DIGITS.test_images[1].clone())),
    "browser.vit_explorer.digit_menu": lambda: (vit_explorer.digit_menu, dict(digits=DIGITS)),
    # the widget: its arguments are checked; what the reader does after becomes a message in it
    "browser.vit_explorer.DigitExplorer": lambda: (vit_explorer.DigitExplorer, dict(
        vit=DIGIT_VIT, linear=DIGIT_LINEAR, digits=DIGITS)),
    "browser.vit_explorer.DigitExplorer.press": lambda: (vit_explorer.DigitExplorer(
        DIGIT_VIT, DIGIT_LINEAR, DIGITS).press, dict(n=3)),
}
EXEMPT: dict[str, str] = {
    # as validation's checks: they report the name they are given; swept through every caller above
    "browser.vit_explorer.check_image": "a check that reports the name it is given; swept through read_digit",
    "browser.vit_explorer.check_linear": "a check that reports the name it is given; swept through read_digit",
}

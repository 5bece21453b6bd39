"""Write the two small random models the book converts (chapter 6: BERT, chapter 8: GPT-2), with what
Hugging Face's own classes compute from them, into transformer_lib/pretrained/hub_references/.

    python tools/hub_references.py

``transformers`` builds each model from its config (no download), with random weights from a fixed
seed, in float64; its outputs on a fixed input are stored beside the weights. The chapters then load
the weights with ``convert.from_gpt2`` / ``from_bert`` and compare their own outputs with the stored
ones without importing ``transformers`` (it would cost a chapter about 150 MB). tests/test_convert.py
rebuilds both here and checks that the stored files are what this script writes today.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transformer_lib.pretrained.hub_references import DIRECTORY  # noqa: E402
from transformer_lib.pretrained.recipe import book_corpus, book_vocabularies  # noqa: E402

SEED = 0


def random_weights(model: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Every matrix drawn with std 1/sqrt(its smaller side), every vector (LayerNorm gains, biases) moved
    off its initial 1 or 0: each weight then changes the output, so a conversion mistake shows.

    transformers' own std of 0.02 makes every attention map nearly uniform, blind to a swapped W_Q; a
    larger fixed std would grow the activations, and float32's rounding with them, beyond a trained
    model's. 1/sqrt(fan-in) keeps them near unit scale, with attention scores of about unit size."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            noise = torch.randn(parameter.shape, generator=generator, dtype=torch.float64).to(parameter.dtype)
            if parameter.dim() == 1:
                parameter.add_(0.1 * noise)
            else:
                parameter.copy_(noise / min(parameter.shape) ** 0.5)
    return model.eval()


def gpt2_reference() -> tuple[dict, dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """A 2-layer GPT-2 over 48 tokens: (config, state dict, its outputs on a padded batch of two)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = dict(vocab_size=48, n_positions=16, n_embd=16, n_layer=2, n_head=2, eos_token_id=47, bos_token_id=47)
    model = random_weights(GPT2LMHeadModel(GPT2Config(**config, attn_implementation="eager")).double(), SEED)
    ids = torch.randint(0, 47, (2, 10), generator=torch.Generator().manual_seed(SEED))
    ids[1, 7:] = 47  # the second row ends in padding (<|endoftext|>, GPT-2's usual filler)...
    attention_mask = (ids != 47).long()  # ...which the attention mask marks: GPT-2 masks no id
    with torch.no_grad():
        out = model(ids, attention_mask=attention_mask, output_hidden_states=True, output_attentions=True)
    outputs = {"ids": ids, "attention_mask": attention_mask, "logits": out.logits,
               "hidden_states": torch.stack(out.hidden_states), "attentions": torch.stack(out.attentions)}
    # tied to wte, so left out, as in GPT-2's own files
    state_dict = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}
    return config, state_dict, outputs


def bert_reference() -> tuple[dict, dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """A 2-layer BERT over the book's English vocabulary: (config, state dict, its outputs on a sentence).

    A ``BertForPreTraining``, as the hub's BERT checkpoints are: ``bert.`` (the ``BertModel``, pooler
    included; its weights drawn first, so they are what a ``BertModel`` of the same seed gets) and ``cls.``
    (the masked-LM head, and the next-sentence head). The decoder's weight and bias, tied to the token
    embedding and to ``cls.predictions.bias``, are left out, as in the hub's files."""
    from transformers import BertConfig, BertForPreTraining

    corpus = book_corpus()
    vocab, _ = book_vocabularies(corpus)
    config = dict(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=32, max_position_embeddings=32, pad_token_id=vocab.pad_id)
    model = random_weights(BertForPreTraining(BertConfig(**config, attn_implementation="eager")).double(), SEED)
    sentence = corpus.test[0][0]
    ids = torch.tensor([[vocab.sos_id, *vocab.encode(sentence), vocab.eos_id]])  # <sos>, <eos>: BERT's [CLS], [SEP]
    with torch.no_grad():
        out = model.bert(ids, output_hidden_states=True, output_attentions=True)
        mlm_logits = model(ids).prediction_logits  # BertForMaskedLM's logits: the same head
    outputs = {"ids": ids, "last_hidden_state": out.last_hidden_state, "pooler_output": out.pooler_output,
               "attentions": torch.stack(out.attentions), "mlm_logits": mlm_logits}
    tied = ("cls.predictions.decoder.weight", "cls.predictions.decoder.bias")
    return config, {k: v for k, v in model.state_dict().items() if k not in tied}, outputs


REFERENCES = {"tiny_gpt2": gpt2_reference, "tiny_bert": bert_reference}


def main() -> None:
    DIRECTORY.mkdir(parents=True, exist_ok=True)
    for name, make in REFERENCES.items():
        config, state_dict, outputs = make()
        (DIRECTORY / f"{name}.json").write_text(json.dumps(config, indent=1, sort_keys=True) + "\n")
        save_file({k: v.contiguous() for k, v in state_dict.items()}, DIRECTORY / f"{name}.safetensors")
        save_file({k: v.contiguous() for k, v in outputs.items()}, DIRECTORY / f"{name}_outputs.safetensors")
        for path in DIRECTORY.glob(f"{name}*"):
            path.chmod(0o644)  # package data: readable by all
        print(f"wrote {name}: {sum(v.numel() for v in state_dict.values())} weights")


if __name__ == "__main__":
    main()

"""Training step: transformer_lib.models.Transformer against torch.nn.Transformer, and against the machine.

Both models get the same configuration, the same batch and the same optimiser, and a
training step is the whole of it: forward, cross-entropy loss, backward, Adam step. The
two are timed alternately in one run (see ``harness.alternate``), and with them a large
matrix product, whose rate is the machine's practical peak: the fraction of it that the
training step reaches is its model FLOPs utilisation (MFU).

Run alone: ``python benchmarks/bench_training.py [--device cuda] [--quick]``.

``--record`` times the CPU twice, with every core by the wall clock and on one thread by the
process's CPU time, and stores the ratios in book/data/training_speed.json under the CPU
dispatch of this run (the vector instructions PyTorch's kernels use), keeping the other
dispatches' runs. The performance appendix reads it. Run it once as it is and once with
``ATEN_CPU_CAPABILITY=avx2`` (on an AVX-512 processor, the kernels of an AVX2-only one).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import warnings
from pathlib import Path
from statistics import median

import harness
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils.flop_counter import FlopCounterMode

from transformer_lib.config import TransformerConfig
from transformer_lib.models import Transformer, count_parameters
from transformer_lib.positional_encoding import sinusoidal_table
from transformer_lib.torch_reference import copy_transformer

# PyTorch's nn.Transformer warns about its inference fast path (nested tensors).
warnings.filterwarnings("ignore", message="enable_nested_tensor is True")
warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors is in prototype stage")


class TorchTransformer(nn.Module):
    """torch.nn.Transformer with the same embeddings, positions, dropout and output layer as ours.

    To compute exactly what our model computes: the attention-weight dropout is set to
    ``config.attention_dropout`` (nn.Transformer would use ``dropout``), the dropout inside
    the feed-forward network is removed (the paper has none there), and a post-norm stack
    loses the final LayerNorm that nn.Transformer always appends (the paper has none).
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.config = config
        self.src_embed = nn.Embedding(config.src_vocab_size, config.d_model)
        self.tgt_embed = nn.Embedding(config.tgt_vocab_size, config.d_model)
        self.register_buffer("table", sinusoidal_table(config.max_len, config.d_model), persistent=False)
        self.dropout = nn.Dropout(config.dropout)
        self.transformer = nn.Transformer(
            d_model=config.d_model, nhead=config.n_heads, num_encoder_layers=config.n_encoder_layers,
            num_decoder_layers=config.n_decoder_layers, dim_feedforward=config.d_ff, dropout=config.dropout,
            activation=config.activation, layer_norm_eps=config.layer_norm_eps, batch_first=True,
            norm_first=config.norm_first,
        )
        for layer in [*self.transformer.encoder.layers, *self.transformer.decoder.layers]:
            layer.dropout = nn.Identity()  # the dropout between the two linear layers of the FFN
            for attention in (layer.self_attn, getattr(layer, "multihead_attn", None)):
                if attention is not None:
                    attention.dropout = config.attention_dropout
        if not config.norm_first:
            self.transformer.encoder.norm = None
            self.transformer.decoder.norm = None
        self.generator = nn.Linear(config.d_model, config.tgt_vocab_size)
        if config.share_source_target_embedding:
            self.src_embed.weight = self.tgt_embed.weight
        if config.tie_output_embedding:
            self.generator.weight = self.tgt_embed.weight

    def embed(self, embedding: nn.Embedding, ids: Tensor) -> Tensor:
        x = embedding(ids) * math.sqrt(self.config.d_model) + self.table[: ids.shape[1]]
        return self.dropout(x)

    def forward(self, src_ids: Tensor, tgt_ids: Tensor) -> Tensor:
        pad = self.config.pad_id
        length = tgt_ids.shape[1]
        # PyTorch's masks are True where attention is NOT allowed (ours are the opposite).
        future = torch.ones(length, length, dtype=torch.bool, device=tgt_ids.device).triu(1)
        hidden = self.transformer(
            self.embed(self.src_embed, src_ids), self.embed(self.tgt_embed, tgt_ids), tgt_mask=future,
            src_key_padding_mask=src_ids == pad, tgt_key_padding_mask=tgt_ids == pad,
            memory_key_padding_mask=src_ids == pad,
        )
        return self.generator(hidden)


@torch.no_grad()
def copy_weights(ours: Transformer, theirs: TorchTransformer) -> None:
    """Give nn.Transformer our weights, so that both models compute the same numbers.

    Same numbers matter for speed too: with nn.Embedding's N(0, 1) initialisation shared with
    the output layer, the logits are so large that a fifth of their gradients are denormal
    floats, on which a CPU multiplies many times more slowly.
    """
    theirs.src_embed.weight.copy_(ours.src_embed.token.embedding.weight)
    theirs.tgt_embed.weight.copy_(ours.tgt_embed.token.embedding.weight)
    theirs.generator.load_state_dict(ours.generator.state_dict())
    copy_transformer(ours, theirs.transformer)


def make_batch(config: TransformerConfig, batch: int, length: int, device: torch.device, seed: int = 0):
    """Source, decoder input and target ids with padding at the end of some sequences (lengths
    between length/2 and length), as a real batch of sentences has."""
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(length // 2, length + 1, (batch,), generator=generator)
    lengths[0] = length
    real = torch.arange(length)[None, :] < lengths[:, None]

    def ids(vocab: int) -> Tensor:
        x = torch.randint(1, vocab, (batch, length + 1), generator=generator)
        return x.masked_fill(~torch.cat([real, real[:, -1:]], dim=1), config.pad_id)

    src = ids(config.src_vocab_size)[:, :length]
    tgt = ids(config.tgt_vocab_size)
    return src.to(device), tgt[:, :-1].contiguous().to(device), tgt[:, 1:].contiguous().to(device)


def training_step_fn(model: nn.Module, batch, device: torch.device):
    """A closure doing one full step: forward, loss, backward, optimiser step."""
    src, tgt_in, tgt_out = batch
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    pad = model.config.pad_id
    use_bf16 = device.type == "cuda"  # bf16 autocast on a GPU, plain float32 on the CPU

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_bf16):
            logits = model(src, tgt_in)
        loss = F.cross_entropy(logits.float().flatten(0, 1), tgt_out.flatten(), ignore_index=pad)
        loss.backward()
        optimizer.step()

    return step


def formula_flops(config: TransformerConfig, batch: int, src_len: int, tgt_len: int) -> dict:
    """Floating-point operations of one training step, counted from the matrix products.

    A product of an (m x k) by a (k x n) matrix costs 2 m k n operations. Per token, with
    d = d_model, f = d_ff, S = source and T = target length, V = target vocabulary:

    * encoder layer, per source token: Q, K, V, O projections 4 * 2 d^2, feed-forward
      2 * 2 d f; attention, scores Q K^T 2 S d and weights times V 2 S d;
    * decoder layer, per target token: self-attention projections 8 d^2, cross-attention
      Q and O 4 d^2, feed-forward 4 d f; per source token, the cross-attention K and V
      projections of the encoder output, 4 d^2; attention, 4 T d (self) + 4 S d (cross);
    * the output layer, per target token: 2 d V. Embedding look-ups cost no products.

    The backward pass costs twice the forward (one product for the gradient of each input,
    one for the gradient of each weight), so a training step is 3 x forward. Attention is
    counted in full (T x T), as the fused kernels compute it, although the causal mask
    hides half of it. LayerNorm, softmax, dropout and the optimiser are not counted.
    """
    d, f, V = config.d_model, config.d_ff, config.tgt_vocab_size
    S, T = src_len, tgt_len
    n_enc, n_dec = config.n_encoder_layers, config.n_decoder_layers
    encoder = n_enc * S * (8 * d * d + 4 * d * f)
    decoder = n_dec * (T * (12 * d * d + 4 * d * f) + S * 4 * d * d)
    linear = encoder + decoder + T * 2 * d * V
    attention = n_enc * S * 4 * S * d + n_dec * T * (4 * T * d + 4 * S * d)
    return {
        "forward": batch * (linear + attention),
        "training_step": 3 * batch * (linear + attention),
        "training_step_without_attention": 3 * batch * linear,
    }


def counted_flops(step_model: nn.Module, batch) -> tuple[int, bool]:
    """The same count taken by PyTorch: FlopCounterMode adds up the matrix products (and, on a
    GPU, the fused attention kernels) actually dispatched in one forward + backward.

    Returns (operations, whether attention was counted): PyTorch has no formula for the CPU's
    fused attention kernel, so on the CPU it counts the other products only."""
    src, tgt_in, tgt_out = batch
    with FlopCounterMode(display=False) as counter:
        logits = step_model(src, tgt_in)
        F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=step_model.config.pad_id).backward()
    step_model.zero_grad(set_to_none=True)
    operators = counter.get_flop_counts()["Global"]
    return counter.get_total_flops(), any("scaled_dot_product" in str(op) for op in operators)


def kernel_profile(step) -> dict:
    """Which attention kernels one training step runs, and how many matrix products and copies,
    from torch.profiler: the check that the fused attention path is the one used in training."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        step()
    names = [event.name for event in prof.events()]
    kernels = {n for n in names if "attention" in n and n != "aten::scaled_dot_product_attention"}  # not the wrapper
    return {
        "attention_kernels": sorted(kernels),
        "matrix_products": sum(n in ("aten::mm", "aten::addmm", "aten::bmm") for n in names),
        "copies": sum(n == "aten::copy_" for n in names),
    }


def compare(name: str, config: TransformerConfig, batch_size: int, length: int, device: torch.device,
            rounds: int, min_run_time: float) -> dict:
    torch.manual_seed(0)
    ours = Transformer(config).to(device)
    theirs = TorchTransformer(config).to(device)
    copy_weights(ours, theirs)
    batch = make_batch(config, batch_size, length, device)
    with torch.no_grad():  # without dropout, the two must agree: the same model, computed twice
        max_difference = (ours.eval()(*batch[:2]) - theirs.eval()(*batch[:2])).abs().max().item()
    assert max_difference < 1e-3, f"{name}: our logits differ from nn.Transformer's by {max_difference}"
    ours.train()
    theirs.train()
    tokens = 2 * batch_size * length  # source + target positions per step, padding included
    # The peak: float32 on the CPU; bf16 on a GPU, with a product large enough to fill it.
    matmul_dtype, n = (torch.bfloat16, 8192) if device.type == "cuda" else (torch.float32, 2048)
    a = torch.randn(n, n, device=device, dtype=matmul_dtype)
    b = torch.randn(n, n, device=device, dtype=matmul_dtype)

    step_ours = training_step_fn(ours, batch, device)
    step_theirs = training_step_fn(theirs, batch, device)
    for _ in range(3):  # warm-up: first calls allocate and pick kernels
        step_ours()
        step_theirs()
    harness.synchronize(device)
    kernels = {"ours": kernel_profile(step_ours), "torch": kernel_profile(step_theirs)}

    times = harness.alternate(
        {"ours": step_ours, "torch": step_theirs, "matmul": lambda: torch.mm(a, b)}, rounds, min_run_time
    )
    ratios = [t / o for o, t in zip(times["ours"], times["torch"], strict=True)]
    peak = [2 * n**3 / s for s in times["matmul"]]

    flops = formula_flops(config, batch_size, length, length)
    counted, with_attention = counted_flops(ours, batch)
    counted_theirs, _ = counted_flops(theirs, batch)
    comparable = flops["training_step"] if with_attention else flops["training_step_without_attention"]
    mfu = [flops["training_step"] / o / p for o, p in zip(times["ours"], peak, strict=True)]
    mfu_theirs = [flops["training_step"] / t / p for t, p in zip(times["torch"], peak, strict=True)]
    return {
        "name": name,
        "config": {k: v for k, v in vars(config).items()},
        "batch_size": batch_size,
        "src_len": length,
        "tgt_len": length,
        "tokens_per_step": tokens,
        "parameters": {"ours": count_parameters(ours), "torch": count_parameters(theirs)},
        "max_logit_difference_without_dropout": max_difference,
        "dropout": (f"p = {config.dropout} on embeddings + positions and on every sub-layer's output, "
                    f"attention-weight dropout {config.attention_dropout}, none inside the feed-forward network, "
                    "on both sides"),
        "kernels_per_step": kernels,
        "dtype": "bfloat16 autocast" if device.type == "cuda" else "float32",
        "step_seconds": {k: harness.summary(v) for k, v in times.items() if k != "matmul"},
        "tokens_per_second": {
            "ours": harness.summary([tokens / s for s in times["ours"]]),
            "torch": harness.summary([tokens / s for s in times["torch"]]),
        },
        "ratio_ours_over_torch": harness.summary(ratios),
        "ratio_per_round": ratios,
        "peak_matmul": {"size": n, "dtype": str(matmul_dtype).replace("torch.", ""),
                        "flops_per_second": harness.summary(peak)},
        "flops": {
            "formula_forward": flops["forward"],
            "formula_training_step": flops["training_step"],
            "formula_training_step_without_attention": flops["training_step_without_attention"],
            "counted_forward_backward_ours": counted,
            "counted_forward_backward_torch": counted_theirs,
            "counter_includes_attention": with_attention,
            "formula_over_counted": comparable / counted,
        },
        "model_flops_per_second": {
            "ours": harness.summary([flops["training_step"] / s for s in times["ours"]]),
            "torch": harness.summary([flops["training_step"] / s for s in times["torch"]]),
        },
        "mfu": {"ours": harness.summary(mfu), "torch": harness.summary(mfu_theirs)},
    }


def denormal_gradients(model: nn.Module, batch) -> Tensor:
    """The gradient of the loss with respect to the logits, (tokens, vocabulary)."""
    src, tgt_in, tgt_out = batch
    logits = model(src, tgt_in)
    logits.retain_grad()
    F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=model.config.pad_id).backward()
    return logits.grad.flatten(0, 1)


def denormal_slowdown(device: torch.device, quick: bool = False) -> dict:
    """Why the reference model must get our weights: with its own initialisation, nn.Embedding's
    N(0, 1), shared with the output layer, a part of the logits' gradients are denormal floats
    (below 1.2e-38 in float32), and a CPU multiplies those many times more slowly.

    Times the product of the backward pass that meets them, gradient (tokens x V) @ weight
    (V x d), as it is and with the denormals set to zero."""
    config = configurations(quick)[1][1]
    batch = make_batch(config, 8, 32, device)
    tiny = torch.finfo(torch.float32).tiny
    torch.manual_seed(0)
    theirs = TorchTransformer(config).to(device)  # nn.Embedding's own initialisation
    grad = denormal_gradients(theirs.train(), batch)
    ours_grad = denormal_gradients(Transformer(config).to(device).train(), batch)
    weight = theirs.generator.weight.detach()
    flushed = grad.masked_fill(grad.abs() < tiny, 0.0)
    rounds, min_run_time = (1, 0.2) if quick else (5, 0.3)
    times = harness.alternate({"as_is": lambda: grad @ weight, "denormals_zeroed": lambda: flushed @ weight},
                              rounds, min_run_time)

    def denormal_fraction(g: Tensor) -> float:
        return ((g != 0) & (g.abs() < tiny)).float().mean().item()

    return {
        "config": "base (vocabulary 8000), output layer tied to the target embedding",
        "product": f"({grad.shape[0]} x {grad.shape[1]}) @ ({weight.shape[0]} x {weight.shape[1]})",
        "denormal_fraction": {"nn_embedding_init": denormal_fraction(grad), "ours": denormal_fraction(ours_grad)},
        "seconds": {k: harness.summary(v) for k, v in times.items()},
        "slowdown": harness.summary([a / b for a, b in zip(times["as_is"], times["denormals_zeroed"], strict=True)]),
    }


def print_denormals(result: dict) -> None:
    fraction, slowdown = result["denormal_fraction"], result["slowdown"]["median"]
    print(f"\nDenormal gradients of the logits: {fraction['nn_embedding_init']:.1%} with nn.Embedding's N(0, 1) "
          f"initialisation, {fraction['ours']:.1%} with ours; the product {result['product']} takes "
          f"{slowdown:.1f} times longer with them than with them set to zero")


def configurations(quick: bool) -> list[tuple[str, TransformerConfig, int, int]]:
    """(name, config, batch size, sequence length) of the comparisons."""
    small = TransformerConfig.preset("small")
    # The paper's base model with a smaller vocabulary, so that the layers, not the output
    # layer, dominate; embeddings shared and tied as in the paper.
    base = TransformerConfig.preset("base", src_vocab_size=8000, tgt_vocab_size=8000)
    return [
        ("small", small, 32, 32),
        ("base (vocabulary 8000)", base, 8 if quick else 16, 32),
    ]


def run(device: torch.device, quick: bool = False, rounds: int | None = None) -> list[dict]:
    default_rounds, min_run_time = (3, 0.3) if quick else (7, 1.0)
    rounds = rounds or default_rounds
    return [compare(name, config, batch, length, device, rounds, min_run_time)
            for name, config, batch, length in configurations(quick)]


def print_table(results: list[dict]) -> None:
    print("\nTraining step (forward + loss + backward + Adam), tokens/s, median [IQR] over alternated rounds")
    print(f"{'model':<24}{'ours':>18}{'nn.Transformer':>20}{'ratio':>16}{'MFU ours':>10}{'MFU torch':>10}")
    for r in results:
        o, t, q = r["tokens_per_second"]["ours"], r["tokens_per_second"]["torch"], r["ratio_ours_over_torch"]
        print(f"{r['name']:<24}{o['median']:>10.0f} [{o['iqr']:>5.0f}]{t['median']:>12.0f} [{t['iqr']:>5.0f}]"
              f"{q['median']:>9.3f} [{q['iqr']:.3f}]{r['mfu']['ours']['median']:>10.1%}"
              f"{r['mfu']['torch']['median']:>10.1%}")
    for r in results:
        f, peak = r["flops"], r["peak_matmul"]
        counted = "" if f["counter_includes_attention"] else ", attention excluded as the counter has no CPU formula"
        print(f"{r['name']}: {f['formula_training_step'] / 1e9:.2f} GFLOP per step by the formula, "
              f"{f['counted_forward_backward_ours'] / 1e9:.2f} counted by FlopCounterMode "
              f"(formula / counted = {f['formula_over_counted']:.4f}{counted}); peak {peak['dtype']} "
              f"matmul ({peak['size']}) {peak['flops_per_second']['median'] / 1e9:.1f} GFLOP/s")


RECORD = harness.REPO_ROOT / "book" / "data" / "training_speed.json"


def record(rounds: int | None, path: Path = RECORD) -> dict:
    """Both CPU passes (all cores by the wall clock; one thread by CPU time), stored in ``path``
    under this run's dispatch; the file keeps the runs of the other dispatches."""
    env = harness.environment(torch.device("cpu"))
    passes = []
    for threads, cpu_time in ((torch.get_num_threads(), False), (1, True)):
        with harness.timing(threads=threads, cpu_time=cpu_time) as settings:
            load = os.getloadavg()
            print(f"=== {env['cpu']}, dispatch {env['cpu_dispatch']}, {settings['threads']} thread(s), "
                  f"{settings['clock']}; load average {load} ===")
            results = run(torch.device("cpu"), rounds=rounds)
            print_table(results)
        passes.append({"timing": settings, "loadavg_1_5_15_at_start": list(load), "models": [
            {key: r[key] for key in ("name", "batch_size", "src_len", "ratio_ours_over_torch", "ratio_per_round",
                                     "tokens_per_second", "step_seconds")} for r in results]})
    env["loadavg_1_5_15_at_end"] = list(os.getloadavg())
    stored = json.loads(path.read_text()) if path.exists() else {}
    stored[env["cpu_dispatch"]] = {"environment": env, "passes": passes}
    path.write_text(json.dumps(dict(sorted(stored.items())), indent=1) + "\n")
    print("written:", path, "under", env["cpu_dispatch"])
    return stored


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    parser.add_argument("--threads", type=int, default=None, help="default: all cores")
    parser.add_argument("--cpu-time", action="store_true", help="time with the process's CPU time")
    parser.add_argument("--rounds", type=int, default=None, help="alternated rounds (default 7; 3 with --quick)")
    parser.add_argument("--record", action="store_true",
                        help=f"both CPU passes, stored in {RECORD.relative_to(harness.REPO_ROOT)} under this dispatch")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    else:
        harness.set_threads()
    if args.cpu_time:
        harness.use_cpu_time()
    if args.record:
        record(args.rounds)
        raise SystemExit
    results = run(torch.device(args.device), args.quick, args.rounds)
    print_table(results)
    print("median of per-round ratios:", [round(median(r["ratio_per_round"]), 3) for r in results])

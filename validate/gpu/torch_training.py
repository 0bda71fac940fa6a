#!/usr/bin/env python3
"""End-to-end training steps of GPT models on one GPU in PyTorch, to compare with what trainsim
predicts for the same scenario (validate/gpu/README.md). Nothing is fitted to these: they check.

The model is the decoder the scenarios describe (model.*): learned positions, pre-LayerNorm
blocks with biases, tanh-GELU MLP of 4h, untied LM head, dropout 0; bf16 autocast over fp32 master
weights, fused AdamW, causal attention through scaled_dot_product_attention restricted to the
FlashAttention-2 kernel, no activation checkpointing, one GPU (no data parallelism).

Variants, each named in the run's line: `weights="bf16"` keeps the weights in bf16 with no
autocast (what FSDP's bf16 mixed precision computes with: no per-micro-batch weight casts, a bf16
residual stream and bf16 norms), `bias=False` drops every bias (LLaMA/MPT-style layers), and
`checkpoint=True` recomputes each block in the backward (torch.utils.checkpoint).

One JSON line per run: model shape, micro-batch, micro-batches a step, measured step seconds
(median of the timed steps, CUDA-synchronised), the spread, peak allocated memory, and the
model FLOPs by the usual count (6 N T + 12 L h s T for causal attention halved: 6 L h s T) so the
reader can recompute MFU. --smoke runs a tiny model on the CPU."""
import argparse, statistics, sys, time

import torch
import torch.nn as nn
import torch.nn.functional as F


from measure_common import ensure_sdpa, run_context

ensure_sdpa()

p = argparse.ArgumentParser()
p.add_argument("--out", default=None)
p.add_argument("--budget-s", type=float, default=150.0)
p.add_argument("--smoke", action="store_true")
p.add_argument("--runs", default="", help="comma-separated run names (default: all)")
p.add_argument("--profile", default="", help="folder: also profile one step of each run (torch.profiler, "
                                             "a gzipped Chrome trace <run>.trace.json.gz)")
args = p.parse_args()
SMOKE, DEV, LOG = run_context(args)
START, emit = LOG.start, LOG.emit



def layer_norm(h, bias):
    try:
        return nn.LayerNorm(h, bias=bias)
    except TypeError:  # PyTorch < 2.1 (a --smoke run's CPU build): biases kept
        return nn.LayerNorm(h)


class Block(nn.Module):
    def __init__(self, h, nh, bias=True):
        super().__init__()
        self.nh = nh
        self.ln1, self.ln2 = layer_norm(h, bias), layer_norm(h, bias)
        self.qkv, self.proj = nn.Linear(h, 3 * h, bias=bias), nn.Linear(h, h, bias=bias)
        self.up, self.down = nn.Linear(h, 4 * h, bias=bias), nn.Linear(4 * h, h, bias=bias)

    def forward(self, x):
        B, T, H = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, self.nh, H // self.nh).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, H)
        x = x + self.proj(a)
        return x + self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, layers, h, nh, seq, vocab, bias=True, checkpoint=False):
        super().__init__()
        self.checkpoint = checkpoint
        self.wte, self.wpe = nn.Embedding(vocab, h), nn.Embedding(seq, h)
        self.blocks = nn.ModuleList(Block(h, nh, bias) for _ in range(layers))
        self.lnf, self.head = layer_norm(h, bias), nn.Linear(h, vocab, bias=False)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            if self.checkpoint:
                from torch.utils.checkpoint import checkpoint
                x = checkpoint(b, x, use_reentrant=False)
            else:
                x = b(x)
        return self.head(self.lnf(x))


def attention_kernel():
    """FlashAttention-2 only: a run that cannot use it fails instead of measuring another kernel."""
    if SMOKE:
        import contextlib
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel([SDPBackend.FLASH_ATTENTION])


def run(name, layers, hidden, heads, seq, micro_batch, micro_batches, vocab=50304, steps=6, warmup=2,
        weights="amp", bias=True, checkpoint=False):
    if args.runs and name not in args.runs.split(","):
        return
    if time.time() - START > args.budget_s:
        emit(run=name, skipped="budget spent")
        return
    torch.manual_seed(0)
    model = Gpt(layers, hidden, heads, seq, vocab, bias, checkpoint).to(DEV)
    if weights == "bf16":
        model = model.to(torch.bfloat16)
    n_params = sum(p_.numel() for p_ in model.parameters())
    opt = (torch.optim.AdamW(model.parameters(), lr=1e-4) if SMOKE
           else torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True))
    data = torch.randint(0, vocab, (micro_batches, micro_batch, seq + 1), device=DEV)
    if not SMOKE:
        torch.cuda.reset_peak_memory_stats()
    times = []
    def step():
        for mb in range(micro_batches):
            x, y = data[mb, :, :-1], data[mb, :, 1:]
            if weights == "bf16":
                logits = model(x)
            else:
                with torch.autocast(DEV, dtype=torch.bfloat16):
                    logits = model(x)
            loss = F.cross_entropy(logits.float().view(-1, vocab), y.reshape(-1)) / micro_batches
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    try:
        with attention_kernel():
            for i in range(warmup + steps):
                if not SMOKE:
                    torch.cuda.synchronize()
                t0 = time.perf_counter()
                loss = step()
                if not SMOKE:
                    torch.cuda.synchronize()
                if i >= warmup:
                    times.append(time.perf_counter() - t0)
            if args.profile:
                from torch.profiler import ProfilerActivity, profile
                acts = [ProfilerActivity.CPU] + ([] if SMOKE else [ProfilerActivity.CUDA])
                # One warm-up step and one recorded (ProfilerStep#1), with input shapes: what
                # `trainsim import-torch-trace` reads.
                sched = torch.profiler.schedule(wait=0, warmup=1, active=1, repeat=1)
                with profile(activities=acts, record_shapes=True, schedule=sched) as prof:
                    for _ in range(2):
                        step()
                        if not SMOKE:
                            torch.cuda.synchronize()
                        prof.step()
                prof.export_chrome_trace(f"{args.profile}/{name}.trace.json.gz")  # gzipped by the name
    except torch.cuda.OutOfMemoryError as ex:
        emit(run=name, error="out of memory", detail=str(ex)[:200])
        del model, opt
        torch.cuda.empty_cache()
        return
    tokens = micro_batch * micro_batches * seq
    non_embedding = n_params - vocab * hidden * 2 - seq * hidden
    flops = 6.0 * (n_params - seq * hidden) * tokens + 6.0 * layers * hidden * seq * tokens
    step = statistics.median(times)
    rec = dict(run=name, layers=layers, hidden=hidden, heads=heads, seq=seq, vocab=vocab,
               micro_batch=micro_batch, micro_batches=micro_batches, params=n_params,
               weights=weights, bias=bias, checkpoint=checkpoint,
               non_embedding_params=non_embedding, step_s=step, spread=(max(times) - min(times)) / step,
               steps=len(times), tokens_per_s=tokens / step, model_flops_per_step=flops,
               model_flop_per_s=flops / step, final_loss=float(loss.item()) * micro_batches)
    if not SMOKE:
        rec["peak_allocated_bytes"] = torch.cuda.max_memory_allocated()
        rec["peak_reserved_bytes"] = torch.cuda.max_memory_reserved()
        rec["device"] = torch.cuda.get_device_name()
    rec["torch"] = torch.__version__
    emit(**rec)
    del model, opt, data
    if not SMOKE:
        torch.cuda.empty_cache()


if SMOKE:
    run("smoke", 2, 64, 4, 32, 2, 2, vocab=128, steps=2, warmup=1)
    run("smoke-bf16-nobias-ckpt", 2, 64, 4, 32, 2, 2, vocab=128, steps=2, warmup=1, weights="bf16", bias=False,
        checkpoint=True)
    sys.exit(0)
# Sizes of the GPT-3 paper's table 2.1 (hidden, layers, heads), sequence 2048, 16k-32k tokens a step.
run("gpt-125m", 12, 768, 12, 2048, 16, 1)
run("gpt-350m", 24, 1024, 16, 2048, 16, 1)
run("gpt-760m", 24, 1536, 16, 2048, 8, 2)
run("gpt-1.3b", 24, 2048, 16, 2048, 8, 2)
run("gpt-2.7b", 32, 2560, 32, 2048, 8, 2)
# The micro-batch at a fixed count of micro-batches (one): the GEMMs' token count alone changes.
for mbs in (1, 2, 4, 8):
    run(f"gpt-1.3b-mb{mbs}", 24, 2048, 16, 2048, mbs, 1)
# Long sequences: attention's share grows with s.
run("gpt-1.3b-seq8k", 24, 2048, 16, 8192, 2, 1)
run("gpt-1.3b-seq16k", 24, 2048, 16, 16384, 1, 1)
run("gpt-760m-seq32k", 24, 1536, 16, 32768, 1, 1)
# Weights in bf16 without biases (FSDP bf16 mixed precision, LLaMA/MPT-style layers), against the
# autocast runs above: what the weight casts, the fp32 residual stream and the biases cost.
for name, layers, hidden, heads, mb, mbs in (("gpt-125m", 12, 768, 12, 16, 1), ("gpt-350m", 24, 1024, 16, 16, 1),
                                             ("gpt-1.3b", 24, 2048, 16, 8, 2), ("gpt-2.7b", 32, 2560, 32, 8, 2)):
    run(f"{name}-bf16-nobias", layers, hidden, heads, 2048, mb, mbs, weights="bf16", bias=False)
run("gpt-1.3b-bf16", 24, 2048, 16, 2048, 8, 2, weights="bf16")
run("gpt-1.3b-nobias", 24, 2048, 16, 2048, 8, 2, bias=False)
# Full recomputation (each block checkpointed): the forward runs twice.
run("gpt-1.3b-bf16-nobias-ckpt", 24, 2048, 16, 2048, 8, 2, weights="bf16", bias=False, checkpoint=True)
run("gpt-1.3b-bf16-nobias-seq8k", 24, 2048, 16, 8192, 2, 1, weights="bf16", bias=False)

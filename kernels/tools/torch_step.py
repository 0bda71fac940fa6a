#!/usr/bin/env python3
"""PyTorch step time of the GPT that `trainsim train` trains (same shape: pre-LayerNorm blocks,
bias-free linears, tanh GELU MLP of 4h, learned positions, untied head, AdamW, fp32), for
validate/gpu_check.sh. Prints one JSON object: {"step_time_s", "torch_version", "device", ...}."""
import argparse, json, math, time
import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
for name, default in (("layers", 4), ("hidden", 256), ("heads", 8), ("seq", 128), ("batch", 16), ("vocab", 256), ("steps", 10)):
    p.add_argument("--" + name, type=int, default=default)
a = p.parse_args()
dev = "cuda"
torch.backends.cuda.matmul.allow_tf32 = False  # fp32 like trainsim's cuBLAS COMPUTE_32F


class Block(nn.Module):
    def __init__(s, h, nh):
        super().__init__()
        s.nh = nh
        s.ln1, s.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
        s.q, s.k, s.v, s.o = (nn.Linear(h, h, bias=False) for _ in range(4))
        s.up, s.down = nn.Linear(h, 4 * h, bias=False), nn.Linear(4 * h, h, bias=False)

    def forward(s, x):
        B, T, H = x.shape
        y = s.ln1(x)
        q, k, v = (t(y).view(B, T, s.nh, H // s.nh).transpose(1, 2) for t in (s.q, s.k, s.v))
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, H)
        x = x + s.o(att)
        return x + s.down(F.gelu(s.up(s.ln2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(s):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(a.vocab, a.hidden), nn.Embedding(a.seq, a.hidden)
        s.blocks = nn.ModuleList(Block(a.hidden, a.heads) for _ in range(a.layers))
        s.lnf, s.head = nn.LayerNorm(a.hidden), nn.Linear(a.hidden, a.vocab, bias=False)

    def forward(s, idx):
        x = s.wte(idx) + s.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in s.blocks:
            x = b(x)
        return s.head(s.lnf(x))


model = Gpt().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.0)
x = torch.randint(0, a.vocab, (a.batch, a.seq), device=dev)
y = torch.randint(0, a.vocab, (a.batch, a.seq), device=dev)


def step():
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x).view(-1, a.vocab), y.view(-1))
    loss.backward()
    opt.step()
    return loss


for _ in range(3):
    step()
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(a.steps):
    step()
torch.cuda.synchronize()
dt = (time.perf_counter() - t0) / a.steps
print(json.dumps({"step_time_s": dt, "torch_version": torch.__version__, "device": torch.cuda.get_device_name(),
                  "model": vars(a), "precision": "fp32 (no TF32)"}))

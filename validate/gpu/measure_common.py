"""What kernel_facts.py and torch_training.py share: the JSON-lines log and the attention
fallback that lets --smoke run on an old CPU PyTorch."""
import json, time

import torch
import torch.nn.functional as F


class Log:
    """One JSON object a line on stdout and, with a path, appended to that file as it is taken,
    so a run stopped early keeps what it measured. Each line carries its time since the start."""

    def __init__(self, path=None):
        self.start = time.time()
        self.out = open(path, "a") if path else None

    def emit(self, **rec):
        rec["t_s"] = round(time.time() - self.start, 1)
        line = json.dumps(rec)
        print(line, flush=True)
        if self.out:
            self.out.write(line + "\n")
            self.out.flush()


def ensure_sdpa():
    """PyTorch older than 2.0 (the CPU build a --smoke run may find) has no
    scaled_dot_product_attention: the math path stands in for it."""
    if hasattr(F, "scaled_dot_product_attention"):
        return

    def sdpa(q, k, v, is_causal=False):
        s = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        if is_causal:
            s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
        return torch.softmax(s, -1) @ v
    F.scaled_dot_product_attention = sdpa


def run_context(args):
    """(smoke, device, log) of a script's parsed --smoke and --out: without a GPU it runs as
    --smoke, tiny sizes on the CPU."""
    smoke = args.smoke or not torch.cuda.is_available()
    return smoke, "cpu" if smoke else "cuda", Log(args.out)

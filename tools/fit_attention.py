#!/usr/bin/env python3
"""Fit one pass of a GPU preset's FlashAttention parameters to kernel records.

The attention model (models/cost/compute/attention_model.cpp) prices a fused attention pass at
    eff = share(head_dim) * shape(n, causal) * min(1, ctas / sm_count),
    shape = n / (n + c)                      (non-causal)
          = causal_factor * n / (n + 1 + 2c)  (causal),   n = seq_kv / block,
with ctas = batch * heads * ceil(rows / block) (rows: queries forward, keys backward). This tool
fits share at each head dimension, c (overhead_blocks) and causal_factor by least squares in
relative error over the records whose id starts with PREFIX, and prints the JSON block to put
under kernels.attention.<kernel>.<pass> of the preset, with the fit's errors. Needs numpy.

    tools/fit_attention.py data/kernel_benchmarks.json attn_h200_fa2_bwd_ --sms 132 --peak 989e12
"""
import argparse, json, math

import numpy as np


def model(p, recs, head_dims, sms, block):
    out = []
    for r in recs:
        c = r["config"]
        hd = c["head_dim"]
        share = p[head_dims.index(hd)]
        ov, cf = p[-2], p[-1]
        n = max(1.0, c["seqlen"] / block)
        shape = cf * n / (n + 1 + 2 * ov) if c["causal"] else n / (n + ov)
        ctas = max(1.0, c["batch"] * c["nheads"] * math.ceil(c["seqlen"] / block))
        out.append(share * shape * min(1.0, ctas / sms))
    return np.array(out)


def nelder_mead(f, x0, steps, iters=4000):
    pts = [np.array(x0, float)] + [np.array(x0, float) + np.eye(len(x0))[i] * steps[i] for i in range(len(x0))]
    vals = [f(p) for p in pts]
    for _ in range(iters):
        order = np.argsort(vals)
        pts = [pts[i] for i in order]
        vals = [vals[i] for i in order]
        centroid = np.mean(pts[:-1], axis=0)
        refl = centroid + (centroid - pts[-1])
        fr = f(refl)
        if fr < vals[0]:
            exp = centroid + 2 * (centroid - pts[-1])
            fe = f(exp)
            pts[-1], vals[-1] = (exp, fe) if fe < fr else (refl, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = refl, fr
        else:
            con = centroid + 0.5 * (pts[-1] - centroid)
            fc = f(con)
            if fc < vals[-1]:
                pts[-1], vals[-1] = con, fc
            else:
                pts = [pts[0] + 0.5 * (q - pts[0]) for q in pts]
                vals = [f(q) for q in pts]
    i = int(np.argmin(vals))
    return pts[i], vals[i]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records")
    ap.add_argument("prefix")
    ap.add_argument("--sms", type=float, required=True)
    ap.add_argument("--peak", type=float, required=True, help="the dtype's peak FLOP/s")
    ap.add_argument("--block", type=float, default=128)
    a = ap.parse_args()
    recs = [r for r in json.load(open(a.records))["records"] if r["id"].startswith(a.prefix) and "seqlen" in r["config"]]
    head_dims = sorted({r["config"]["head_dim"] for r in recs})
    measured = np.array([r["measured"]["tflops"] * 1e12 / a.peak for r in recs])

    def loss(p):
        if p[-2] < 0 or not 0 < p[-1] <= 1:  # the loader takes causal_factor in (0, 1]
            return 1e9
        return float(np.mean((model(p, recs, head_dims, a.sms, a.block) / measured - 1) ** 2))

    x, _ = nelder_mead(loss, [0.3] * len(head_dims) + [2.0, 0.95], [0.05] * len(head_dims) + [0.5, 0.05])
    err = model(x, recs, head_dims, a.sms, a.block) / measured - 1
    print(json.dumps({"share": {str(h): round(float(x[i]), 4) for i, h in enumerate(head_dims)},
                      "overhead_blocks": round(float(x[-2]), 2), "causal_factor": round(float(x[-1]), 3)}, indent=2))
    print(f"{len(recs)} records: mean |error| {100 * np.mean(np.abs(err)):.1f}%, max {100 * np.max(np.abs(err)):.1f}%")


if __name__ == "__main__":
    main()

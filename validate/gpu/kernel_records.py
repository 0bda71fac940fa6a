#!/usr/bin/env python3
"""kernel_facts.jsonl + clocks.jsonl (validate/gpu/kernel_facts.py on one GPU) -> records in the
format of data/kernel_benchmarks.json, printed as a JSON list; --merge FILE replaces the records
of the same ids in FILE (and adds new ones). Ids: attn_<gpu>_<fa2|cudnn>_<fwd|bwd>_hd<d>_<causal|
noncausal>_s<seq>, gemm_<gpu>_cublas_bf16_<pass>_m<M>_n<N>_k<K>, fp8_<gpu>_cublas_e4m3_m.._n.._k..,
mem_<gpu>_torch_<op>, mem_<gpu>_kernel_launch_overhead, clock_<gpu>_gemm_bf16_sustained (when DIR has
clocks.jsonl), clock_<gpu>_gemm_bf16_duty, moe_<gpu>_torch_<op>_e<E>_top<k>_h<h>.
Usage: kernel_records.py DIR GPU_TAG GPU_NAME DATE [--merge data/kernel_benchmarks.json]"""
import json, statistics, sys

from records_file import merge_records

folder, tag, gpu_name, date = sys.argv[1:5]
merge = sys.argv[sys.argv.index("--merge") + 1] if "--merge" in sys.argv else None
facts = [json.loads(l) for l in open(f"{folder}/kernel_facts.jsonl") if l.strip()]
try:
    clocks = [json.loads(l) for l in open(f"{folder}/clocks.jsonl") if l.strip()]
except FileNotFoundError:
    clocks = []
dev = next(r for r in facts if r["section"] == "device")
SOURCE = (f"measured for this project by validate/gpu/kernel_facts.py on one lent {dev['name']} "
          f"({date}; PyTorch {dev['torch']}, CUDA {dev['cuda']}, cuDNN {dev['cudnn']})")
WHERE = f"{folder}/kernel_facts.jsonl"
TIMING = ("CUDA events around batches of calls (CUDA graph replay for GEMMs and small kernels), median of "
          "the batches; inputs rotated over more than the 60 MiB L2; random data; calls back to back, so "
          "the clock is the sustained one under the 700 W limit (clock_*_gemm_bf16_sustained)")
out = []


def rec(id_, kind, config, measured, notes=""):
    while any(r["id"] == id_ for r in out):  # the same shape measured again under another tag
        id_ += "_repeat"
    out.append({"id": id_, "kind": kind, "gpu": gpu_name, "config": config, "measured": measured,
                "source": SOURCE, "where": WHERE, "confirmed": True,
                "notes": (notes + " " if notes else "") + "Timing: " + TIMING + "."})


for r in facts:
    if "error" in r or "skipped" in r:
        continue
    if r["section"] == "attention":
        impl = {"flash2": "fa2", "cudnn": "cudnn"}[r["kernel"]]
        for p_, s_key, f_key in (("fwd", "fwd_s", "fwd_flop_per_s"), ("bwd", "bwd_s", "bwd_flop_per_s")):
            cz = "causal" if r["causal"] else "noncausal"
            suffix = "" if r["tag"] == "fa_bench" else "_long"
            rec(f"attn_{tag}_{impl}_{p_}_hd{r['head_dim']}_{cz}_s{r['seq']}{suffix}", "attention",
                {"impl": impl, "pass": p_, "head_dim": r["head_dim"], "causal": r["causal"], "seqlen": r["seq"],
                 "batch": r["batch"], "nheads": r["heads"], "dtype": "bf16",
                 "library": "torch.nn.functional.scaled_dot_product_attention, one backend allowed"},
                {"tflops": round(r[f_key] / 1e12, 1), "time_us": round(r[s_key] * 1e6, 2)},
                "FLOPs by FlashAttention's convention: 4 b s^2 h d forward, halved when causal, x2.5 backward. "
                "fa2: PyTorch's built-in FlashAttention-2 kernel; cudnn: cuDNN's fused attention (the Hopper "
                "kernel TransformerEngine uses by default).")
    elif r["section"] == "gemm":
        g = r.get("grouped", 1)
        dt = "bf16" if r["dtype"] == "bf16" else "e4m3"
        pre = "gemm" if dt == "bf16" else "fp8"
        name = f"{pre}_{tag}_cublas_{dt}_{r['pass_']}_" + (f"g{g}_" if g > 1 else "") + f"m{r['m']}_n{r['n']}_k{r['k']}"
        layout = {"fwd": "F.linear: X[M,K] W[N,K]^T", "dgrad": "matmul: dY[M,K] W[K,N]",
                  "wgrad": "matmul: dY[K,M]^T X[K,N]"}[r["pass_"]]
        rec(name, "gemm" if dt == "bf16" else "fp8",
            {"op": "grouped GEMM (torch._grouped_mm)" if g > 1 else layout, "dtype": dt, "M": r["m"], "N": r["n"],
             "K": r["k"], "groups": g, "library": "cuBLAS/cuBLASLt through PyTorch" if dt == "bf16"
             else "torch._scaled_mm (cuBLASLt fp8, per-tensor scales, bf16 out)", "shape_tag": r.get("tag", "")},
            {"tflops": round(r["flop_per_s"] / 1e12, 1), "time_us": round(r["s"] * 1e6, 2)})
    elif r["section"] == "memory" and "bytes_per_s" in r:
        size = "" if r["elements"] >= (1 << 28) else f"_n{r['elements']}"
        rec(f"mem_{tag}_torch_{r['op']}{size}", "memory_bound",
            {"op": f"PyTorch eager {r['op']} on bf16 (rows of 8192 where the op has rows)", "elements": r["elements"],
             "bytes_counted": r["bytes"]},
            {"time_us": round(r["s"] * 1e6, 3), "effective_bytes_per_s": round(r["bytes_per_s"]),
             "pct_of_datasheet_bw": round(100 * r["bytes_per_s"] / 4.8e12, 1)},
            "Bytes: each input read once and each output written once (the minimum traffic).")
    elif r["section"] == "launch" and "GPU time" in r["what"]:
        rec(f"mem_{tag}_kernel_launch_overhead", "memory_bound",
            {"op": "one-element x.add_(1) kernels replayed back to back from a CUDA graph"},
            {"latency_us": round(r["s"] * 1e6, 3)})
    elif r["section"] == "launch" and "x.add_" in r["what"]:
        rec(f"host_{tag}_eager_pytorch_launch", "overhead",
            {"op": "host time per eager x.add_(1) call, 2000 calls, host clock"},
            {"latency_us": round(r["s"] * 1e6, 2)})
    elif r["section"] == "moe" and "bytes_per_s" in r:
        rec(f"moe_{tag}_torch_{r['op']}_e{r['experts']}_top{r['topk']}_h{r['hidden']}", "memory_bound",
            {"op": {"router_softmax_topk": "softmax over [T, E] fp32 router logits, then top-k",
                    "permute_sort": "stable sort of the T*k expert ids (int64)",
                    "permute_gather": "index_select of T*k bf16 token rows into expert order",
                    "unpermute_scatter_add": "index_add_ of the T*k weighted expert outputs back to T rows "
                                             "(the weighting multiply included)"}[r["op"]],
             "tokens": r["tokens"], "hidden": r["hidden"], "experts": r["experts"], "topk": r["topk"],
             "bytes_counted": r["bytes"]},
            {"time_us": round(r["s"] * 1e6, 2), "effective_bytes_per_s": round(r["bytes_per_s"]),
             "pct_of_datasheet_bw": round(100 * r["bytes_per_s"] / 4.8e12, 1)},
            "Bytes: the minimum traffic (each input read once, each output written once).")
    elif r["section"] == "optimizer" and r.get("fused"):
        rec(f"mem_{tag}_torch_adamw_fused", "memory_bound",
            {"op": "torch.optim.AdamW(fused=True), fp32 params, grads and moments", "params": r["params"]},
            {"time_us": round(r["s"] * 1e6, 1), "ns_per_param": round(r["s_per_param"] * 1e9, 4),
             "effective_bytes_per_s_at_28_bytes": round(r["bytes_per_s_at_28_bytes"])})

duty = [r for r in facts if r["section"] == "duty" and "gemm_flop_per_s" in r]
if duty:
    rec(f"clock_{tag}_gemm_bf16_duty", "gemm",
        {"op": "8192^3 bf16 F.linear with 0-16 copies of 512 MiB between its calls, each mix back to back "
               "for 3 s (the first second dropped); the GEMM's time is the mix's less the copies' alone",
         "power_limit_w": 700},
        {"points": [{"tensor_busy_share": round(r["tensor_busy_share"], 4),
                     "gemm_tflops": round(r["gemm_flop_per_s"] / 1e12, 1),
                     "sm_clock_mhz_median": r["sm_mhz_median"], "power_w_median": r["power_w_median"]}
                    for r in duty]},
        "The power limit holds the SM clock down in proportion to the tensor cores' share of the time: "
        "a training step's GEMMs, between its memory-bound kernels, run faster than the same GEMM back to back.")

def sustained_clock_record():
    """The 8192^3 GEMM in a burst and then back to back (clocks.jsonl)."""
    burst = next(r for r in clocks if "10 calls" in r.get("what", ""))
    win = next(r for r in clocks if "windows" in r)
    sustained = [f for t, f in win["windows"] if t >= 1.0]
    smi = next(r for r in clocks if "samples" in r)
    mhz = [int(s.split(",")[1]) for s in smi["samples"]]
    rec(f"clock_{tag}_gemm_bf16_sustained", "gemm",
        {"op": "8192^3 bf16 F.linear, 10 calls after 3 warm-ups, then back to back for 8 s in 50-call windows",
         "power_limit_w": 700},
        {"burst_tflops": round(burst["flop_per_s"] / 1e12, 1),
         "sustained_tflops_median": round(statistics.median(sustained) / 1e12, 1),
         "sustained_over_burst": round(statistics.median(sustained) / burst["flop_per_s"], 4),
         "sm_clock_mhz_idle": mhz[0], "sm_clock_mhz_sustained_median": int(statistics.median(mhz[len(mhz) // 3:]))},
        "nvidia-smi sampled every 100 ms meanwhile: the SM clock falls from 1980 MHz to about 1450-1500 MHz at "
        "about 690 W within half a second of sustained tensor-core load (power-limited). Windows from 1 s on.")


if clocks:
    sustained_clock_record()

if merge:
    merge_records(merge, out)
    print(f"{len(out)} records merged into {merge}", file=sys.stderr)
else:
    json.dump(out, sys.stdout, indent=1)

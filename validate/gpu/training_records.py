#!/usr/bin/env python3
"""torch_training.jsonl (what validate/gpu/torch_training.py measured) -> training-run records in
the format of data/published_runs.json, so that `trainsim validate --published FILE` predicts each
run and prints the error. Usage: training_records.py RUNS.jsonl DEVICE_DATE [ID_SUFFIX] > runs.json
(ID_SUFFIX tells apart runs of the same name measured in another session)."""
import json, sys

lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
when = sys.argv[2]
suffix = sys.argv[3] if len(sys.argv) > 3 else ""
records = []
for r in lines:
    if "step_s" not in r:
        continue
    tokens = r["micro_batch"] * r["micro_batches"] * r["seq"]
    records.append({
        "id": f"trainsim_h200_torch_{r['run']}{suffix}",
        "source": f"measured by validate/gpu/torch_training.py on one lent {r['device']} ({when}); "
                  f"PyTorch {r['torch']}, eager",
        "model": {"name": r["run"], "params": r["params"], "layers": r["layers"], "hidden": r["hidden"],
                  "heads": r["heads"], "ffn_hidden": 4 * r["hidden"], "seq_len": r["seq"], "vocab": r["vocab"],
                  "attn": "FlashAttention-2 (scaled_dot_product_attention, flash backend only)",
                  "attn_impl": "flash2", "linear_bias": r.get("bias", True)},
        "hardware": {"gpu": "h200", "num_gpus": 1, "gpus_per_node": 1},
        "parallel": {"tp": 1, "pp": 1, "dp": 1, "zero_stage": 0},
        "training": {"micro_batch": r["micro_batch"], "grad_accum": r["micro_batches"],
                     "global_batch": r["micro_batch"] * r["micro_batches"], "precision": "bf16",
                     "recompute": "full" if r.get("checkpoint") else "none",
                     # torch.utils.checkpoint(use_reentrant=False) stops recomputing early
                     **({"recompute_early_stop": True} if r.get("checkpoint") else {}),
                     "autocast": r.get("weights", "amp") == "amp"},
        "measured": {"derived_iteration_time_s": r["step_s"], "throughput_tokens_per_s": tokens / r["step_s"],
                     "step_spread": r["spread"], "peak_allocated_bytes": r["peak_allocated_bytes"]},
        "notes": ("bf16 weights, no autocast" if r.get("weights") == "bf16" else
                  "bf16 autocast over fp32 master weights") + ", fused AdamW, " +
                 ("every block checkpointed" if r.get("checkpoint") else "no activation checkpointing") + ", " +
                 ("biases" if r.get("bias", True) else "no biases") +
                 ", learned positions, untied head, median of the timed steps",
        "confirmed": True,
    })
json.dump(records, sys.stdout, indent=1)
print()

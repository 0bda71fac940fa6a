#!/usr/bin/env python3
"""Kernel records from the profiler traces of measured training steps.

Reads PyTorch profiler traces (validate/gpu/torch_training.py --profile), links every GPU kernel
to the aten op that launched it (args "External id"), and writes one record per (trace, op,
shape) for the ops named below: the mean time per call and the rate over the op's minimum
traffic. Records go to stdout as a JSON list, or merged into data/kernel_benchmarks.json with
--merge.

    python3 validate/gpu/trace_kernel_records.py --merge data/measured/h200-2026-12-04*/traces/*.trace.json.gz
"""
import argparse, collections, gzip, json, os, sys

from records_file import merge_records

# (aten op, what it does, bytes moved per element of its first input)
OPS = {
    "aten::copy_": ("relayout_copy", "copy_ of the permuted [b, s, 3, heads, head_dim] QKV view into the attention's layout", 2),
    "aten::cat": ("relayout_cat", "cat of the three Q, K, V gradients into the QKV output's gradient", 2),
}


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def records(path):
    ev = load(path)["traceEvents"]
    ops = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") == "cpu_op":
            eid = e.get("args", {}).get("External id")
            if eid is not None and e["name"] in OPS:
                ops[eid] = e
    agg = collections.defaultdict(lambda: [0, 0.0, set()])
    for e in ev:
        if e.get("ph") != "X" or e.get("cat") != "kernel":
            continue
        op = ops.get(e["args"].get("External id"))
        if op is None:
            continue
        dims = op["args"].get("Input Dims")
        first = dims[0]
        if op["name"] == "aten::copy_" and not (len(first) == 5 and first[2] == 3):
            continue  # only the QKV view's copy
        if op["name"] == "aten::cat" and not (len(first) == 3 and all(len(d) == 4 for d in first)):
            continue
        key = (op["name"], json.dumps(first))
        a = agg[key]
        a[0] += 1
        a[1] += e["dur"]
        a[2].add(op["args"]["External id"])
    model = os.path.basename(path).split(".trace")[0]
    day = os.path.basename(os.path.dirname(os.path.dirname(path)))
    out = []
    for (name, first), (kernels, dur_us, calls) in sorted(agg.items()):
        tag, what, _ = OPS[name]
        shape = json.loads(first)
        elements = 1
        for d in (shape[0] if name == "aten::cat" else shape):
            elements *= d
        if name == "aten::cat":
            elements *= 3
        moved = 2 * 2 * elements  # 16-bit elements, each read once and written once
        t = dur_us / len(calls)
        out.append({
            "id": f"relayout_h200_torch_{tag.split('_')[1]}_{model}_{day.split('-')[-1]}",
            "kind": "memory_bound",
            "gpu": "NVIDIA H200",
            "config": {"op": what, "aten": name, "input_dims": shape, "calls": len(calls),
                       "bytes_counted": moved},
            "measured": {"time_us": round(t, 2), "effective_bytes_per_s": round(moved / (t * 1e-6)),
                         "pct_of_datasheet_bw": round(100 * moved / (t * 1e-6) / 4.8e12, 1)},
            "source": "measured for this project: the profiler trace of a training step (validate/gpu/torch_training.py --profile) on one lent NVIDIA H200 (2026-12-04; PyTorch 2.11.0+cu130)",
            "where": os.path.relpath(path, os.path.join(os.path.dirname(__file__), "..", "..")),
            "confirmed": True,
            "notes": "Kernels linked to their aten op by External id; the mean over the step's calls. Bytes: each element read once and written once, 2 bytes (bf16).",
        })
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--merge", action="store_true", help="merge into data/kernel_benchmarks.json")
    a = ap.parse_args()
    recs = [r for p in a.traces for r in records(p)]
    if not a.merge:
        json.dump(recs, sys.stdout, indent=1)
        return
    merge_records(os.path.join(os.path.dirname(__file__), "..", "..", "data", "kernel_benchmarks.json"), recs)
    print(f"merged {len(recs)} records", file=sys.stderr)


if __name__ == "__main__":
    main()

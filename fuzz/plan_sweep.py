#!/usr/bin/env python3
"""Random plans through `trainsim run`: well-formed scenarios whose plan fields are drawn at
random (degrees that make the GPU count, every schedule, ZeRO stage, recomputation, precision,
attention kernel, placement, offload, compression, MoE options), run with the estimate or the
simulate tier. The byte-level fuzz targets rarely build a plan the loader accepts and the model
then finds odd; this does. Contract, as for every input: exit 0, 2 (bad input) or 3 (the plan
cannot run), within --wall seconds and --rss-mib of memory; anything else is written to --out
as a scenario that reproduces it.

  fuzz/plan_sweep.py [--trainsim build/cli/trainsim] [--plans 500] [--seed 1] [--out build-fuzz/plans]

With --tiers PCT it compares the tiers instead: each drawn plan the estimate finds feasible is
simulated too, and the plans whose two step times differ by more than PCT percent
(estimate_vs_simulate.difference_pct), or whose simulated traffic of a kind is not the closed
form's within 5% (simulation.traffic_bytes against traffic_bytes_closed_form: bytes, whatever
the contention), are kept as tier-*.json. Exit 1 on a traffic mismatch or a broken contract.
"""
import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time

MODELS = ["gpt-1.7b", "gpt-7.5b", "llama2-7b", "llama3-8b", "llama3-70b", "mixtral-8x7b", "deepseek-v3"]
MOE = {"mixtral-8x7b", "deepseek-v3"}
CLUSTERS = ["dgx-a100-superpod", "dgx-h100-superpod", "h800-cluster"]
# Plan fields drawn with probability 0.2 each, beside the degrees and batch.
CHOICES = {
    "schedule": ["1f1b", "interleaved", "zb-h1", "zb-h2", "dualpipe", "gpipe"],
    "vpp": [1, 2, 3, 4],
    "recompute": ["none", "full", "selective"],
    "precision": ["bf16", "fp16", "fp8"],
    "zero_stage": [0, 1, 2, 3],
    "zero3_collectives": ["module", "parameter"],
    "zero3_prefetch_params": [0, 5e7, 1e9],
    "dp_shard": [1, 2, 8],
    "sp": [True, False],
    "flash_attention": [True, False],
    "attention_kernel": ["flash2", "flash3", "flash1", "triton"],
    "collective_algorithm": ["auto", "ring", "tree", "hier"],
    "placement": ["tp-cp-dp-pp", "tp-cp-ep-dp-pp", "tp-dp-pp", "tp-pp-dp", "dp-tp-pp", "pp-tp-dp"],
    "grad_reduce_precision": ["auto", "fp32", "bf16"],
    "adam_moments_precision": ["fp32", "bf16"],
    "fused_loss": [True, False],
    "vocab_parallel": [True, False],
    "fp8_activation_cache": [True, False],
    "grad_accumulation_fusion": [True, False],
    "sync_interval": [1, 2, 4],
    "overlap": [{"dp": True, "tp": True, "pp": True}, {"dp": False, "tp": False, "pp": False}],
    "offload": [{"optimizer": True}, {"optimizer": True, "params": True}, {"activations": True}],
    "compression": [[{"from_step": 0, "method": m}] for m in ("int8", "int4", "fp8")],
}
# Model fields overridden now and then, with sizes far from any preset.
MODEL_SIZES = [1, 2, 3, 8, 31, 64, 1000, 4096, 16384, 65536]


def draw(rng):
    model = rng.choice(MODELS)
    nodes = rng.choice([1, 1, 2, 4, 8, 16, 32])
    gpus = nodes * 8
    tp, pp, cp = rng.choice([1, 2, 4, 8]), rng.choice([1, 1, 2, 4]), rng.choice([1, 1, 1, 2])
    while tp * pp * cp > gpus:
        tp, pp, cp = max(1, tp // 2), max(1, pp // 2), 1
    dp = gpus // (tp * pp * cp)
    plan = {"tp": tp, "pp": pp, "cp": cp, "micro_batch": rng.choice([1, 1, 2, 4])}
    plan["global_batch"] = dp * plan["micro_batch"] * rng.choice([1, 2, 4, 8, 16, 32])
    if model in MOE and rng.random() < 0.7:
        ep = rng.choice([2, 4, 8, 4096])
        if (dp * cp) % ep == 0 or rng.random() < 0.1:
            plan["ep"] = ep
        if rng.random() < 0.3:
            plan["expert_tp"] = rng.choice([1, tp, 4096])
        if rng.random() < 0.5:
            plan["moe_dispatcher"] = rng.choice(["alltoall", "deepep"])
    for key, values in CHOICES.items():
        if rng.random() < 0.2:
            plan[key] = rng.choice(values)
    if plan.get("schedule") == "interleaved" and "vpp" not in plan:
        plan["vpp"] = 2
    m = {"base": model}
    for key in ("layers", "hidden", "heads", "seq_len", "vocab"):
        if rng.random() < 0.05:
            m[key] = rng.choice(MODEL_SIZES)
    return {"schema_version": 1, "name": "plan-sweep", "model": m,
            "cluster": {"base": rng.choice(CLUSTERS), "nodes": nodes}, "plan": plan}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trainsim", default="build/cli/trainsim")
    ap.add_argument("--plans", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="build-fuzz/plans")
    ap.add_argument("--wall", type=float, default=60, help="seconds a run may take")
    ap.add_argument("--rss-mib", type=float, default=2048, help="memory a run may use")
    ap.add_argument("--tiers", type=float, default=None, metavar="PCT",
                    help="compare the tiers on --plans feasible plans; keep those more than PCT%% apart")
    a = ap.parse_args()
    if a.tiers is not None:
        return compare_tiers(a)
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    path = os.path.join(a.out, "current.json")
    exits, failures, peak_mib = {}, 0, 0.0
    for i in range(a.plans):
        scenario = draw(rng)
        fidelity = rng.choice(["estimate", "simulate"])
        with open(path, "w") as f:
            json.dump(scenario, f)
        start = time.monotonic()
        argv = [a.trainsim, "run", path, "--fidelity", fidelity, "--json"]
        try:
            p = subprocess.run(argv, capture_output=True, timeout=a.wall)
            code, err = p.returncode, p.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            code, err = "timeout", ""
        wall = time.monotonic() - start
        # The largest child so far (as hostile_inputs_test.py reads it): a run that raises it
        # past the limit is the one that used that much.
        rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        exits[code] = exits.get(code, 0) + 1
        problems = []
        if code not in (0, 2, 3):
            problems.append(f"exit {code}")
        if rss_mib > max(a.rss_mib, peak_mib):
            problems.append(f"{rss_mib:.0f} MiB")
        peak_mib = max(peak_mib, rss_mib)
        if problems:
            failures += 1
            keep = os.path.join(a.out, f"failure-{a.seed}-{i}.json")
            with open(keep, "w") as f:
                json.dump(scenario, f, indent=1)
            print(f"plan {i} ({fidelity}, {wall:.1f} s): {'; '.join(problems)}: {keep}\n  {err.strip()[-300:]}",
                  flush=True)
    print(f"{a.plans} plans, exits {exits}, {failures} failures")
    return 1 if failures else 0


def compare_tiers(a):
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    path = os.path.join(a.out, "current.json")
    gaps, kept, mismatches, broken, draws = [], 0, 0, 0, 0
    while len(gaps) < a.plans and draws < 50 * a.plans:
        draws += 1
        scenario = draw(rng)
        with open(path, "w") as f:
            json.dump(scenario, f)
        base = [a.trainsim, "run", path, "--json", "--fidelity"]
        try:
            if subprocess.run(base + ["estimate"], capture_output=True, timeout=a.wall).returncode != 0:
                continue
            p = subprocess.run(base + ["simulate"], capture_output=True, timeout=a.wall)
        except subprocess.TimeoutExpired:
            p = None
        i = len(gaps)
        if p is None or p.returncode != 0:
            broken += 1
            gaps.append(0.0)
            keep = os.path.join(a.out, f"tier-{a.seed}-{i}.json")
            with open(keep, "w") as f:
                json.dump(scenario, f, indent=1)
            print(f"plan {i}: simulate {'timed out' if p is None else f'exit {p.returncode}'}: {keep}", flush=True)
            continue
        d = json.loads(p.stdout)
        gap = d.get("estimate_vs_simulate", {}).get("difference_pct", 0.0)
        gaps.append(abs(gap))
        sim = d.get("simulation", {})
        moved, closed = sim.get("traffic_bytes", {}), sim.get("traffic_bytes_closed_form", {})
        off = {k: moved.get(k, 0) / v for k, v in closed.items() if v > 0 and abs(moved.get(k, 0) / v - 1) > 0.05}
        mismatches += bool(off)
        if abs(gap) > a.tiers or off:
            kept += 1
            keep = os.path.join(a.out, f"tier-{a.seed}-{i}.json")
            with open(keep, "w") as f:
                json.dump(scenario, f, indent=1)
            cause = d.get("estimate_vs_simulate", {}).get("cause", "")
            traffic = f"; traffic moved/closed form {off}" if off else ""
            print(f"plan {i}: simulate {gap:+.2f}% of the estimate ({cause}){traffic}: {keep}", flush=True)
    n = max(1, len(gaps))
    print(f"{len(gaps)} feasible plans ({draws} drawn): mean |difference| {sum(gaps) / n:.2f}%, "
          f"{sum(g > a.tiers for g in gaps)} above {a.tiers:g}%, {mismatches} traffic mismatches, "
          f"{broken} simulations that failed")
    return 1 if mismatches or broken else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Hostile and malformed scenario inputs. Every case must exit 2 with a
message naming the JSON path (or file) and what was expected, in under a second and under 1 GiB.
Run: TRAINSIM=build/cli/trainsim SCENARIOS=scenarios python3 tests/cli/hostile_inputs_test.py"""
import json, os, resource, subprocess, sys, tempfile, time

T = os.environ["TRAINSIM"]
S = os.environ["SCENARIOS"]
# Instrumented (sanitizer) builds run slower; their wall limits are scaled by this factor.
WALL_SCALE = float(os.environ.get("WALL_LIMIT_SCALE", "1"))
BASE = {"schema_version": 1, "name": "h", "model": "gpt-1.7b",
        "cluster": {"base": "dgx-a100-superpod", "nodes": 4},
        "plan": {"dp": 32, "micro_batch": 4, "global_batch": 512}}


def edit(path, value):
    def f():
        d = json.loads(json.dumps(BASE))
        node = d
        keys = path.split(".")
        for k in keys[:-1]:
            if isinstance(node.get(k), str):
                node[k] = {"base": node[k]}
            node = node.setdefault(k, {})
        node[keys[-1]] = value
        return json.dumps(d)
    return f


def drop(path):
    def f():
        d = json.loads(json.dumps(BASE))
        node = d
        keys = path.split(".")
        for k in keys[:-1]:
            node = node[k]
        del node[keys[-1]]
        return json.dumps(d)
    return f


def raw(text):
    return lambda: text


CASES = [
    # (name, content generator, extra args, expected substring in stderr)
    ("wrong type: layers", edit("model.layers", "many"), [], "model.layers: expected an integer"),
    ("huge number: layers", edit("model.layers", 1e30), [], "model.layers"),
    ("NaN quantity", edit("cluster.gpu", {"base": "A100-SXM4-80GB", "hbm_capacity": "NaN GB"}), [], "cluster.gpu.hbm_capacity"),
    ("negative size", edit("cluster.gpu", {"base": "A100-SXM4-80GB", "hbm_capacity": -80}), [], "cluster.gpu.hbm_capacity"),
    ("zero GPUs", edit("cluster.nodes", 0), [], "cluster.nodes"),
    ("a billion GPUs", edit("cluster.nodes", 10**9), [], "cluster.nodes"),
    ("1e18 GPUs per node", edit("cluster.gpus_per_node", 10**18), [], "cluster.gpus_per_node"),
    ("deeply nested JSON", raw("[" * 200000 + "]" * 200000), [], "nests deeper than 64 levels"),
    ("deeply nested objects", raw('{"a":' * 100000 + "1" + "}" * 100000), [], "nests deeper than 64 levels"),
    ("100 MB file", None, [], "larger than 64 MiB"),
    ("binary garbage", raw(bytes(range(256)).decode("latin-1") * 64), [], "malformed JSON"),
    ("empty file", raw(""), [], "malformed JSON"),
    ("JSON null", raw("null"), [], "must be a JSON object"),
    ("top-level string", raw('"scenario"'), [], "must be a JSON object"),
    ("missing preset", edit("model", "gpt-9000"), [], 'unknown model preset "gpt-9000"'),
    ("missing cluster preset", edit("cluster", "supercomputer-x"), [], 'unknown cluster preset "supercomputer-x"'),
    ("missing gpu preset", edit("cluster.gpu", "B9000"), [], 'unknown gpu preset "B9000"'),
    ("path traversal preset", edit("model", "../../../etc/passwd"), [], "not a valid preset name"),
    ("unknown unit", edit("cluster.network", {"latency": "5 parsecs"}), [], "cluster.network.latency"),
    ("bits for memory", edit("cluster.gpu", {"base": "A100-SXM4-80GB", "hbm_capacity": "80Gb"}), [], "that is bits"),
    ("size for bandwidth", edit("cluster.intra_node", {"bandwidth": "600GB"}), [], "cluster.intra_node.bandwidth"),
    ("negative latency", edit("cluster.network", {"latency": "-5us"}), [], "cluster.network.latency"),
    # A subnormal latency passed the checks and stopped SimGrid's max-min solver (abort).
    # Names are printed in reports: no escape sequences, NUL or right-to-left overrides.
    ("escape sequence in a name", edit("name", "ok\u001b[2Jcleared"), [], "name: control or text-direction character at byte 2"),
    ("right-to-left override in a name", edit("name", "gpt\u202eexe.json"), [], "name: control or text-direction character at byte 3"),
    ("subnormal latency", edit("cluster.network", {"latency": "1e-310s"}), ["--fidelity", "simulate"], "cluster.network.latency: expected 0 or at least 1e-12 s"),
    ("subnormal NVLink latency", None, ["--fidelity", "simulate", "--set", "cluster.intra_node.latency=1e-320"], "cluster.intra_node.latency: expected 0 or at least 1e-12 s"),
    ("unknown topology", edit("cluster.network", {"topology": "ring-of-fire"}), [], "cluster.network.topology"),
    ("oversubscription below 1", edit("cluster.network", {"oversubscription": 0.5}), [], "cluster.network.oversubscription"),
    ("torus dims mismatch", edit("cluster.network", {"topology": "torus", "torus_dims": [3, 3]}), [], "cluster.network.torus_dims"),
    ("missing model", drop("model"), [], "model: missing"),
    ("missing schema_version", drop("schema_version"), [], "schema_version: missing"),
    ("future schema_version", edit("schema_version", 99), [], "schema_version"),
    ("unknown top-level key", edit("planz", {}), [], "planz: unknown key"),
    ("unknown network key", edit("cluster.network", {"nic_speed": "1Gbps"}), [], "cluster.network.nic_speed: unknown key"),
    ("unknown schedule", edit("plan.schedule", "2f2b"), [], "plan.schedule"),
    ("unknown precision", edit("plan.precision", "fp4"), [], "plan.precision"),
    ("recompute as bool", edit("plan.recompute", True), [], "plan.recompute: expected a string"),
    ("tp zero", edit("plan.tp", 0), [], "plan.tp"),
    ("tp fractional", edit("plan.tp", 2.5), [], "plan.tp"),
    ("negative micro-batch", edit("plan.micro_batch", -4), [], "plan.micro_batch"),
    ("zero global batch", edit("plan.global_batch", 0), [], "plan.global_batch"),
    ("huge global batch", edit("plan.global_batch", 1e30), [], "plan.global_batch"),
    ("compression not a list", edit("plan.compression", "int8"), [], "plan.compression"),
    ("compression unknown method", edit("plan.compression", [{"method": "zip"}]), [], "plan.compression[0].method"),
    ("compression negative step", edit("plan.compression", [{"from_step": -1, "method": "int8"}]), [], "plan.compression[0].from_step"),
    ("offload not an object", edit("plan.offload", True), [], "plan.offload"),
    ("overlap flag as string", edit("plan.overlap", {"dp": "yes"}), [], "plan.overlap.dp"),
    ("layers_per_stage not a list", edit("plan.layers_per_stage", 12), [], "plan.layers_per_stage"),
    ("layers_per_stage negative", edit("plan.layers_per_stage", [30, -6]), [], "plan.layers_per_stage[1]"),
    ("moe top_k above experts", edit("model", {"base": "mixtral-8x7b", "moe": {"experts": 8, "top_k": 9}}), [], "model.moe.top_k"),
    ("kv_heads above heads", edit("model", {"base": "gpt-1.7b", "kv_heads": 48}), [], "model.kv_heads"),
    ("heads not dividing hidden", edit("model", {"base": "gpt-1.7b", "heads": 7}), [], "model.heads: must divide hidden"),
    ("seq_len zero", edit("model", {"base": "gpt-1.7b", "seq_len": 0}), [], "model.seq_len"),
    ("vocab huge", edit("model", {"base": "gpt-1.7b", "vocab": 10**12}), [], "model.vocab"),
    ("peak flops missing", edit("cluster.gpu", {"name": "x", "hbm_capacity": "80GB", "hbm_bandwidth": "2TBps"}), [], "cluster.gpu.peak_flops: missing"),
    ("peak flops bad unit", edit("cluster.gpu", {"base": "A100-SXM4-80GB", "peak_flops": {"bf16": "312 TFLOPS/s"}}), [], "cluster.gpu.peak_flops.bf16"),
    # A positive rate too small for any op time to be finite (the schedule stalled on inf).
    ("peak flops 1e-300", edit("cluster.gpu", {"base": "A100-SXM4-80GB", "peak_flops": {"bf16": 1e-300}}), ["--fidelity", "simulate"], "cluster.gpu.peak_flops.bf16: expected 0 (no such rate) or at least 1e9 FLOP/s"),
    ("base not a string", edit("model", {"base": 7}), [], "model.base"),
    ("bad --set path", None, ["--set", "plan..tp=2"], "empty component"),
    ("--set through a number", None, ["--set", "plan.tp.x=1"], "plan.tp: expected an integer"),
    # training.faults
    ("faults not an object", edit("training.faults", [1, 2]), [], "training.faults"),
    ("mtbf negative", edit("training.faults", {"gpu_mtbf": "-5h"}), [], "training.faults.gpu_mtbf"),
    ("mtbf NaN", edit("training.faults", {"node_mtbf": "NaN h"}), [], "training.faults.node_mtbf"),
    ("straggler fraction > 1", edit("training.faults", {"stragglers": {"fraction": 7}}), [], "training.faults.stragglers.fraction"),
    ("straggler speed 0", edit("training.faults", {"stragglers": {"fraction": 0.1, "speed_factor": 0}}), [], "training.faults.stragglers.speed_factor"),
    ("straggler stage beyond pp", edit("training.faults", {"stragglers": {"stage": 5, "speed_factor": 0.5}}), [], "training.faults.stragglers.stage"),
    ("checkpoint unknown key", edit("training.faults", {"checkpoint": {"every": "1h"}}), [], "training.faults.checkpoint.every"),
    ("checkpoint bandwidth in bits", edit("training.faults", {"checkpoint": {"write_bandwidth": "10Gb"}}), [], "training.faults.checkpoint.write_bandwidth"),
    ("trials huge", edit("training.faults", {"trials": 10**12}), [], "training.faults.trials"),
    ("checkpoint bandwidth 0", edit("training.faults", {"checkpoint": {"write_bandwidth": 0}}), [], "training.faults.checkpoint.write_bandwidth: expected a value between 1e+06"),
    ("fractional token count", edit("training.tokens", 0.5), [], "training.tokens: expected an integer"),
    ("horizon too long", edit("training.faults", {"horizon": "1e300s"}), [], "training.faults.horizon"),
    ("failed link unknown", edit("training.faults", {"failed_links": ["leaf9_spine9"]}), ["--fidelity", "simulate"], "training.faults.failed_links[0]"),
    ("failed link not a string", edit("training.faults", {"failed_links": [{}]}), [], "training.faults.failed_links[0]"),
    # numbers, counts and depth (exit 2 naming the field, never exit 1, a wrap or a signal)
    ("1e309 literal", raw(json.dumps(BASE).replace('"global_batch": 512', '"global_batch": 1e309')), [], "plan.global_batch: a number too large for a double"),
    ("--set 1e309", None, ["--set", "plan.tp=1e309"], "--set plan.tp"),
    ("100k-deep micro_batch", raw(json.dumps(BASE)[:-2].replace('"micro_batch": 4', '"micro_batch": ' + "[" * 100000 + "]" * 100000) + "}}"), [], "nests deeper than 64 levels in plan.micro_batch"),
    ("100k-deep network", raw(json.dumps(BASE).replace('"nodes": 4', '"nodes": 4, "network": ' + '{"a":' * 100000 + "1" + "}" * 100000)), [], "nests deeper than 64 levels in cluster.network"),
    ("micro-batches wrap (2^37)", edit("plan", {"dp": 32, "micro_batch": 1, "global_batch": 2**37}), [], "plan.global_batch: 137438953472 sequences"),
    ("micro-batches wrap (2^36+32)", edit("plan", {"dp": 32, "micro_batch": 1, "global_batch": 2**36 + 32}), [], "micro-batches per step; at most 1073741824"),
    ("degrees overflow", edit("plan", {"tp": 65536, "pp": 65536, "dp": 65536, "global_batch": 512}), [], "exceeds 16777216 GPUs"),
    ("hidden 2^32+64", edit("model", {"base": "gpt-1.7b", "hidden": 4294967360}), [], "model.hidden"),
    ("gpu mtbf of a second", edit("training.faults", {"gpu_mtbf": "1s", "horizon": "1e10s"}), [], "training.faults.gpu_mtbf"),
    ("long unknown choice", edit("plan.schedule", "x" * 100000), [], "plan.schedule: unknown value"),
]


SECRET = "rootsecret:$6$saltsalt$hashhashhash:19000:0:99999:7:::"


def extra_cases(tmp):
    """(name, argv, expected exit, expected substring, substrings that must not appear). Paths that
    are not the JSON they should be, and importers fed nonsense."""
    def write(name, text, mode="w"):
        path = os.path.join(tmp, name)
        with open(path, mode) as f:
            f.write(text)
        return path
    def scenario_with(name, **model):
        d = json.loads(json.dumps(BASE))
        d["model"] = model
        return write(name, json.dumps(d))
    shadow = write("shadow", SECRET + "\n")
    str_file = write("token.json", '"SECRET-TOKEN-0123456789" and more')
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    folder = os.path.join(tmp, "folder")
    os.makedirs(folder)
    llama = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
             "vocab_size": 1000, "max_position_embeddings": 512}
    phi = write("phi.json", json.dumps(dict(llama, model_type="phi3")))
    typed = write("typed.json", json.dumps(dict(llama, num_hidden_layers="SECRET-VALUE")))
    base = write("base.json", json.dumps(BASE))
    cases = []
    for what, path, expect, forbid in [
        ("/etc/shadow-like file", shadow, "malformed JSON at line 1, column 1", ["root", "'r'", "last read"]),
        ("file starting with a JSON string", str_file, "model.hf_config", ["SECRET"]),
        ("/dev/zero", "/dev/zero", "is a character device", []),
        ("a FIFO", fifo, "is a FIFO", []),
        ("a folder", folder, "is a folder", []),
        ("/proc file (st_size 0)", "/proc/self/status", "malformed JSON", ["Name", "State"]),
        ("unknown model_type", phi, 'unknown model_type "phi3"', []),
        ("string where a count goes", typed, "num_hidden_layers: expected an integer, got a string", ["SECRET"]),
    ]:
        cases.append(("hf_config: " + what, [T, "run", scenario_with("hf-" + str(len(cases)) + ".json", hf_config=path),
                      "--fidelity", "estimate"], 2, expect, forbid))
    for what, path, expect in [("/dev/zero", "/dev/zero", "character device"), ("a FIFO", fifo, "FIFO"),
                               ("a folder", folder, "folder"), ("/etc/shadow-like", shadow, "malformed JSON")]:
        cases.append(("--calibration " + what, [T, "run", base, "--fidelity", "estimate", "--calibration", path], 2,
                      expect, ["root"]))
    cases.append(("scenario path is a FIFO", [T, "run", fifo], 2, "is a FIFO", []))
    # A part named by a .json file: read as any input file is (regular files only, content never quoted).
    fifo_json = os.path.join(tmp, "fifo.json")
    os.mkfifo(fifo_json)
    shadow_json = write("shadow.json", SECRET + "\n")
    for what, path, expect in [("a FIFO", fifo_json, "model: " + fifo_json + ": the model path is a FIFO"),
                               ("/etc/shadow-like", shadow_json, "malformed JSON at line 1, column 1")]:
        d = json.loads(json.dumps(BASE))
        d["model"] = path
        cases.append(("model file is " + what, [T, "run", write("mf-" + str(len(cases)) + ".json", json.dumps(d))],
                      2, expect, ["root"]))
    cases.append(("import-megatron --file is a FIFO", [T, "import-megatron", "--gpus", "8", "--file", fifo], 2,
                  "is a FIFO", []))
    cases.append(("import-megatron --file is /dev/zero", [T, "import-megatron", "--gpus", "8", "--file", "/dev/zero"],
                  2, "character device", []))
    cases.append(("sweep base is /dev/zero", [T, "sweep", write("sw1.json", json.dumps(
        {"schema_version": 1, "base": "/dev/zero", "axes": [{"path": "plan.tp", "values": [1]}]})), "--out",
        os.path.join(tmp, "sw1")], 2, "character device", []))
    cases.append(("sweep constraint typo", [T, "sweep", write("sw2.json", json.dumps(
        {"schema_version": 1, "base": BASE, "axes": [{"path": "plan.tp", "values": [1]}],
         "constraints": ["memory.peak_byts < 0.9 * hbm"]})), "--out", os.path.join(tmp, "sw2")], 2,
        'unknown name "memory.peak_byts"', []))
    cases.append(("import-model unknown model_type", [T, "import-model", phi], 2, "model_type", []))
    cases.append(("import-megatron degrees overflow", [T, "import-megatron",
                  "--num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 8 --vocab-size 100 "
                  "--tensor-model-parallel-size 4294967296 --pipeline-model-parallel-size 4294967296"], 2,
                  "--tensor-model-parallel-size: must be at most 16777216", []))
    long_str = write("long.json", json.dumps("SECRET" * 1000))
    cases.append(("cluster file holding one long string", [T, "import-megatron",
                  "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 8 --vocab-size 100",
                  "--cluster", long_str], 2, "is not a valid preset name", ["SECRET" * 8]))
    cases.append(("import-megatron --file of a secret", [T, "import-megatron", "--file", shadow], 2,
                  "--num-layers: missing", ["saltsalt"]))
    # Goodput with a GPU failing every minute over 1e10 s: bounded (closed form, with a note).
    storm = json.loads(json.dumps(BASE))
    storm["training"] = {"faults": {"gpu_mtbf": "60s", "horizon": "1e10s", "trials": 100000}}
    cases.append(("goodput storm is bounded", [T, "run", write("storm.json", json.dumps(storm)), "--fidelity",
                  "estimate"], 0, "", []))
    # export-chakra of 10^9 micro-batches: refused before any work (the estimate answers it).
    huge = json.loads(json.dumps(BASE))
    huge["plan"] = {"dp": 32, "micro_batch": 1, "global_batch": 32 * 10**9}
    huge_path = write("huge.json", json.dumps(huge))
    cases.append(("export-chakra of 1e9 micro-batches", [T, "export-chakra", huge_path, "--out",
                  os.path.join(tmp, "chakra")], 3, "beyond the 5e+05 export-chakra plays", []))
    cases.append(("estimate of 1e9 micro-batches", [T, "run", huge_path, "--fidelity", "estimate"], 0, "", []))
    # A plan far out of memory is not played by the simulate tier (it took 81 s): exit 3 at once.
    cases.append(("simulate of a plan that cannot run", [T, "run", os.path.join(S, "default.json"), "--fidelity",
                  "simulate", "--set", "model.seq_len=16777216", "--set", "plan.cp=64", "--set", "plan.dp=1",
                  "--set", "cluster.nodes=512"], 3, "simulate tier skipped: the plan cannot run: out of memory", []))
    # Expert groups larger than a stage's ranks: an infeasible plan with its reason, in both tiers.
    for fidelity in ("estimate", "simulate"):
        cases.append((f"expert_tp beyond the stage's ranks ({fidelity})", [T, "run", os.path.join(S, "default.json"),
                      "--fidelity", fidelity, "--set", "model=mixtral-8x7b", "--set", "plan.expert_tp=4096"], 3,
                      "plan.expert_tp x plan.ep = 4096 x 1 must divide plan.tp x plan.cp x plan.dp", []))
    # 65,536 MoE layers under ZeRO-3 with a split backward: each W pass leaves its reduce-scatters
    # queued behind it, thousands deep; the answer (out of memory) still comes at once.
    deep = {"schema_version": 1, "name": "deep", "model": {"base": "mixtral-8x7b", "layers": 65536},
            "cluster": {"base": "dgx-a100-superpod", "nodes": 16},
            "plan": {"cp": 64, "ep": 2, "expert_tp": 2, "micro_batch": 1, "schedule": "zb-h2", "zero_stage": 3,
                     "global_batch": 64}}
    cases.append(("65,536 layers with a backlog of reduce-scatters", [T, "run", write("deep.json", json.dumps(deep)),
                  "--fidelity", "estimate"], 3, "out of memory: pipeline stage 0 needs", []))
    # A search with no plan that runs is an infeasible answer with its reason.
    cases.append(("plan over a prime GPU count", [T, "plan", "--model", "gpt-1.7b", "--cluster", "dgx-a100-superpod",
                  "--gpus", "7", "--global-batch", "64"], 3, "no feasible plan: no plan to search", []))
    cases.append(("plan where nothing fits", [T, "plan", "--model", "gpt-1.7b", "--cluster", "dgx-a100-superpod",
                  "--gpus", "8", "--global-batch", "8", "--seq", "4194304", "--json"], 3, '"reason": "none of the', []))
    cases.append(("collective --trace /dev/full", [T, "collective", "--cluster", "dgx-a100-superpod", "--ranks", "16",
                  "--sizes", "1MiB", "--trace", "/dev/full"], 2, '--trace: "/dev/full": cannot write', []))
    cases.append(("collective --group with a trailing comma", [T, "collective", "--cluster", "dgx-a100-superpod",
                  "--group", "0,"], 2, "--group: a GPU id is missing after the last comma", []))
    cases.append(("collective sizes x ranks", [T, "collective", "--cluster", "dgx-h100-superpod", "--ranks", "4096",
                  "--sizes", "1:4096:+1"], 2, "--sizes: 4096 sizes over 4096 ranks", []))
    # Published records whose text holds numbers beyond double's or int's range: read as absent or
    # out of range, never an internal error; a measured figure of inf is skipped with its name.
    training = {"id": "r", "source": "s", "model": {"name": "GPT 1.7B", "params_b": 1.7, "layers": 24, "hidden": 2304,
                "heads": 24, "seq_len": 2048, "vocab": 51200},
                "hardware": {"gpu": "A100 80GB", "num_gpus": 32, "gpus_per_node": 8,
                             "inter_node": "99999999999x Mellanox 200Gb/s HDR"},
                "parallel": {"tp": 1, "pp": 1, "dp": 32, "pipeline_schedule": "interleaved 1F1B (v=99999999999999999999)"},
                "training": {"global_batch": 512, "micro_batch": 4, "precision": "fp16"},
                "measured": {"throughput_tokens_per_s": 297000}}
    nccl = {"id": "n", "source": "s", "model": {"name": "n/a"}, "hardware": {"gpu": "H100 SXM", "num_gpus": 8},
            "parallel": {}, "training": {}, "measured": {"collective": "all_reduce", "peak_busbw_GBps": "~1e400",
                                                         "peak_algbw_GBps": 1e308}}
    records = write("records.json", json.dumps([training, nccl]))
    cases.append(("validate: numbers past double and int", [T, "validate", "--published", records], 0,
                  "interleaving depth v=99999999999999999999: expected 1 to 1024", ["internal error"]))
    cases.append(("validate: a measured figure of inf", [T, "validate", "--published", records], 0,
                  "measured algbw_bytes_per_s is inf: expected a positive finite figure", ["internal error"]))
    cases += round_two_cases(tmp, write, base)
    for args, expect in [(["--lr", "nan"], "--lr: expected a finite number"), (["--hidden", "4294967360"], "--hidden: Value 4294967360 not in range"),
                         (["--lr", "5"], "--lr must be in (0, 1]")]:
        cases.append(("train " + " ".join(args), [T, "train"] + args + ["--steps", "1"], 2, expect, []))
    return cases


def round_two_cases(tmp, write, base):
    """Sweep files and rows, calibrations, outputs that are inputs, logs, share, train."""
    cases = []
    sweep = {"schema_version": 1, "name": "s", "base": BASE, "axes": [{"path": "plan.micro_batch", "values": [1, 2, 4]}],
             "constraints": ["memory.peak_bytes < 0.9 * hbm"]}
    sweep_path = write("s2.json", json.dumps(sweep))
    prefix = os.path.join(tmp, "s2")
    subprocess.run([T, "sweep", sweep_path, "--out", prefix], capture_output=True, timeout=120)
    header = open(prefix + ".rows.jsonl").read().splitlines()[0]
    # A rows line nested 100,000 deep is a damaged row, not a stack overflow.
    write("m.rank0of1.jsonl", header + "\n" + '{"index":1,"x":' + "[" * 100000 + "]" * 100000 + "}\n")
    cases.append(("sweep-merge of a row nested 100,000 deep", [T, "sweep-merge", os.path.join(tmp, "m")], 0,
                  "merged 0 rows", []))
    # Resumed rows of the wrong types are read with defaults; one whose index is not a plan of the
    # sweep (and every row after it) is dropped, not ranked as the best plan.
    write("r.rows.jsonl", header + "\n" + json.dumps({"index": 0, "feasible": True, "meets_constraints": True,
          "objective": 1, "plan": {"tp": "x", "zero_stage": "two"}}) + "\n" + json.dumps({"index": 10**15,
          "feasible": True, "meets_constraints": True, "objective": 1e30, "model": "fake"}) + "\n")
    cases.append(("sweep --resume over rows of the wrong types", [T, "sweep", sweep_path, "--out",
                  os.path.join(tmp, "r"), "--resume"], 0, "3 plans", ["fake", "internal error"]))
    write("f.rank0of1.jsonl", '{"trainsim_sweep":{"fingerprint":5}}\n')
    cases.append(("sweep-merge, a fingerprint that is a number", [T, "sweep-merge", os.path.join(tmp, "f")], 2,
                  "no sweep header", []))
    cases.append(("sweep-merge of an empty PREFIX", [T, "sweep-merge", ""], 2, "PREFIX: \"\" names no file", []))
    cases.append(("sweep-merge of a missing ROWS file", [T, "sweep-merge", prefix, os.path.join(tmp, "no.jsonl")], 2,
                  "no.jsonl\": not found", []))
    def sweep_case(name, axes, expect, code=2, constraints=None):
        spec = dict(sweep, axes=axes, constraints=constraints or sweep["constraints"])
        out = os.path.join(tmp, "sw_" + str(len(cases)))
        cases.append((name, [T, "sweep", write("sw_" + str(len(cases)) + ".json", json.dumps(spec)), "--out", out],
                      code, expect, []))
    sweep_case("sweep axis path typo", [{"path": "plan.micro_batch", "values": [1]},
               {"path": "plan.nonexistent", "values": [2]}], 'axes[1].path: "plan.nonexistent" is not a scenario field')
    sweep_case("sweep axis value twice", [{"path": "plan.zero_stage", "values": [1, 1]}], "axes[0]: 1 is listed twice")
    sweep_case("sweep axes on one path", [{"path": "plan.micro_batch", "values": [1]},
               {"path": "plan.micro_batch", "values": [2]}], 'axes[1].path: "plan.micro_batch" is already varied by axes[0]')
    sweep_case("sweep value before a degrees axis", [{"path": "cluster.nodes", "values": [0, 4]},
               {"degrees": ["plan.tp", "plan.pp", "plan.dp"]}], "invalid", code=0)
    sweep_case("sweep constraint of NaN", [{"path": "plan.micro_batch", "values": [1, 2, 4]}],
               "3 outside constraints", code=0, constraints=["step_time_s*1e308*1e308 - step_time_s*1e308*1e308"])
    # Calibration fields that every reader takes as given.
    null_device = write("cal_dev.json", json.dumps({"format": "trainsim-calibration", "version": 1, "device": None}))
    cases.append(("calibration device null", [T, "run", base, "--fidelity", "estimate", "--calibration", null_device],
                  2, "calibration.device: expected the device's name, got null", []))
    null_bw = write("cal_bw.json", json.dumps({"format": "trainsim-calibration", "version": 1,
                                               "memory_bandwidth_bytes_per_s": None}))
    cases.append(("calibration bandwidth null is absent", [T, "run", base, "--fidelity", "estimate", "--calibration",
                  null_bw], 0, "", ["achieved bandwidth"]))
    # An output that is an input is refused before the input is read, let alone replaced.
    cases.append(("run --trace onto its scenario", [T, "run", base, "--trace", base], 2,
                  "--trace: cannot write", []))
    chakra = os.path.join(tmp, "et_out")
    os.makedirs(os.path.join(chakra, "et.1.json"))
    cases.append(("export-chakra onto a folder checks every file first", [T, "export-chakra", base, "--set", "plan.pp=2",
                  "--set", "plan.dp=16", "--out", chakra], 2, "et.1.json\": it is a folder", []))
    big_log = write("big_all_reduce_perf.log", "# nThread 65536 nGpus 65536 minBytes 8 maxBytes 8\n#\n"
                    "           8            2 float sum -1 24.3 0.0003 0.0006 0 24.3 0.0003 0.0006 0\n")
    cases.append(("nccl-tests log of 2^32 ranks", [T, "import-nccl-tests", big_log], 2,
                  'expected counts of at least 1, at most 16777216 ranks in all', []))
    share = [os.path.join(S, "faults", f) for f in ("share_job_a.json", "fat_tree_failed_spine_link.json")]
    cases.append(("share: a later job's failed links", [T, "share"] + share + ["--nodes", "300"], 2,
                  "failed or degraded links of the shared fabric are given in the first scenario", []))
    cases.append(("share: a fabric of 100,000 nodes", [T, "share"] + share[:1] + ["--nodes", "100000"], 2,
                  "--nodes", []))
    many = json.loads(json.dumps(BASE))
    many["plan"] = {"tp": 1, "pp": 8, "dp": 1, "micro_batch": 1, "global_batch": 100000, "schedule": "1f1b"}
    preset_dir = os.path.join(tmp, "presets")
    os.makedirs(os.path.join(preset_dir, "models", "folder.json"), exist_ok=True)
    base = write("preset_base.json", json.dumps(BASE))
    cases.append(("a model preset that is a folder", [T, "run", base, "--presets", preset_dir, "--set", "model=folder"], 2,
                  "folder.json is not a regular file (a model preset is a JSON file)", []))
    cases.append(("a preset name in Cyrillic is quoted as written", [T, "run", base, "--set", "model=модель"], 2,
                  '"модель" is not a valid preset name', []))
    cases.append(("run --trace of 7.2 million trace events", [T, "run", write("many.json", json.dumps(many)), "--trace",
                  os.path.join(tmp, "many.trace")], 2, "--trace: 1e+05 micro-batches x 8 pipeline stages x 1 chunks x 2 passes = 7.2e+06 trace events", []))
    cases.append(("validate: --published and --backend", [T, "validate", "--published", base, "--backend", "cpu"], 2,
                  "excludes", []))
    tiny = ["--steps", "1", "--layers", "1", "--hidden", "32", "--heads", "2", "--seq", "16", "--global-batch", "2",
            "--micro-batch", "1"]
    cases.append(("train --corpus /dev/zero", [T, "train"] + tiny + ["--corpus", "/dev/zero"], 2,
                  '--corpus: "/dev/zero" is not a regular file', []))
    cases.append(("train --corpus shorter than a sequence", [T, "train"] + tiny + ["--corpus", write("c.txt", "abc")], 2,
                  "is shorter than one sequence", []))
    cases.append(("calibrate --gemm-shapes out of range", [T, "calibrate", "--gemm-shapes", "100000x100000x100000",
                  "--check-only", "--quick", "--out", os.path.join(tmp, "g.json")], 2,
                  "each of M, N, K between 1 and 65536", []))
    return cases


def run_extra(tmp):
    passed = failed = 0
    for name, argv, code, expect, forbid in extra_cases(tmp):
        start = time.monotonic()
        try:
            p = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=30)
        except subprocess.TimeoutExpired:
            failed += 1
            print(f"FAIL {name}: no answer within 30 s")
            continue
        wall = time.monotonic() - start
        out = p.stdout + p.stderr
        problems = []
        if p.returncode != code:
            problems.append(f"exit {p.returncode}, expected {code}")
        if expect and expect not in out:
            problems.append(f"output lacks {expect!r}")
        problems += [f"output quotes {f!r}" for f in forbid if f in out]
        if len(p.stderr) > 2000:
            problems.append(f"{len(p.stderr)} bytes of stderr")
        if wall > 10.0 * WALL_SCALE:
            problems.append(f"took {wall:.2f} s")
        if problems:
            failed += 1
            print(f"FAIL {name}: {'; '.join(problems)}\n  stderr: {p.stderr.strip()[:300]}")
        else:
            passed += 1
    return passed, failed


def main():
    tmp = tempfile.mkdtemp()
    passed = failed = 0
    cyclic = os.path.join(tmp, "models")
    os.makedirs(cyclic)
    json.dump({"base": "cyc-b"}, open(os.path.join(cyclic, "cyc-a.json"), "w"))
    json.dump({"base": "cyc-a"}, open(os.path.join(cyclic, "cyc-b.json"), "w"))
    cases = CASES + [("cyclic base", edit("model", "cyc-a"), [], "cyclic")]
    for name, gen, args, expect in cases:
        path = os.path.join(tmp, "case.json")
        if name == "100 MB file":
            with open(path, "w") as f:
                f.write(" " * (100 * 1024 * 1024))
        elif gen is None:
            with open(path, "w") as f:
                json.dump(BASE, f)
        else:
            with open(path, "w", encoding="latin-1") as f:
                f.write(gen())
        start = time.monotonic()
        p = subprocess.run([T, "run", path, "--fidelity", "estimate"] + args, capture_output=True, text=True,
                           errors="replace", timeout=30)
        wall = time.monotonic() - start
        rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        problems = []
        if p.returncode != 2:
            problems.append(f"exit {p.returncode}, expected 2")
        if expect not in p.stderr:
            problems.append(f"message lacks {expect!r}")
        if wall > 1.0 * WALL_SCALE:
            problems.append(f"took {wall:.2f} s")
        if rss_mib > 1024:
            problems.append(f"peak RSS {rss_mib:.0f} MiB")
        if problems:
            failed += 1
            print(f"FAIL {name}: {'; '.join(problems)}\n  stderr: {p.stderr.strip()[:300]}")
        else:
            passed += 1
    p2, f2 = run_extra(tmp)
    passed += p2
    failed += f2
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

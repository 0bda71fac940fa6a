#!/usr/bin/env python3
"""Kernel-level facts of one GPU, measured through PyTorch: what the compute model's parameters
describe (docs/compute-model.md), at the shapes a transformer layer runs.

  gemm       cuBLAS bf16 GEMMs as nn.Linear runs them (forward X.W^T, input gradient dY.W,
             weight gradient dY^T.X): square sizes, transformer layer shapes over token counts
             (the small-M regime included), misaligned K, grouped expert GEMMs; fp8 e4m3 through
             torch._scaled_mm
  attention  PyTorch's fused attention kernels (FlashAttention-2 and cuDNN) forward and backward
             separately: head dim 64/128/256, causal or not, 512-16k tokens a sequence at 16k
             tokens a batch (the FlashAttention papers' benchmark setting), and long sequences
  memory     streaming kernels (copy, elementwise, norms, softmax, casts, amax) in bytes/s
  clocks     one large GEMM in a burst and then sustained, with the SM clock and power sampled
  duty       the GEMM's rate when copies run between its calls (tensor cores busy 25-100% of the
             time, as in a training step's mix), with the clock and power sampled
  moe        the kernels a MoE layer runs beside its expert GEMMs (router softmax and top-k, the
             sort of tokens by expert, the gather into expert order and the weighted scatter-add
             back) and grouped GEMMs of fine-grained experts (64-256 experts, 128-2048 rows each)
  fa2pkg     Dao's flash_attn package, where installed, at the FlashAttention-2 paper's settings,
             forward and backward apart: how PyTorch's build of the kernel compares
  launch     the GPU time of a one-element kernel (graph replay) and the host time to issue one
  optimizer  fused AdamW per parameter

Each measurement is one JSON line on stdout (and in --out), written as soon as it is taken, so a
run stopped early keeps what it measured. Timing: CUDA events around a batch of calls (CUDA graph
replay for GEMMs and the small kernels), several batches, the median; inputs rotate over buffers
larger than the L2 cache so that repeated calls do not measure the cache; random data, never
zeros. --smoke runs tiny sizes on the CPU to check the script itself."""
import argparse, math, statistics, time

import torch
import torch.nn.functional as F


from measure_common import ensure_sdpa, run_context

ensure_sdpa()

p = argparse.ArgumentParser()
p.add_argument("--out", default=None)
p.add_argument("--sections", default="clocks,duty,launch,memory,attention,gemm,fp8,grouped,moe,fa2pkg,optimizer")
p.add_argument("--budget-s", type=float, default=240.0,
               help="the whole run's seconds, shared over the sections (SHARES); a section past its end stops")
p.add_argument("--smoke", action="store_true")
args = p.parse_args()

SMOKE, DEV, LOG = run_context(args)
START, emit = LOG.start, LOG.emit
L2_BYTES = 60 << 20
# Each section's share of --budget-s; a section ends at its cumulative deadline.
SHARES = {"clocks": 0.1, "duty": 0.15, "launch": 0.03, "memory": 0.08, "attention": 0.25, "gemm": 0.38, "fp8": 0.12, "grouped": 0.05,
          "moe": 0.1, "fa2pkg": 0.08, "optimizer": 0.09}
DEADLINE = [float("inf")]


class OutOfBudget(BaseException):  # not caught by the per-point handlers
    pass



def sync():
    if not SMOKE:
        torch.cuda.synchronize()


def timed_batches(run_batch, calls, batches=5):
    """Median seconds per call over `batches` batches of `calls` calls each."""
    out = []
    for _ in range(batches):
        if SMOKE:
            t0 = time.perf_counter()
            run_batch()
            out.append((time.perf_counter() - t0) / calls)
        else:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            run_batch()
            e.record()
            e.synchronize()
            out.append(s.elapsed_time(e) / 1e3 / calls)
    return statistics.median(out), (max(out) - min(out)) / statistics.median(out)


def bench(fns, target_s=0.03, graph=False, batches=5):
    """fns: callables cycling over rotated inputs. Returns (seconds per call, spread, timing)."""
    if time.time() > DEADLINE[0]:
        raise OutOfBudget()
    for f in fns:
        f()
    sync()
    t0 = time.perf_counter()
    for f in fns:
        f()
    sync()
    one = max((time.perf_counter() - t0) / len(fns), 1e-7)
    calls = max(len(fns), min(2000, int(target_s / one)))
    calls = int(math.ceil(calls / len(fns))) * len(fns)
    seq = [fns[i % len(fns)] for i in range(calls)]
    if graph and not SMOKE:
        try:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for f in fns:
                    f()
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for f in seq:
                    f()
            g.replay()
            sync()
            return timed_batches(g.replay, calls, batches) + ("graph",)
        except Exception as ex:  # fall back to eager
            sync()
            emit(section="note", what="graph capture failed, eager timing", error=str(ex)[:200])

    def run():
        for f in seq:
            f()
    return timed_batches(run, calls, batches) + ("eager",)


def rotations(bytes_per_set):
    return max(1, min(8, int(math.ceil(3 * L2_BYTES / max(bytes_per_set, 1)))))


def rnd(*shape, dtype=torch.bfloat16):
    return torch.randn(*shape, device=DEV, dtype=torch.float32).to(dtype)


def device_info():
    info = {"torch": torch.__version__, "smoke": SMOKE}
    if not SMOKE:
        pr = torch.cuda.get_device_properties(0)
        info.update(name=pr.name, sm_count=pr.multi_processor_count, total_memory=pr.total_memory,
                    capability=f"{pr.major}.{pr.minor}", cuda=torch.version.cuda,
                    cudnn=torch.backends.cudnn.version(),
                    l2_bytes=getattr(pr, "L2_cache_size", None))
    for mod in ("flash_attn", "flash_attn_interface", "transformer_engine", "torchao"):
        try:
            m = __import__(mod)
            info[mod] = getattr(m, "__version__", "present")
        except Exception:
            info[mod] = None
    emit(section="device", **info)


# --- clocks -------------------------------------------------------------------------------------
def clocks():
    """One 8192^3 bf16 GEMM the way a kernel benchmark times it (a few calls after a short
    warm-up), then the same GEMM back to back for several seconds as a training step keeps the
    tensor cores busy, with the SM clock and power sampled by nvidia-smi meanwhile."""
    import subprocess
    if SMOKE:
        emit(section="clocks", skipped="no GPU")
        return
    m = 8192
    a, w = rnd(m, m), rnd(m, m)
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu",
                            "--format=csv,noheader,nounits", "-lms", "100"], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)  # idle samples first
    for _ in range(3):
        F.linear(a, w)
    sync()
    s_, e_ = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t_burst = []
    for _ in range(10):
        s_.record(); F.linear(a, w); e_.record(); e_.synchronize()
        t_burst.append(s_.elapsed_time(e_) / 1e3)
    t0 = time.time()
    windows = []
    while time.time() - t0 < 8.0:
        s_.record()
        for _ in range(50):
            F.linear(a, w)
        e_.record(); e_.synchronize()
        windows.append((round(time.time() - t0, 2), s_.elapsed_time(e_) / 1e3 / 50))
    time.sleep(0.3)
    smi.terminate()
    samples = [l.strip() for l in smi.communicate()[0].splitlines() if l.strip()]
    fl = 2.0 * m ** 3
    emit(section="clocks", what="8192^3 bf16, 10 calls after 3 warm-ups", flop_per_s=fl / statistics.mean(t_burst),
         first_call_flop_per_s=fl / t_burst[0])
    emit(section="clocks", what="8192^3 bf16 back to back for 8 s, 50-call windows",
         windows=[(t, fl / s) for t, s in windows])
    emit(section="clocks", what="nvidia-smi samples: timestamp, SM MHz, W, C", samples=samples)


# --- duty ---------------------------------------------------------------------------------------
def duty():
    """An 8192^3 bf16 GEMM with k copies of 512 MiB between its calls, each mix sustained for
    3 s: the GEMM's time in the mix is the mix's time less the copies' time alone, so its rate
    against the share of time the tensor cores are busy says how the power limit's clock
    depends on what a step runs beside its GEMMs (clock_*_gemm_bf16_sustained is the k = 0
    end)."""
    import subprocess
    if SMOKE:
        emit(section="duty", skipped="no GPU")
        return
    m = 8192
    a, w = rnd(m, m), rnd(m, m)
    src = rnd(1 << 28)
    dst = torch.empty_like(src)
    fl = 2.0 * m ** 3
    s_, e_ = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def sustained(fn, seconds, skip_s):
        t0, per = time.time(), []
        while time.time() - t0 < seconds:
            s_.record()
            for _ in range(10):
                fn()
            e_.record()
            e_.synchronize()
            if time.time() - t0 >= skip_s:
                per.append(s_.elapsed_time(e_) / 1e3 / 10)
        return statistics.median(per)

    for k in (0, 1, 2, 4, 8, 16):
        def copies(k=k):
            for _ in range(k):
                dst.copy_(src)

        def mix(k=k):
            F.linear(a, w)
            copies()
        smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                                "-lms", "100"], stdout=subprocess.PIPE, text=True)
        t_mix = sustained(mix, 3.0, 1.0)
        smi.terminate()
        samples = [l.split(",") for l in smi.communicate()[0].splitlines() if l.strip()]
        tail = samples[len(samples) // 3:] or samples
        t_copies = sustained(copies, 1.0, 0.3) if k else 0.0
        t_gemm = t_mix - t_copies
        emit(section="duty", copies_per_gemm=k, mix_s=t_mix, copies_alone_s=t_copies, gemm_s=t_gemm,
             tensor_busy_share=t_gemm / t_mix, gemm_flop_per_s=fl / t_gemm,
             sm_mhz_median=statistics.median(float(x[0]) for x in tail),
             power_w_median=statistics.median(float(x[1]) for x in tail))


# --- launch -------------------------------------------------------------------------------------
def launch():
    x = torch.zeros(1, device=DEV)
    n = 200 if SMOKE else 2000
    sec, spread, how = bench([lambda: x.add_(1.0)], target_s=0.02, graph=True)
    emit(section="launch", what="one-element kernel, GPU time per kernel", s=sec, spread=spread, timing=how)
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        x.add_(1.0)
    t_issue = (time.perf_counter() - t0) / n
    sync()
    emit(section="launch", what="eager host issue time per kernel (x.add_)", s=t_issue, timing="host clock")
    a, w = rnd(256, 1024), rnd(1024, 1024)
    for _ in range(10):  # cuBLAS handle and kernel selection out of the timing
        F.linear(a, w)
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        F.linear(a, w)
    t_issue = (time.perf_counter() - t0) / n
    sync()
    emit(section="launch", what="eager host issue time per F.linear", s=t_issue, timing="host clock")


# --- memory-bound -------------------------------------------------------------------------------
def memory():
    n = (1 << 16) if SMOKE else (1 << 28)  # 256 Mi elements: 512 MiB of bf16
    rows = 8192 if not SMOKE else 64
    x, y = rnd(n // rows, rows), rnd(n // rows, rows)
    w = rnd(rows)
    b = rnd(rows)
    xf = torch.randn(n // rows, rows, device=DEV)
    dst = torch.empty_like(x)
    e2 = 2  # bf16 bytes
    cases = [
        ("copy", lambda: dst.copy_(x), 2 * e2),
        ("add", lambda: torch.add(x, y, out=dst), 3 * e2),
        ("gelu_tanh", lambda: F.gelu(x, approximate="tanh"), 2 * e2),
        ("silu_mul", lambda: F.silu(x) * y, 5 * e2),  # two kernels: silu (r+w), mul (2r+w)
        ("layer_norm", lambda: F.layer_norm(x, (rows,), w, b), 2 * e2),
        ("rms_norm", lambda: F.rms_norm(x, (rows,), w) if hasattr(F, "rms_norm") else None, 2 * e2),
        ("softmax", lambda: torch.softmax(x, dim=-1), 2 * e2),
        ("dropout", lambda: F.dropout(x, 0.1, True), 2 * e2 + 1),
        ("cast_fp32_to_bf16", lambda: xf.to(torch.bfloat16), 4 + 2),
        ("amax", lambda: x.abs().amax(), 2 * e2 + 2),  # abs (r+w) then amax (r)
        ("transpose_contiguous", lambda: x.t().contiguous(), 2 * e2),
    ]
    if hasattr(torch, "float8_e4m3fn"):
        cases.append(("cast_bf16_to_fp8", lambda: x.to(torch.float8_e4m3fn), e2 + 1))
    for name, fn, bytes_per_el in cases:
        try:
            sec, spread, how = bench([fn], target_s=0.05, graph=False)
            emit(section="memory", op=name, elements=n, bytes=n * bytes_per_el, s=sec,
                 bytes_per_s=n * bytes_per_el / sec, spread=spread, timing=how)
        except Exception as ex:
            emit(section="memory", op=name, error=str(ex)[:200])
    del x, y, xf, dst
    # The same kernels small: where the fixed cost per kernel shows.
    for m in ([1 << 12, 1 << 16] if SMOKE else [1 << 14, 1 << 18, 1 << 20, 1 << 22, 1 << 24]):
        a, c = rnd(m), torch.empty(m, device=DEV, dtype=torch.bfloat16)
        sets = [(rnd(m), torch.empty(m, device=DEV, dtype=torch.bfloat16)) for _ in range(rotations(4 * m))]
        fns = [(lambda s=s: s[1].copy_(s[0])) for s in sets]
        sec, spread, how = bench(fns, target_s=0.02, graph=True)
        emit(section="memory", op="copy", elements=m, bytes=4 * m, s=sec, bytes_per_s=4 * m / sec,
             spread=spread, timing=how)


# --- GEMM ---------------------------------------------------------------------------------------
def gemm_point(m, n, k, pass_, dtype=torch.bfloat16, tag=""):
    """pass_: fwd (X[m,k] . W[n,k]^T), dgrad (dY[m,k] . W[k,n]), wgrad (dY[k,m]^T . X[k,n])."""
    per_set = 2 * (m * k + n * k + m * n)
    sets = []
    for _ in range(rotations(per_set)):
        if pass_ == "fwd":
            sets.append((rnd(m, k), rnd(n, k)))
        elif pass_ == "dgrad":
            sets.append((rnd(m, k), rnd(k, n)))
        else:
            sets.append((rnd(k, m), rnd(k, n)))
    if pass_ == "fwd":
        fns = [(lambda s=s: F.linear(s[0], s[1])) for s in sets]
    elif pass_ == "dgrad":
        fns = [(lambda s=s: torch.matmul(s[0], s[1])) for s in sets]
    else:
        fns = [(lambda s=s: torch.matmul(s[0].t(), s[1])) for s in sets]
    sec, spread, how = bench(fns, target_s=0.03, graph=True)
    flops = 2.0 * m * n * k
    emit(section="gemm", dtype="bf16", pass_=pass_, m=m, n=n, k=k, s=sec, flop_per_s=flops / sec,
         spread=spread, timing=how, tag=tag, rotations=len(sets))
    del sets, fns


def gemm():
    sq = [256, 512] if SMOKE else [512, 1024, 2048, 4096, 6144, 8192, 12288, 16384]
    for s in sq:
        gemm_point(s, s, s, "fwd", tag="square")
    # Transformer layer linears: (N, K) of QKV, attention-out, MLP up, MLP down for hidden h.
    hs = [64] if SMOKE else [2048, 4096, 8192]
    ts = [64, 256] if SMOKE else [512, 2048, 8192, 32768]
    for h in hs:
        for name, (nn_, kk) in (("qkv", (3 * h, h)), ("proj", (h, h)), ("up", (4 * h, h)), ("down", (h, 4 * h))):
            for t in ts:
                if h == 8192 and t == 32768 and name in ("up", "down"):
                    t = 16384  # 2 GiB outputs: the same regime at half the memory
                gemm_point(t, nn_, kk, "fwd", tag=f"h{h}_{name}")
                gemm_point(t, kk, nn_, "dgrad", tag=f"h{h}_{name}")
                gemm_point(nn_, kk, t, "wgrad", tag=f"h{h}_{name}")
    # Small M (decode-like micro-batches, MoE experts' rows): forward only.
    for h in ([64] if SMOKE else [4096, 8192]):
        for t in ([16, 32] if SMOKE else [64, 128, 256]):
            gemm_point(t, 4 * h, h, "fwd", tag=f"h{h}_up_smallm")
            gemm_point(t, h, h, "fwd", tag=f"h{h}_proj_smallm")
    # Misaligned K (not a multiple of 8 bf16 elements) against its aligned neighbour; N = 2112.
    if not SMOKE:
        for k in (10922, 10944):
            gemm_point(4096, 4096, k, "fwd", tag="align")
        for t in (128, 4096):
            gemm_point(t, 2112, 7168, "fwd", tag="n2112")


def fp8():
    if SMOKE or not hasattr(torch, "_scaled_mm"):
        emit(section="fp8", skipped="no torch._scaled_mm or no GPU")
        return
    one = torch.tensor(1.0, device=DEV)
    shapes = [(s, s, s, "square") for s in (2048, 4096, 8192, 16384)]
    for h in (4096, 8192):
        for t in (512, 2048, 8192):
            shapes += [(t, 3 * h, h, f"h{h}_qkv"), (t, 4 * h, h, f"h{h}_up"), (t, h, 4 * h, f"h{h}_down")]
    for m, n, k, tag in shapes:
        try:
            sets = []
            for _ in range(rotations(m * k + n * k + 2 * m * n)):
                a = rnd(m, k).to(torch.float8_e4m3fn)
                b = rnd(n, k).to(torch.float8_e4m3fn).t()  # column-major K x N, as cuBLASLt needs
                sets.append((a, b))
            fns = [(lambda s=s: torch._scaled_mm(s[0], s[1], scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
                   for s in sets]
            sec, spread, how = bench(fns, target_s=0.03, graph=True)
            emit(section="gemm", dtype="fp8_e4m3", pass_="fwd", m=m, n=n, k=k, s=sec,
                 flop_per_s=2.0 * m * n * k / sec, spread=spread, timing=how, tag=tag, rotations=len(sets))
        except Exception as ex:
            emit(section="gemm", dtype="fp8_e4m3", m=m, n=n, k=k, error=str(ex)[:300])
            return


def grouped():
    gm = getattr(torch, "_grouped_mm", None)
    if SMOKE or gm is None:
        emit(section="grouped", skipped="no torch._grouped_mm or no GPU")
        return
    for experts, rows, n, k in ((8, 512, 28672, 4096), (8, 2048, 28672, 4096), (8, 4096, 4096, 14336),
                                (32, 256, 4096, 2048), (32, 1024, 4096, 2048), (16, 1024, 2048, 7168)):
        try:
            x = rnd(experts * rows, k)
            w = rnd(experts, n, k).transpose(-2, -1)  # [E, K, N] as a transposed view
            offs = torch.arange(rows, experts * rows + 1, rows, device=DEV, dtype=torch.int32)
            fn = lambda: gm(x, w, offs=offs, out_dtype=torch.bfloat16)
            sec, spread, how = bench([fn], target_s=0.03, graph=True)
            emit(section="gemm", dtype="bf16", pass_="fwd", grouped=experts, m=rows, n=n, k=k, s=sec,
                 flop_per_s=2.0 * experts * rows * n * k / sec, spread=spread, timing=how, tag="grouped")
        except Exception as ex:
            emit(section="grouped", experts=experts, rows=rows, n=n, k=k, error=str(ex)[:300])
            return


# --- MoE ----------------------------------------------------------------------------------------
def moe():
    """What a MoE layer runs besides its expert GEMMs, at T tokens of hidden h, E experts, top-k:
    router softmax + top-k over [T, E] fp32 logits, the stable sort of the T*k expert ids (the
    permutation), the gather of T*k token rows into expert order, the weighted scatter-add of the
    T*k expert outputs back to T rows; and grouped GEMMs of fine-grained experts."""
    t_tok = 1024 if SMOKE else 16384
    for h, e, topk in ((64, 8, 2),) if SMOKE else ((4096, 8, 2), (4096, 64, 8), (7168, 256, 8)):
        try:
            logits = torch.randn(t_tok, e, device=DEV)
            x = rnd(t_tok, h)
            w, idx = torch.topk(torch.softmax(logits, -1), topk, dim=-1)
            flat = idx.reshape(-1)
            order = torch.sort(flat, stable=True)[1]
            src_rows = order // topk
            y = rnd(t_tok * topk, h)
            out = torch.zeros(t_tok, h, device=DEV, dtype=torch.bfloat16)
            wt = w.reshape(-1)[order].to(torch.bfloat16).unsqueeze(1)
            cases = [
                ("router_softmax_topk", lambda: torch.topk(torch.softmax(logits, -1), topk, dim=-1), t_tok * e * 4),
                ("permute_sort", lambda: torch.sort(flat, stable=True), t_tok * topk * 8 * 2),
                ("permute_gather", lambda: x.index_select(0, src_rows), 2 * t_tok * topk * h * 2),
                ("unpermute_scatter_add", lambda: out.index_add_(0, src_rows, y * wt),
                 (3 * t_tok * topk + 2 * t_tok) * h * 2),
            ]
            for name, fn, nbytes in cases:
                sec, spread, how = bench([fn], target_s=0.03, graph=False)
                emit(section="moe", op=name, tokens=t_tok, hidden=h, experts=e, topk=topk, s=sec,
                     bytes=nbytes, bytes_per_s=nbytes / sec, spread=spread, timing=how)
            del logits, x, y, out
        except Exception as ex:
            emit(section="moe", hidden=h, experts=e, topk=topk, error=str(ex)[:300])
    gm = getattr(torch, "_grouped_mm", None)
    if SMOKE or gm is None:
        return
    # Fine-grained experts (expert hidden 1408-2048 against model hidden 2048-7168), balanced rows.
    for experts, rows, n, k in ((64, 128, 1408, 2048), (64, 512, 1408, 2048), (64, 2048, 1408, 2048),
                                (256, 128, 2048, 7168), (256, 512, 2048, 7168), (32, 512, 7168, 2048),
                                (256, 512, 7168, 2048)):
        try:
            x = rnd(experts * rows, k)
            w = rnd(experts, n, k).transpose(-2, -1)
            offs = torch.arange(rows, experts * rows + 1, rows, device=DEV, dtype=torch.int32)
            fn = lambda: gm(x, w, offs=offs, out_dtype=torch.bfloat16)
            sec, spread, how = bench([fn], target_s=0.03, graph=True)
            emit(section="gemm", dtype="bf16", pass_="fwd", grouped=experts, m=rows, n=n, k=k, s=sec,
                 flop_per_s=2.0 * experts * rows * n * k / sec, spread=spread, timing=how, tag="grouped_fine")
            del x, w
        except Exception as ex:
            emit(section="moe", experts=experts, rows=rows, n=n, k=k, error=str(ex)[:300])


# --- Dao's flash_attn ---------------------------------------------------------------------------
def fa2pkg():
    """flash_attn.flash_attn_func forward and backward apart at the FlashAttention-2 paper's
    benchmark setting (16k tokens a batch, hidden 2048): the same kernel family as PyTorch's flash
    backend, built by its authors, so the paper's tables and PyTorch's build can be told apart."""
    try:
        from flash_attn import flash_attn_func
    except Exception as ex:
        emit(section="fa2pkg", skipped=f"no flash_attn: {str(ex)[:100]}")
        return
    for hd in (64, 128):
        for causal in (False, True):
            for s in (512, 2048, 8192):
                b, h = 16384 // s, 2048 // hd
                try:
                    q, k, v = (rnd(b, s, h, hd).requires_grad_(True) for _ in range(3))
                    flops_fwd = 4.0 * b * h * s * s * hd * (0.5 if causal else 1.0)
                    fwd = lambda: flash_attn_func(q, k, v, causal=causal)
                    sec_f, spread_f, _ = bench([fwd], target_s=0.03, graph=False, batches=3)
                    o = fwd()
                    g = torch.randn_like(o)
                    bwd = lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
                    sec_b, spread_b, _ = bench([bwd], target_s=0.03, graph=False, batches=3)
                    emit(section="attention", kernel="flash_attn_pkg", batch=b, heads=h, seq=s, head_dim=hd,
                         causal=causal, tag="fa_bench", fwd_s=sec_f, bwd_s=sec_b,
                         fwd_flop_per_s=flops_fwd / sec_f, bwd_flop_per_s=2.5 * flops_fwd / sec_b,
                         spread=max(spread_f, spread_b))
                    del q, k, v, o, g
                except Exception as ex:
                    emit(section="fa2pkg", seq=s, head_dim=hd, causal=causal, error=str(ex)[:200])
                    return


# --- attention ----------------------------------------------------------------------------------
def attention():
    import contextlib
    if SMOKE:
        backends = [("math", None)]
    else:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backends = [("flash2", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    total_tokens, hidden = (256, 64) if SMOKE else (16384, 2048)
    seqs = [64, 128] if SMOKE else [512, 1024, 2048, 4096, 8192, 16384]
    configs = []
    for hd in ([32] if SMOKE else [64, 128, 256]):
        for causal in (False, True):
            for s in seqs:
                configs.append((total_tokens // s, hidden // hd, s, hd, causal, "fa_bench"))
    if not SMOKE:  # long sequences, one sequence a batch, 16 heads of 128 (16k-64k tokens)
        for s in (32768, 65536):
            configs.append((1, 16, s, 128, True, "long"))
    for kname, backend in backends:
        for b, h, s, hd, causal, tag in configs:
            try:
                q, k, v = (rnd(b, h, s, hd).requires_grad_(True) for _ in range(3))
                flops_fwd = 4.0 * b * h * s * s * hd * (0.5 if causal else 1.0)
                with (contextlib.nullcontext() if backend is None else sdpa_kernel([backend])):
                    fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    sec_f, spread_f, _ = bench([fwd], target_s=0.03, graph=False, batches=3)
                    o = fwd()
                    g = torch.randn_like(o)
                    bwd = lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
                    sec_b, spread_b, _ = bench([bwd], target_s=0.03, graph=False, batches=3)
                emit(section="attention", kernel=kname, batch=b, heads=h, seq=s, head_dim=hd, causal=causal,
                     tag=tag, fwd_s=sec_f, bwd_s=sec_b, fwd_flop_per_s=flops_fwd / sec_f,
                     bwd_flop_per_s=2.5 * flops_fwd / sec_b, spread=max(spread_f, spread_b))
                del q, k, v, o, g
            except Exception as ex:
                emit(section="attention", kernel=kname, batch=b, heads=h, seq=s, head_dim=hd, causal=causal,
                     error=str(ex)[:200])


# --- optimizer ----------------------------------------------------------------------------------
def optimizer():
    n = (1 << 16) if SMOKE else (1 << 28)
    params = [torch.nn.Parameter(torch.randn(n // 8, device=DEV)) for _ in range(8)]
    for p_ in params:
        p_.grad = torch.randn_like(p_)
    for fused in ([False] if SMOKE else [True, False]):
        opt = (torch.optim.AdamW(params, lr=1e-4, fused=fused, foreach=None if fused else True) if not SMOKE
               else torch.optim.AdamW(params, lr=1e-4))
        sec, spread, how = bench([opt.step], target_s=0.1, graph=False, batches=3)
        emit(section="optimizer", what="AdamW fp32 params/grads/moments", fused=fused, params=n, s=sec,
             s_per_param=sec / n, bytes_per_s_at_28_bytes=28.0 * n / sec, spread=spread)


device_info()
names = args.sections.split(",")
share_sum = sum(SHARES.get(n, 0.1) for n in names)
cum = 0.0
for name in names:
    cum += SHARES.get(name, 0.1) / share_sum
    DEADLINE[0] = START + cum * args.budget_s
    if time.time() > DEADLINE[0]:
        emit(section="note", what=f"budget spent: {name} skipped")
        continue
    t0 = time.time()
    try:
        globals()[name]()
    except OutOfBudget:
        emit(section="note", what=f"{name} stopped at its share of the budget")
    except Exception as ex:
        emit(section=name, error=f"{type(ex).__name__}: {str(ex)[:300]}")
    sync()
    if not SMOKE:
        torch.cuda.empty_cache()
    emit(section="note", what=f"{name} done in {time.time() - t0:.1f} s")

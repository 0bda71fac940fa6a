#!/usr/bin/env python3
"""Writes gpt_small_a100_step.json: a deterministic PyTorch profiler (Kineto) trace of ONE
training step of a small GPT on rank 0 of 8 data-parallel A100s, in the format
torch.profiler.profile(record_shapes=True).export_chrome_trace() writes (PyTorch 2.x / Kineto:
"traceEvents" with cpu_op, user_annotation, cuda_runtime, kernel, gpu_memcpy events; "External
id" and "correlation" links; "Input Dims" / "Input type" / "Concrete Inputs").

The GPU kernel durations are SYNTHETIC, computed from the known curves below, so that
`trainsim calibrate --from-torch-trace` can be checked against them (tests/models/
torch_trace_test.cpp). Noise-free; standard library only; run: python3 make_trace.py [OUT_DIR]

Model gpt-small-4l: 4 layers, hidden 1024, 16 heads x 64, ffn 4096 (GELU), vocab 50304,
seq 1024, tied embeddings, bf16, micro-batch 2, one micro-batch per step, DDP over 8 GPUs
(gradient buckets all-reduced by NCCL on a second stream during the backward pass).
"""
import json
import os
import sys

# ---- hardware: the A100-SXM4-80GB preset (scenarios/gpus) ----
PEAK_BF16_FLOP_PER_S = 312e12
HBM_BYTES_PER_S = 2039e9

# ---- the known curves the fit must recover ----
# GEMM: efficiency = GEMM_MAX * w / (w + GEMM_HALF_WIDTH) of the bf16 peak, w = 2nk/(n+k) the
# harmonic mean of the two weight dimensions (the form of models/cost/compute_cost.hpp).
GEMM_MAX = 0.70
GEMM_HALF_WIDTH = 300.0
# Flash attention: share of peak on FlashAttention-2 FLOPs (Dao 2023, sec. 4: forward
# 4*b*h*s^2*d, halved for causal; backward 2.5x forward).
ATTN_FWD_EFF = 0.50
ATTN_BWD_EFF = 0.40
# Memory-bound ops: minimum traffic (inputs read once, output written once) at this rate.
ELEMENTWISE_BYTES_PER_S = 0.80 * HBM_BYTES_PER_S
# NCCL ring all-reduce on 8 GPUs: alpha + 2(n-1)/n * bytes / busbw.
NCCL_ALPHA_S = 20e-6
NCCL_BUSBW = 200e9
RANKS = 8
# Fused AdamW: bf16 param and grad, fp32 exp_avg and exp_avg_sq: 22 bytes per parameter.
ADAM_BYTES_PER_PARAM = 22
# CPU side (PyTorch eager): dispatch and launch costs in microseconds.
CPU_OP_US = 5.0        # a leaf op's dispatch before its launch
CPU_LAUNCH_US = 4.0    # cudaLaunchKernel
CPU_WRAP_US = 2.0      # each enclosing op (aten::linear around aten::addmm, ...)
CPU_VIEW_US = 3.0      # view ops (no kernel)
LAUNCH_LATENCY_US = 2.0

B, S, H, NH, D, F, V = 2, 1024, 1024, 16, 64, 4096, 50304
T = B * S
LAYERS = 4
BF16 = "c10::BFloat16"

MAIN_TID, BWD_TID, PID = 2731, 2790, 2731
COMPUTE_STREAM, NCCL_STREAM = 7, 24
BASE_US = 5219846000.0

GEMM_KERNELS = {
    "big": "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_tn",
    "sq": "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn",
    "nn": "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_nn",
    "nt": "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_nt",
}
K_LN = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)"
K_LN_BWD = "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)"
K_LN_GB = "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<c10::BFloat16, float>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)"
K_ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)"
K_GELU = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)"
K_GELU_BWD = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, 3> >(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, 3>)"
K_DROPOUT = "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::BFloat16, float, unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)"
K_DROPOUT_BWD = "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::masked_scale_kernel<bool, c10::BFloat16, float>(at::Tensor&, at::Tensor const&, at::Tensor const&, float)::{lambda(c10::BFloat16, bool)#1}, at::detail::Array<char*, 3> >(int, at::native::(anonymous namespace)::masked_scale_kernel<bool, c10::BFloat16, float>(at::Tensor&, at::Tensor const&, at::Tensor const&, float)::{lambda(c10::BFloat16, bool)#1}, at::detail::Array<char*, 3>)"
K_SUM = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<float, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<float, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4>)"
K_CAT = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)"
K_FILL = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::BFloat16>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<c10::BFloat16>, at::detail::Array<char*, 1>)"
K_FLASH_FWD = "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false>(pytorch_flash::Flash_fwd_params)"
K_FLASH_BWD_DOT = "void pytorch_flash::flash_bwd_dot_do_o_kernel<true, pytorch_flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params)"
K_FLASH_BWD = "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> >, false, true, false, false, false, true>(pytorch_flash::Flash_bwd_params)"
K_FLASH_BWD_CVT = "void pytorch_flash::flash_bwd_convert_dq_kernel<pytorch_flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params, int)"
K_EMB = "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)"
K_EMB_BWD = "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, float, long>(long const*, c10::BFloat16 const*, c10::BFloat16*, int, long, int, int)"
K_LOGSOFTMAX = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)"
K_LOGSOFTMAX_BWD = "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<8, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, int)"
K_NLL = "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<c10::BFloat16, float, long>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, long const*, c10::BFloat16 const*, bool, long, long, long, long)"
K_NLL_BWD = "void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<c10::BFloat16, long>(c10::BFloat16*, c10::BFloat16 const*, long const*, c10::BFloat16 const*, c10::BFloat16 const*, bool, int, int, long, long)"
K_ADAM = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, float const*, float const*>(at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, float const*, float const*)"
K_NCCL = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"

DTYPE_BYTES = {BF16: 2, "float": 4, "long int": 8, "bool": 1}


def nbytes(dims, dtype):
    n = 1
    for d in dims:
        n *= d
    return n * DTYPE_BYTES[dtype]


def r3(x):
    return round(x, 3)


class Tracer:
    def __init__(self):
        self.events = []
        self.ext = 0
        self.corr = 0
        self.cpu = {MAIN_TID: BASE_US, BWD_TID: BASE_US}
        self.stream_free = {COMPUTE_STREAM: BASE_US, NCCL_STREAM: BASE_US}
        self.stack = []  # open cpu ops: (index into events, tid)
        self.last_compute_end = BASE_US

    def next_ext(self):
        self.ext += 1
        return self.ext

    def open(self, tid, name, dims=None, types=None, cat="cpu_op", concrete=None, wrap_us=CPU_WRAP_US):
        args = {"External id": self.next_ext()}
        if cat == "cpu_op":
            args["Record function id"] = 0
            args["Ev Idx"] = len(self.events)
            if dims is not None:
                args["Input Dims"] = dims
                args["Input type"] = types if types is not None else [BF16 if d else "" for d in dims]
            if concrete is not None:
                args["Concrete Inputs"] = concrete
        ev = {"ph": "X", "cat": cat, "name": name, "pid": PID, "tid": tid, "ts": self.cpu[tid], "args": args}
        self.events.append(ev)
        self.stack.append(ev)
        self.cpu[tid] += wrap_us
        return ev

    def close(self, tid, tail_us=1.0):
        ev = self.stack.pop()
        self.cpu[tid] += tail_us
        ev["dur"] = r3(self.cpu[tid] - ev["ts"])
        ev["ts"] = r3(ev["ts"])

    def launch(self, tid, kernel, dur_us, stream=COMPUTE_STREAM, not_before=None, link=True, extra=None):
        """cudaLaunchKernel on the CPU inside the innermost open op, then the kernel on the GPU."""
        self.corr += 1
        owner = self.stack[-1]["args"]["External id"]
        ts = self.cpu[tid]
        rt_args = {"External id": owner, "cbid": 211, "correlation": self.corr}
        if not link:
            del rt_args["External id"]
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": PID,
                            "tid": tid, "ts": r3(ts), "dur": CPU_LAUNCH_US, "args": rt_args})
        self.cpu[tid] += CPU_LAUNCH_US
        start = max(ts + LAUNCH_LATENCY_US, self.stream_free[stream])
        if not_before is not None:
            start = max(start, not_before)
        args = {"queued": 0, "device": 0, "context": 1, "stream": stream, "correlation": self.corr,
                "registers per thread": 128, "shared memory": 49152, "grid": [432, 1, 1], "block": [256, 1, 1]}
        if link:
            args["External id"] = owner
        if extra:
            args.update(extra)
        self.events.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": stream,
                            "ts": r3(start), "dur": r3(dur_us), "args": args})
        self.stream_free[stream] = start + dur_us
        if stream == COMPUTE_STREAM:
            self.last_compute_end = start + dur_us
        return start + dur_us

    # ---- ops ----
    def leaf(self, tid, name, dims, kernels, types=None, concrete=None):
        """An aten op launching kernels [(name, duration_us)]."""
        self.open(tid, name, dims, types, concrete=concrete, wrap_us=CPU_OP_US)
        for k, dur in kernels:
            self.launch(tid, k, dur)
        self.close(tid)

    def view(self, tid, name, dims):
        self.open(tid, name, dims, wrap_us=CPU_VIEW_US)
        self.close(tid, 0.0)


def gemm_us(m, n, k, wn, wk):
    w = 2.0 * wn * wk / (wn + wk)
    eff = GEMM_MAX * w / (w + GEMM_HALF_WIDTH)
    return 2.0 * m * n * k / (PEAK_BF16_FLOP_PER_S * eff) * 1e6


def elem_us(byte_count):
    return byte_count / ELEMENTWISE_BYTES_PER_S * 1e6


def attn_flops_fwd():
    return 4.0 * B * NH * S * S * D / 2  # causal


def linear(tr, tid, n_out, n_in, bias=True, kernel="big"):
    """aten::linear on [B,S,n_in] -> aten::t + aten::addmm (aten::matmul + aten::mm without bias)."""
    dims = [[B, S, n_in], [n_out, n_in], [n_out] if bias else []]
    tr.open(tid, "aten::linear", dims)
    tr.view(tid, "aten::t", [[n_out, n_in]])
    dur = gemm_us(T, n_out, n_in, n_out, n_in)
    if bias:
        tr.leaf(tid, "aten::addmm", [[n_out], [T, n_in], [n_in, n_out], [], []],
                [(GEMM_KERNELS[kernel], dur)], types=[BF16, BF16, BF16, "Scalar", "Scalar"])
    else:
        tr.open(tid, "aten::matmul", [[B, S, n_in], [n_in, n_out]])
        tr.view(tid, "aten::view", [[B, S, n_in], []])
        tr.leaf(tid, "aten::mm", [[T, n_in], [n_in, n_out]], [(GEMM_KERNELS[kernel], dur)])
        tr.view(tid, "aten::_unsafe_view", [[T, n_out], []])
        tr.close(tid)
    tr.close(tid)


def layer_norm(tr, tid):
    x = [B, S, H]
    tr.open(tid, "aten::layer_norm", [x, [], [H], [H], [], []],
            [BF16, "", BF16, BF16, "Scalar", "Scalar"])
    byte_count = 2 * nbytes(x, BF16) + 2 * nbytes([H], BF16)
    tr.leaf(tid, "aten::native_layer_norm", [x, [], [H], [H], []], [(K_LN, elem_us(byte_count))],
            types=[BF16, "", BF16, BF16, "Scalar"])
    tr.close(tid)


def dropout(tr, tid, x):
    tr.open(tid, "aten::dropout", [x, [], []], [BF16, "Scalar", "Scalar"])
    byte_count = 2 * nbytes(x, BF16)  # in + out (the bool mask is not an input)
    tr.leaf(tid, "aten::native_dropout", [x, [], []], [(K_DROPOUT, elem_us(byte_count))],
            types=[BF16, "Scalar", "Scalar"])
    tr.close(tid)


def add(tr, tid, x, y):
    byte_count = nbytes(x, BF16) + nbytes(y, BF16) + nbytes(x, BF16)
    tr.leaf(tid, "aten::add", [x, y, []], [(K_ADD, elem_us(byte_count))], types=[BF16, BF16, "Scalar"])


def forward(tr):
    tid = MAIN_TID
    tr.open(tid, "DistributedDataParallel.forward", cat="user_annotation")
    idx = [B, S]
    emb = [B, S, H]
    tr.open(tid, "aten::embedding", [[V, H], idx, [], [], []], [BF16, "long int", "Scalar", "Scalar", "Scalar"])
    tr.leaf(tid, "aten::index_select", [[V, H], [], [T]], [(K_EMB, elem_us(2 * nbytes(emb, BF16)))],
            types=[BF16, "Scalar", "long int"])
    tr.close(tid)
    tr.open(tid, "aten::embedding", [[S, H], [1, S], [], [], []], [BF16, "long int", "Scalar", "Scalar", "Scalar"])
    tr.leaf(tid, "aten::index_select", [[S, H], [], [S]], [(K_EMB, elem_us(2 * nbytes([S, H], BF16)))],
            types=[BF16, "Scalar", "long int"])
    tr.close(tid)
    add(tr, tid, emb, [1, S, H])
    dropout(tr, tid, emb)
    q = [B, NH, S, D]
    for _ in range(LAYERS):
        layer_norm(tr, tid)
        linear(tr, tid, 3 * H, H)
        tr.view(tid, "aten::split", [[B, S, 3 * H], [], []])
        for _ in range(3):
            tr.view(tid, "aten::view", [[B, S, H], []])
            tr.view(tid, "aten::transpose", [[B, S, NH, D], [], []])
        tr.open(tid, "aten::scaled_dot_product_attention", [q, q, q, [], [], [], []],
                [BF16, BF16, BF16, "", "Scalar", "Scalar", ""], concrete=["", "", "", "", "0.", "True", ""])
        tr.open(tid, "aten::_scaled_dot_product_flash_attention", [q, q, q, [], [], [], []],
                [BF16, BF16, BF16, "Scalar", "Scalar", "Scalar", ""], concrete=["", "", "", "0.", "True", "False", ""])
        f = [B, S, NH, D]
        dur = attn_flops_fwd() / (PEAK_BF16_FLOP_PER_S * ATTN_FWD_EFF) * 1e6
        tr.leaf(tid, "aten::_flash_attention_forward", [f, f, f, [], [], [], [], [], [], [], []],
                [(K_FLASH_FWD, dur)], types=[BF16, BF16, BF16, "", "", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", ""])
        tr.close(tid)
        tr.close(tid)
        tr.view(tid, "aten::transpose", [q, [], []])
        tr.view(tid, "aten::view", [[B, S, NH, D], []])
        linear(tr, tid, H, H, kernel="sq")
        dropout(tr, tid, emb)
        add(tr, tid, emb, emb)
        layer_norm(tr, tid)
        linear(tr, tid, F, H)
        tr.leaf(tid, "aten::gelu", [[B, S, F], []], [(K_GELU, elem_us(2 * nbytes([B, S, F], BF16)))],
                types=[BF16, ""], concrete=["", "tanh"])
        linear(tr, tid, H, F)
        dropout(tr, tid, emb)
        add(tr, tid, emb, emb)
    layer_norm(tr, tid)
    linear(tr, tid, V, H, bias=False)
    tr.close(tid)  # DDP forward
    # loss (class "other": the cost model has no loss term)
    tr.open(tid, "aten::cross_entropy_loss", [[T, V], [T], [], [], [], []], [BF16, "long int", "", "Scalar", "Scalar", "Scalar"])
    tr.open(tid, "aten::log_softmax", [[T, V], [], []], [BF16, "Scalar", ""])
    tr.leaf(tid, "aten::_log_softmax", [[T, V], [], []], [(K_LOGSOFTMAX, elem_us(2 * nbytes([T, V], BF16)))],
            types=[BF16, "Scalar", "Scalar"])
    tr.close(tid)
    tr.open(tid, "aten::nll_loss_nd", [[T, V], [T], [], [], []], [BF16, "long int", "", "Scalar", "Scalar"])
    tr.open(tid, "aten::nll_loss", [[T, V], [T], [], [], []], [BF16, "long int", "", "Scalar", "Scalar"])
    tr.leaf(tid, "aten::nll_loss_forward", [[T, V], [T], [], [], []], [(K_NLL, 6.0)],
            types=[BF16, "long int", "", "Scalar", "Scalar"])
    tr.close(tid)
    tr.close(tid)
    tr.close(tid)


def mm_backward(tr, tid, n_out, n_in, bias=True):
    """AddmmBackward0 / MmBackward0: dgrad, wgrad (and the bias gradient, a reduction)."""
    name = "AddmmBackward0" if bias else "MmBackward0"
    tr.open(tid, "autograd::engine::evaluate_function: " + name, cat="cpu_op")
    tr.open(tid, name)
    tr.leaf(tid, "aten::mm", [[T, n_out], [n_out, n_in]],
            [(GEMM_KERNELS["nn"], gemm_us(T, n_in, n_out, n_out, n_in))])
    tr.view(tid, "aten::t", [[T, n_out]])
    tr.leaf(tid, "aten::mm", [[n_out, T], [T, n_in]],
            [(GEMM_KERNELS["nt"], gemm_us(n_out, n_in, T, n_out, n_in))])
    if bias:
        tr.leaf(tid, "aten::sum", [[T, n_out], [], [], []], [(K_SUM, elem_us(nbytes([T, n_out], BF16)))],
                types=[BF16, "", "Scalar", ""])
    tr.close(tid)
    tr.close(tid)


def bwd_elem(tr, tid, node, op, dims, types, kernels_share, byte_count):
    tr.open(tid, "autograd::engine::evaluate_function: " + node)
    tr.open(tid, node)
    total = elem_us(byte_count)
    tr.leaf(tid, op, dims, [(k, total * share) for k, share in kernels_share], types=types)
    tr.close(tid)
    tr.close(tid)


def ln_backward(tr, tid):
    x = [B, S, H]
    stats = [B, S, 1]
    # minimum traffic: grad_out, input, mean, rstd, weight, bias read; grad_input written
    byte_count = 2 * nbytes(x, BF16) + 2 * nbytes(stats, "float") + 2 * nbytes([H], BF16) + nbytes(x, BF16)
    bwd_elem(tr, tid, "NativeLayerNormBackward0", "aten::native_layer_norm_backward",
             [x, x, [], stats, stats, [H], [H], []], [BF16, BF16, "", "float", "float", BF16, BF16, ""],
             [(K_LN_BWD, 0.8), (K_LN_GB, 0.2)], byte_count)


def dropout_backward(tr, tid):
    x = [B, S, H]
    bwd_elem(tr, tid, "NativeDropoutBackward0", "aten::native_dropout_backward", [x, x, []],
             [BF16, "bool", "Scalar"], [(K_DROPOUT_BWD, 1.0)],
             nbytes(x, BF16) + nbytes(x, "bool") + nbytes(x, BF16))


def residual_grad_add(tr, tid):
    x = [B, S, H]
    tr.leaf(tid, "aten::add", [x, x, []], [(K_ADD, elem_us(3 * nbytes(x, BF16)))], types=[BF16, BF16, "Scalar"])


def nccl_all_reduce(tr, tid, params):
    byte_count = 2 * params
    dur = (NCCL_ALPHA_S + 2.0 * (RANKS - 1) / RANKS * byte_count / NCCL_BUSBW) * 1e6
    tr.open(tid, "nccl:all_reduce", [[params]], [BF16])
    tr.launch(tid, K_NCCL, dur, stream=NCCL_STREAM, not_before=tr.last_compute_end,
              extra={"Collective name": "allreduce", "In msg nelems": params, "Group size": RANKS})
    tr.close(tid)


def backward(tr):
    tid = BWD_TID
    tr.cpu[BWD_TID] = tr.cpu[MAIN_TID] + 8.0
    layer_params = 12 * H * H + 13 * H
    # loss
    bwd_elem(tr, tid, "NllLossBackward0", "aten::nll_loss_backward", [[], [T, V], [T], [], [], [], []],
             ["", BF16, "long int", "", "Scalar", "Scalar", ""], [(K_FILL, 0.5), (K_NLL_BWD, 0.5)],
             nbytes([T, V], BF16))
    bwd_elem(tr, tid, "LogSoftmaxBackward0", "aten::_log_softmax_backward_data", [[T, V], [T, V], [], []],
             [BF16, BF16, "Scalar", "Scalar"], [(K_LOGSOFTMAX_BWD, 1.0)], 3 * nbytes([T, V], BF16))
    mm_backward(tr, tid, V, H, bias=False)
    ln_backward(tr, tid)
    for layer in reversed(range(LAYERS)):
        dropout_backward(tr, tid)
        mm_backward(tr, tid, H, F)
        bwd_elem(tr, tid, "GeluBackward0", "aten::gelu_backward", [[B, S, F], [B, S, F], []],
                 [BF16, BF16, ""], [(K_GELU_BWD, 1.0)], 3 * nbytes([B, S, F], BF16))
        mm_backward(tr, tid, F, H)
        ln_backward(tr, tid)
        residual_grad_add(tr, tid)
        dropout_backward(tr, tid)
        mm_backward(tr, tid, H, H)
        q = [B, NH, S, D]
        f = [B, S, NH, D]
        tr.open(tid, "autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0")
        tr.open(tid, "ScaledDotProductFlashAttentionBackward0")
        tr.open(tid, "aten::_scaled_dot_product_flash_attention_backward",
                [q, q, q, q, q, [B, NH, S], [], [], [], [], [], [], [], [], []],
                [BF16] * 5 + ["float", "", "", "Scalar", "Scalar", "Scalar", "Scalar", "long int", "long int", ""],
                concrete=["", "", "", "", "", "", "", "", "1024", "1024", "0.", "True", "", "", ""])
        total = 2.5 * attn_flops_fwd() / (PEAK_BF16_FLOP_PER_S * ATTN_BWD_EFF) * 1e6
        tr.leaf(tid, "aten::_flash_attention_backward", [f, f, f, f, f, [B, NH, S], [], [], [], [], [], [], [], [], []],
                [(K_FLASH_BWD_DOT, 0.05 * total), (K_FLASH_BWD, 0.90 * total), (K_FLASH_BWD_CVT, 0.05 * total)],
                types=[BF16] * 5 + ["float", "", "", "Scalar", "Scalar", "Scalar", "Scalar", "long int", "long int", ""])
        tr.close(tid)
        tr.close(tid)
        tr.close(tid)
        tr.open(tid, "autograd::engine::evaluate_function: SplitWithSizesBackward0")
        tr.open(tid, "SplitWithSizesBackward0")
        x = [B, S, H]
        tr.leaf(tid, "aten::cat", [[x, x, x], []], [(K_CAT, elem_us(6 * nbytes(x, BF16)))], types=["TensorList", "Scalar"])
        tr.close(tid)
        tr.close(tid)
        mm_backward(tr, tid, 3 * H, H)
        ln_backward(tr, tid)
        residual_grad_add(tr, tid)
        # DDP: this layer's bucket (the last layer's bucket also holds ln_f) is ready.
        nccl_all_reduce(tr, tid, layer_params + (2 * H if layer == LAYERS - 1 else 0))
    dropout_backward(tr, tid)
    # position embedding gradient: sum over the batch, then the embedding backward
    tr.leaf(tid, "aten::sum", [[B, S, H], [], [], []], [(K_SUM, elem_us(nbytes([B, S, H], BF16)))],
            types=[BF16, "", "Scalar", ""])
    for rows, idx in ((S, [1, S]), (V, [B, S])):
        tr.open(tid, "autograd::engine::evaluate_function: EmbeddingBackward0")
        tr.open(tid, "EmbeddingBackward0")
        tr.open(tid, "aten::embedding_backward", [[B, S, H], idx, [], [], [], []],
                [BF16, "long int", "Scalar", "Scalar", "Scalar", "Scalar"])
        tr.leaf(tid, "aten::embedding_dense_backward", [[B, S, H], idx, [], [], []],
                [(K_FILL, elem_us(nbytes([rows, H], BF16))), (K_EMB_BWD, elem_us(nbytes([B, S, H], BF16) + nbytes([rows, H], BF16)))],
                types=[BF16, "long int", "Scalar", "Scalar", "Scalar"])
        tr.close(tid)
        tr.close(tid)
        tr.close(tid)
        nccl_all_reduce(tr, tid, rows * H)
    tr.cpu[MAIN_TID] = max(tr.cpu[MAIN_TID], tr.cpu[BWD_TID]) + 5.0


def optimizer(tr):
    tid = MAIN_TID
    params = LAYERS * (12 * H * H + 13 * H) + 2 * H + S * H + V * H
    tr.open(tid, "Optimizer.step#AdamW.step", cat="user_annotation")
    tr.open(tid, "aten::_fused_adamw_", [[[V, H], [S, H]]] * 4 + [[], [], [], [], [], [], [], [], []],
            ["TensorList"] * 4 + ["TensorList", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", ""],
            wrap_us=CPU_OP_US)
    total = params * ADAM_BYTES_PER_PARAM / ELEMENTWISE_BYTES_PER_S * 1e6
    nccl_done = tr.stream_free[NCCL_STREAM]  # DDP's stream wait: the step reads reduced grads
    for i in range(4):
        # No "External id" on these kernels: the parser links them through the runtime
        # call's correlation id inside the op's time span.
        tr.launch(tid, K_ADAM, total / 4, not_before=nccl_done, link=False)
    tr.close(tid)
    tr.close(tid)


def loss_item(tr):
    tid = MAIN_TID
    tr.open(tid, "aten::item", [[]], [BF16])
    tr.open(tid, "aten::_local_scalar_dense", [[]], [BF16])
    tr.corr += 1
    owner = tr.stack[-1]["args"]["External id"]
    ts = tr.cpu[tid]
    start = max(ts + LAUNCH_LATENCY_US, tr.stream_free[COMPUTE_STREAM])
    tr.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": PID, "tid": tid,
                      "ts": r3(ts), "dur": 4.0, "args": {"External id": owner, "cbid": 41, "correlation": tr.corr}})
    tr.events.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0,
                      "tid": COMPUTE_STREAM, "ts": r3(start), "dur": 1.5,
                      "args": {"External id": owner, "device": 0, "context": 1, "stream": COMPUTE_STREAM,
                               "correlation": tr.corr, "bytes": 2, "memory bandwidth (GB/s)": 0.0013}})
    tr.cpu[tid] += 4.0
    tr.corr += 1
    sync_end = start + 1.5 + 3.0
    tr.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": PID, "tid": tid,
                      "ts": r3(tr.cpu[tid]), "dur": r3(sync_end - tr.cpu[tid]),
                      "args": {"External id": owner, "cbid": 131, "correlation": tr.corr}})
    tr.cpu[tid] = sync_end
    tr.close(tid)
    tr.close(tid)


def small_trace():
    """One ProfilerStep with an aten::mm and an aten::add: the base of the hostile inputs."""
    ev = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 100.0, "dur": 200.0,
         "args": {"External id": 1}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 110.0, "dur": 20.0,
         "args": {"External id": 2, "Input Dims": [[2048, 1024], [1024, 3072]], "Input type": [BF16, BF16]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 115.0, "dur": 4.0,
         "args": {"External id": 2, "correlation": 11}},
        {"ph": "X", "cat": "kernel", "name": GEMM_KERNELS["sq"], "pid": 0, "tid": 7, "ts": 120.0,
         "dur": 130.0, "args": {"External id": 2, "correlation": 11, "stream": 7}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 140.0, "dur": 12.0,
         "args": {"External id": 3, "Input Dims": [[2048, 1024], [2048, 1024], []], "Input type": [BF16, BF16, "Scalar"]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 144.0, "dur": 4.0,
         "args": {"External id": 3, "correlation": 12}},
        {"ph": "X", "cat": "kernel", "name": K_ADD, "pid": 0, "tid": 7, "ts": 250.0, "dur": 8.0,
         "args": {"External id": 3, "correlation": 12, "stream": 7}},
    ]
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}], "traceEvents": ev}


def write_broken(out_dir):
    """Hostile inputs for the error tests: each names what is wrong."""
    def dump(name, obj):
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(json.dumps(obj, indent=1) + "\n")
    t = small_trace()
    t["events"] = t.pop("traceEvents")
    dump("bad_no_trace_events.json", t)              # traceEvents: missing
    t = small_trace()
    del t["traceEvents"][3]["dur"]
    dump("bad_missing_dur.json", t)                  # traceEvents[3].dur: missing
    t = small_trace()
    t["traceEvents"][1]["args"]["Input Dims"] = [[2048, "1024"], [1024, 3072]]
    dump("bad_input_dims.json", t)                   # traceEvents[1].args.Input Dims[0][1]
    t = small_trace()
    t["traceEvents"][1]["args"]["Input Dims"] = [[2048, 1024], [512, 3072]]
    dump("bad_inner_dims.json", t)                   # aten::mm inner dimensions differ
    t = small_trace()
    t["traceEvents"] = [e for e in t["traceEvents"] if e["args"].get("External id") != 2]
    dump("bad_no_gemm.json", t)                      # no GEMM kernels
    with open(os.path.join(out_dir, "bad_truncated.json"), "w") as f:
        f.write(json.dumps(small_trace(), indent=1)[:900])  # cut off mid-event


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    tr = Tracer()
    tr.ext = 1000
    tr.corr = 40000
    tr.open(MAIN_TID, "ProfilerStep#7", cat="user_annotation")
    forward(tr)
    tr.open(MAIN_TID, "aten::ones_like", [[], [], [], [], [], []], ["Scalar"] + [""] * 5)
    tr.leaf(MAIN_TID, "aten::fill_", [[], []], [(K_FILL, 1.5)], types=[BF16, "Scalar"])
    tr.close(MAIN_TID)
    backward(tr)
    optimizer(tr)
    loss_item(tr)
    tr.close(MAIN_TID)
    meta = [
        {"name": "process_name", "ph": "M", "ts": BASE_US, "pid": PID, "tid": 0, "args": {"name": "python3"}},
        {"name": "thread_name", "ph": "M", "ts": BASE_US, "pid": PID, "tid": MAIN_TID, "args": {"name": "thread 2731 (python3)"}},
        {"name": "thread_name", "ph": "M", "ts": BASE_US, "pid": PID, "tid": BWD_TID, "args": {"name": "thread 2790 (pt_autograd_0)"}},
        {"name": "process_name", "ph": "M", "ts": BASE_US, "pid": 0, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": BASE_US, "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
        {"name": "thread_name", "ph": "M", "ts": BASE_US, "pid": 0, "tid": COMPUTE_STREAM, "args": {"name": "stream 7"}},
        {"name": "thread_name", "ph": "M", "ts": BASE_US, "pid": 0, "tid": NCCL_STREAM, "args": {"name": "stream 24"}},
    ]
    events = meta + sorted(tr.events, key=lambda e: (e["ts"], e["pid"], e["tid"]))
    events.append({"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "",
                   "ts": r3(tr.cpu[MAIN_TID] + 10)})
    trace = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85097971712,
                              "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024,
                              "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
                              "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 108,
                              "sharedMemPerMultiprocessor": 167936}],
        "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": RANKS},
        "record_shapes": 1,
        "with_stack": 0,
        "trace_id": "D5E9C8B1A4F34E0C9A7C2F0B8E1D6A53",
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1700000000000000000,
    }
    with open(os.path.join(out_dir, "gpt_small_a100_step.json"), "w") as f:
        f.write("{\n")
        for k, v in trace.items():
            f.write("  %s: %s,\n" % (json.dumps(k), json.dumps(v)))
        f.write('  "traceEvents": [\n')
        f.write(",\n".join("    " + json.dumps(e, separators=(", ", ": ")) for e in events))
        f.write("\n  ],\n")
        f.write('  "traceName": "/tmp/traces/rank0.pt.trace.json"\n}\n')
    write_broken(out_dir)
    step = [e for e in tr.events if e["name"] == "ProfilerStep#7"][0]
    print("events %d, step %.1f us" % (len(events), step["dur"]))


if __name__ == "__main__":
    main()

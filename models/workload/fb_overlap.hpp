// One micro-batch's forward pass and another's backward pass as one program, interleaved where
// either issues a collective beside the compute stream: DualPipe's overlapped forward and
// backward chunk (DeepSeek-AI, "DeepSeek-V3 Technical Report", 2024, section 3.2.1 and Figure
// 4), where the attention and MLP of one micro-batch run while the other's all-to-all dispatch
// and combine and its pipeline sends are in flight. The merged program is an ordinary
// PassProgram: the estimate tier reduces it (program_reduce.hpp) and the simulate tier plays it,
// so both see the same overlap, and the collectives still slow the compute beside them.
#pragma once

#include "models/workload/op_graph.hpp"

namespace trainsim {

// The blocks of `forward` and `backward` paired repetition by repetition (a block of k
// repetitions of each becomes one block of k repetitions of both; what one has beyond the other
// follows alone). In a paired block the compute ops alternate by segment: the forward's ops up
// to and including the first that issues a collective, then the backward's likewise, and so on,
// so each side's collectives run beside the other's compute. Every collective keeps its op and
// its waiter; one that a pass alone runs on its compute stream (kInline: Megatron's TP
// collectives without overlap, its all-to-all token dispatcher) runs on an NCCL stream in the
// pair (kTensor), as DualPipe runs the communication of one micro-batch on SMs of its own beside
// the other's kernels (the report's section 3.2.2), so it slows the compute beside it.
PassProgram overlap_forward_backward(const PassProgram& forward, const PassProgram& backward);

}  // namespace trainsim

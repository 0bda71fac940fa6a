#include "models/cost/compute/precision.hpp"

namespace trainsim {

const char* to_string(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::kDelayed: return "delayed";
    case Fp8Recipe::kCurrent: return "current";
    case Fp8Recipe::kBlock: return "block";
  }
  return "?";
}

Precision gemm_precision(OpRole role, Precision plan) {
  if (plan != Precision::kFp8) return plan;
  switch (role) {
    case OpRole::kQkv:
    case OpRole::kAttnOut:
    case OpRole::kMlpUp:
    case OpRole::kMlpDown:
    case OpRole::kExpertUp:
    case OpRole::kExpertDown: return Precision::kFp8;
    default: return Precision::kBf16;
  }
}

Precision non_gemm_precision(Precision plan) {
  return plan == Precision::kFp8 ? Precision::kBf16 : plan;
}

namespace {

// Bytes per element of one quantisation of a bf16 tensor: read 2, write the fp8 copy (1) and
// its transpose (1); block scaling adds one fp32 scale per 128 elements for each copy.
constexpr double kCastTransposeBytes = 2 + 1 + 1;
constexpr double kBlockScaleBytes = 2 * 4.0 / 128;
constexpr double kAmaxReadBytes = 2;

void quantise(std::vector<ComputeOp>& out, const ComputeOp& gemm, double elements, const PrecisionOptions& o) {
  if (elements <= 0) return;
  ComputeOp cast;
  cast.kind = ComputeKind::kMemoryBound;
  cast.role = OpRole::kCast;
  cast.pass = gemm.pass;
  cast.precision = Precision::kBf16;
  cast.elements = elements;
  cast.bytes = elements * (kCastTransposeBytes + (o.recipe == Fp8Recipe::kBlock ? kBlockScaleBytes : 0));
  cast.kernels = 1;
  if (o.recipe == Fp8Recipe::kCurrent) {
    ComputeOp amax = cast;
    amax.role = OpRole::kAmax;
    amax.bytes = elements * kAmaxReadBytes;
    out.push_back(amax);
  }
  out.push_back(cast);
}

}  // namespace

std::vector<ComputeOp> precision_extra_ops(const ComputeOp& gemm, const PrecisionOptions& o) {
  std::vector<ComputeOp> out;
  if (gemm.kind != ComputeKind::kGemm || gemm.precision != Precision::kFp8) return out;
  const GemmShape& g = gemm.gemm;
  const double groups = g.groups > 0 ? g.groups : 1;
  switch (gemm.pass) {
    case Pass::kForward:
      quantise(out, gemm, g.m * g.k * groups, o);                     // activation X [T, K]
      if (o.cast_weights) quantise(out, gemm, g.k * g.n * groups, o);  // weight W [K, N]
      break;
    case Pass::kRecompute: quantise(out, gemm, g.m * g.k * groups, o); break;
    case Pass::kBackwardInput: quantise(out, gemm, g.m * g.k * groups, o); break;  // dY [T, N]
    case Pass::kBackwardWeight: break;
  }
  return out;
}

void append_precision_ops(std::vector<ComputeOp>& ops, const ComputeOp& gemm, const PrecisionOptions& o) {
  for (ComputeOp& op : precision_extra_ops(gemm, o)) ops.push_back(op);
}

}  // namespace trainsim

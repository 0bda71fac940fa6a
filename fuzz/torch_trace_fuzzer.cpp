// libFuzzer target: PyTorch profiler (Kineto) traces: parsing, the efficiency fits on an A100,
// and the calibration file written from them (calibrate --from-torch-trace).
#include "fuzz/fuzz_common.hpp"
#include "models/interop/torch_trace.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto j = fuzz::parse(fuzz::text_of(data, size));
  if (!j) return 0;
  fuzz::expect_answer([&] {
    TorchTraceOptions o;
    if (size % 2) o.tokens = 2048;
    const TorchTrace t = parse_torch_trace(*j, "fuzz.json", o);
    const TorchTraceFit fit = fit_torch_trace(t, fuzz::small_scenario().cluster.gpu);
    torch_trace_calibration_json(t, fit, "A100-SXM4-80GB").dump();
  });
  return 0;
}

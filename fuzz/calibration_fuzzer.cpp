// libFuzzer target: calibration files (--calibration FILE), applied to a scenario whose estimate
// must then run: every value the cost models read is typed and ranged.
#include "fuzz/fuzz_common.hpp"
#include "models/cost/calibration.hpp"
#include "models/estimate/estimate.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto j = fuzz::parse(fuzz::text_of(data, size));
  if (!j) return 0;
  fuzz::expect_answer([&] {
    Scenario s = fuzz::small_scenario();
    apply_calibration(*j, s);
    estimate(s);
  });
  return 0;
}

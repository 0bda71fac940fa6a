// libFuzzer target: nccl-tests output, the text table or the -J JSON report, and the alpha-beta
// fit and fitted fabric made from it (import-nccl-tests).
#include "fuzz/fuzz_common.hpp"
#include "models/interop/nccl_tests_log.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text = fuzz::text_of(data, size);
  fuzz::expect_answer([&] {
    const auto first = text.find_first_not_of(" \t\r\n");
    NcclTestsLog log;
    if (first != std::string::npos && text[first] == '{') {
      const auto j = fuzz::parse(text);
      if (!j) return;
      log = parse_nccl_tests_json(*j, "fuzz.json");
    } else {
      log = parse_nccl_tests_text(text, "fuzz.log");
    }
    const NcclFit fit = fit_nccl_log(log.out_of_place);
    fit_fabric(log, fit, fuzz::small_scenario().cluster);
    nccl_calibration_json({log}, {fit}, nlohmann::json()).dump();
  });
  return 0;
}

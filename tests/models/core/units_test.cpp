#include "models/core/units.hpp"

#include <gtest/gtest.h>

#include "models/core/scenario_error.hpp"

namespace trainsim {
namespace {

using units::Kind;

struct UnitCase {
  const char* text;
  Kind kind;
  double expected;
};

TEST(Units, ParsesQuantitiesToSiBaseUnits) {
  const UnitCase cases[] = {
      {"80GiB", Kind::kBytes, 80.0 * 1024 * 1024 * 1024},
      {"80GB", Kind::kBytes, 80e9},
      {"80 GB", Kind::kBytes, 80e9},
      {"1024", Kind::kBytes, 1024},
      {"200Gbps", Kind::kBandwidth, 25e9},  // bits: 200 Gb/s = 25 GB/s
      {"200Gb/s", Kind::kBandwidth, 25e9},
      {"600GBps", Kind::kBandwidth, 600e9},
      {"600GB/s", Kind::kBandwidth, 600e9},
      {"1.5us", Kind::kTime, 1.5e-6},
      {"2ms", Kind::kTime, 2e-3},
      {"312TFLOPS", Kind::kFlops, 312e12},
      {"1.979PFLOP/s", Kind::kFlops, 1.979e15},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_DOUBLE_EQ(units::parse(c.text, c.kind, "x"), c.expected);
  }
}

TEST(Units, RejectsBitsForSizesAndNamesThePath) {
  try {
    units::parse("80Gb", Kind::kBytes, "cluster.gpu.hbm_capacity");
    FAIL() << "80Gb accepted as a size";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.path(), "cluster.gpu.hbm_capacity");
    EXPECT_NE(std::string(e.what()).find("bits"), std::string::npos) << e.what();
  }
}

TEST(Units, RejectsUnknownUnitsNegativesAndGarbage) {
  for (const char* bad : {"80Gx", "-5GB", "", "GB", "nan", "inf", "0x10", "1e400GB", "12 34"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(units::parse(bad, Kind::kBytes, "p"), ScenarioError);
  }
  EXPECT_THROW(units::parse("25GB", Kind::kBandwidth, "p"), ScenarioError);  // size, not a rate
  EXPECT_THROW(units::parse("3parsecs", Kind::kTime, "p"), ScenarioError);
}

TEST(Units, ErrorsQuoteAShortPrintableExcerpt) {
  try {
    units::parse(std::string(100000, '7') + "\x01GB", Kind::kBytes, "p");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u);
    EXPECT_NE(std::string(e.what()).find("\"" + std::string(64, '7') + "...\" is not"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainsim

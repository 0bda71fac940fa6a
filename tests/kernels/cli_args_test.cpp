// The measurement subcommands' arguments: integers that do not fit an int and numbers that are
// not finite are malformed (exit code 2), and the trainer's ranges are checked before it starts.
#include "kernels/cli_args.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <vector>

#include "kernels/calibration.hpp"
#include "kernels/trainer.hpp"

namespace trainsim::kernels {
namespace {

int parse(std::vector<std::string> args, int* i, double* d) {
  ArgParser ap("test", "test");
  ap.add_int("hidden", "h", i);
  ap.add_double("lr", "l", d);
  args.insert(args.begin(), "trainsim");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return ap.parse(static_cast<int>(argv.size()), argv.data());
}

TEST(ArgParser, IntegersMustFitAnInt) {
  int h = 64;
  double lr = 1e-3;
  // 4294967360 = 2^32 + 64: a long cut to int would train with hidden 64.
  EXPECT_EQ(parse({"--hidden", "4294967360"}, &h, &lr), 2);
  EXPECT_EQ(h, 64);
  EXPECT_EQ(parse({"--hidden=99999999999999999999999"}, &h, &lr), 2);
  EXPECT_EQ(parse({"--hidden", "2147483648"}, &h, &lr), 2);
  EXPECT_EQ(parse({"--hidden", "12x"}, &h, &lr), 2);
  EXPECT_EQ(parse({"--hidden", "2147483647"}, &h, &lr), 0);
  EXPECT_EQ(h, INT_MAX);
}

TEST(ArgParser, NumbersMustBeFinite) {
  int h = 64;
  double lr = 1e-3;
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "1e999", ""}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(parse({"--lr", bad}, &h, &lr), 2);
    EXPECT_EQ(lr, 1e-3);
  }
  EXPECT_EQ(parse({"--lr", "3e-4"}, &h, &lr), 0);
  EXPECT_EQ(lr, 3e-4);
}

TEST(ArgParser, RangesAreCheckedAtParseTime) {
  ArgParser ap("test", "test");
  double max_bytes = 0;
  int ranks = 0;
  ap.add_double("max-bytes", "b", &max_bytes, 0, 17179869184.0);
  ap.add_int("ranks", "r", &ranks, 0, 1 << 20);
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "trainsim");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    return ap.parse(static_cast<int>(argv.size()), argv.data());
  };
  EXPECT_EQ(run({"--max-bytes", "1e30"}), 2);
  EXPECT_EQ(max_bytes, 0);
  EXPECT_EQ(run({"--ranks", "-1"}), 2);
  EXPECT_EQ(run({"--max-bytes", "1e9", "--ranks", "8"}), 0);
  EXPECT_EQ(max_bytes, 1e9);
  EXPECT_EQ(ranks, 8);
}

TEST(ArgParser, TrainerRangesNameTheArgument) {
  TrainConfig c;
  c.global_batch = 8;
  c.micro_batch = 2;
  ASSERT_EQ(check_train_config(c, 1, "cpu"), "");
  TrainConfig bad = c;
  bad.lr = 0.0 / 0.0;
  EXPECT_NE(check_train_config(bad, 1, "cpu").find("--lr"), std::string::npos);
  bad = c;
  bad.lr = 5;
  EXPECT_NE(check_train_config(bad, 1, "cpu").find("--lr must be in (0, 1]"), std::string::npos);
  bad = c;
  bad.model.hidden = 1 << 20;
  bad.model.heads = 4;
  EXPECT_NE(check_train_config(bad, 1, "cpu").find("--hidden 1048576: at most 65536"), std::string::npos);
  bad = c;
  bad.model.hidden = 65536;
  bad.model.layers = 64;
  EXPECT_NE(check_train_config(bad, 1, "cpu").find("parameters per rank"), std::string::npos);
  bad = c;
  bad.model.seq = 1 << 20;
  bad.micro_batch = 8;
  EXPECT_NE(check_train_config(bad, 1, "cpu").find("activations"), std::string::npos);
  // tp x pp x dp past 2^31: compared in 64 bits, not wrapped onto the world size.
  bad = c;
  bad.tp = bad.pp = bad.dp = 1 << 11;  // 2^33
  EXPECT_NE(check_train_config(bad, 0, "cpu").find("8589934592"), std::string::npos);
}

TEST(ArgParser, CalibrateShapesAndOptionsHaveRanges) {
  EXPECT_NO_THROW(parse_model_op_shape("layers=4,hidden=128,heads=4,seq=64,micro_batch=2,tp=1,pp=2,dp=1"));
  EXPECT_THROW(parse_model_op_shape("hidden=1048576,heads=4"), std::invalid_argument);
  EXPECT_THROW(parse_model_op_shape("layers=64,hidden=65536,heads=4"), std::invalid_argument);
  CalibrationOptions o;
  EXPECT_EQ(check_calibration_options(o), "");
  o.max_collective_bytes = size_t{1} << 40;
  EXPECT_NE(check_calibration_options(o).find("--max-bytes"), std::string::npos);
  o = CalibrationOptions{};
  o.min_time_per_point_s = 1e9;
  EXPECT_NE(check_calibration_options(o).find("--min-time"), std::string::npos);
  o = CalibrationOptions{};
  o.model_gemm_shapes.push_back({1 << 20, 8, 8});
  EXPECT_NE(check_calibration_options(o).find("--gemm-shapes"), std::string::npos);
}

}  // namespace
}  // namespace trainsim::kernels

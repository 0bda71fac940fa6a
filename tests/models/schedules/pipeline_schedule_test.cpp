#include "models/schedules/pipeline_schedule.hpp"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

// REFERENCE.md "Pipeline schedules" with F = 1, B = 2 (B + W), W = 1.
TEST(PipelineSchedule, BubblesFollowThePublishedClosedForms) {
  BubbleInputs in{8, 1, 64, 1.0, 2.0, 1.0};
  EXPECT_DOUBLE_EQ(bubble_time_s("1f1b", in), 7 * 3.0);   // (p-1)(F+B)
  EXPECT_DOUBLE_EQ(bubble_time_s("gpipe", in), 7 * 3.0);
  EXPECT_DOUBLE_EQ(bubble_time_s("zb-h1", in), 7 * 1.0);  // (p-1)(F+B-2W): a third of 1F1B
  EXPECT_DOUBLE_EQ(bubble_time_s("zb-h2", in), 0.0);      // (p-1)(F+B-3W) <= 0
  EXPECT_DOUBLE_EQ(bubble_time_s("dualpipe", in), 3 * (3.0 + 2.0 - 3.0));  // (p/2-1)(F&B+B-3W)
  in.vpp = 4;
  EXPECT_DOUBLE_EQ(bubble_time_s("interleaved", in), 7 * 3.0 / 4);  // (p-1)(F+B)/v
  in.pp = 1;
  EXPECT_DOUBLE_EQ(bubble_time_s("1f1b", in), 0.0);
}

TEST(PipelineSchedule, ConstraintsNameTheField) {
  EXPECT_EQ(schedule_constraint("1f1b", 8, 1, 64), "");
  EXPECT_NE(schedule_constraint("interleaved", 8, 1, 64).find("plan.vpp >= 2"), std::string::npos);
  EXPECT_NE(schedule_constraint("interleaved", 8, 2, 12).find("multiple of plan.pp"), std::string::npos);
  EXPECT_NE(schedule_constraint("1f1b", 8, 2, 64).find("interleaved"), std::string::npos);
  EXPECT_NE(schedule_constraint("dualpipe", 7, 1, 64).find("even"), std::string::npos);
  EXPECT_TRUE(is_pipeline_schedule("zb-h1"));
  EXPECT_FALSE(is_pipeline_schedule("2f2b"));
}

}  // namespace
}  // namespace trainsim

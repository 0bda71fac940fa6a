#include "kernels/trainer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/byte_corpus.hpp"
#include "kernels/cpu_backend.hpp"

namespace trainsim::kernels {
namespace {

TrainConfig small_config(int steps) {
  TrainConfig c;
  c.model.layers = 2;
  c.model.hidden = 32;
  c.model.heads = 4;
  c.model.seq = 16;
  c.global_batch = 8;
  c.micro_batch = 2;
  c.steps = steps;
  c.compression = parse_compression_schedule("none", 1, 64, 0.01);
  return c;
}

std::vector<double> losses(const TrainConfig& c) {
  CpuBackend be;
  auto world = make_self_communicator();
  std::vector<double> out;
  for (const auto& l : train_gpt(be, *world, c)) out.push_back(l.loss);
  return out;
}

TEST(Trainer, LossFallsOnOneRank) {
  auto l = losses(small_config(20));
  EXPECT_NEAR(l.front(), std::log(256.0), 0.05);  // uniform prediction at initialisation
  EXPECT_LT(l.back(), l.front() - 1.0);
}

TEST(Trainer, GradientAccumulationMatchesOneBigMicroBatch) {
  auto c = small_config(5);
  auto a = losses(c);
  c.micro_batch = 8;  // one micro-batch instead of four
  auto b = losses(c);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * a[i]) << "step " << i;
}

// Compression changes the trajectory. Stated margins after 30 steps of this model: every
// single compressor within 0.25 nats of uncompressed; the progressive schedule, which also
// halves the optimizer steps of its last stage (sync every 2), within 0.45.
TEST(Trainer, CompressedFinalLossStaysWithinMargin) {
  auto c = small_config(30);
  double base = losses(c).back();
  struct Case { const char* method; double margin; };
  for (Case k : {Case{"int8", 0.25}, Case{"int4", 0.25}, Case{"fp8", 0.25}, Case{"2of4", 0.25},
                 Case{"topk", 0.25}, Case{"2of4@0,int4@10,none:2@20", 0.45}}) {
    SCOPED_TRACE(k.method);
    c.compression = parse_compression_schedule(k.method, 1, 64, 0.1);
    double l = losses(c).back();
    std::printf("  compression %-26s final loss %.4f (uncompressed %.4f, diff %+.4f)\n", k.method, l, base, l - base);
    EXPECT_LT(std::fabs(l - base), k.margin) << "uncompressed " << base << ", compressed " << l;
  }
}

// Analytic gradients of the whole model against central finite differences of the loss.
TEST(GptStage, GradientsMatchFiniteDifferences) {
  CpuBackend be;
  auto tp = make_self_communicator();
  GptConfig cfg{.layers = 1, .hidden = 8, .heads = 2, .seq = 5, .vocab = 256, .seed = 3, .init_std = 0.5f};
  GptStage stage(be, cfg, {}, 64);
  const int mb = 2, T = mb * cfg.seq;
  auto corpus = tokenize_bytes(generate_corpus(4096, 1));
  std::vector<int32_t> tok(T), tgt(T);
  for (int b = 0; b < mb; ++b) sample_sequence(corpus, 1, 0, b, cfg.seq, tok.data() + b * cfg.seq, tgt.data() + b * cfg.seq);
  auto loss = [&](bool grads) {
    auto a = stage.forward(mb, tok.data(), nullptr, *tp);
    std::vector<float> dx(size_t(T) * cfg.hidden);
    double l = stage.loss_and_head_backward(*a, tgt.data(), grads ? 1.0f : 0.0f, dx.data());
    if (grads) stage.backward(*a, dx.data(), nullptr, *tp);
    return l;
  };
  be.fill_zero(stage.grads(), stage.padded_count() * 4);
  loss(true);
  std::vector<float> g(stage.grads(), stage.grads() + stage.param_count());
  std::mt19937 rng(5);
  int checked = 0;
  for (int trial = 0; trial < 400 && checked < 40; ++trial) {
    size_t i = rng() % stage.param_count();
    if (std::fabs(g[i]) < 1e-2) continue;
    float saved = stage.params()[i];
    const float eps = 1e-2f;
    stage.params()[i] = saved + eps;
    double lp = loss(false);
    stage.params()[i] = saved - eps;
    double lm = loss(false);
    stage.params()[i] = saved;
    double fd = (lp - lm) / (2.0 * eps);
    EXPECT_NEAR(g[i], fd, 0.03 * std::fabs(fd) + 2e-3) << "param " << i;
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

TEST(Trainer, CompressionScheduleParses) {
  auto s = parse_compression_schedule("2of4@0,int4@10,none:4@20", 1, 64, 0.01);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].spec.kind, CompressionKind::kSparse24);
  EXPECT_EQ(s[1].start_step, 10);
  EXPECT_EQ(s[2].sync_every, 4);
  EXPECT_THROW(parse_compression_schedule("int8@5", 1, 64, 0.01), std::invalid_argument);
  EXPECT_THROW(parse_compression_schedule("int8@0,int4", 1, 64, 0.01), std::invalid_argument);
  EXPECT_THROW(parse_compression_schedule("zip", 1, 64, 0.01), std::invalid_argument);
}

TEST(Trainer, ConfigErrorsNameTheArgument) {
  auto c = small_config(1);
  c.tp = 3;
  EXPECT_NE(check_train_config(c, 3, "cpu").find("--tp 3"), std::string::npos);
  c.tp = 2;
  EXPECT_NE(check_train_config(c, 1, "cpu").find("mpirun -np 2"), std::string::npos);
  c = small_config(1);
  c.global_batch = 7;
  EXPECT_NE(check_train_config(c, 1, "cpu").find("--global-batch"), std::string::npos);
  EXPECT_EQ(check_train_config(small_config(1), 1, "cpu"), "");
}

}  // namespace
}  // namespace trainsim::kernels

#include "trainsim/log_conventions.h"

#include <gtest/gtest.h>

#include "trainsim/hardware.h"
#include "trainsim/model.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

// Llama-3-8B at seq 8192 on 8 H100: torchtitan's count is 6 x (8.03 B - the 128256 x 4096 input
// embedding) + 12 x 32 layers x 32 heads x 128 x 8192 (models/utils.py).
TEST(LogConventions, TorchtitanCountsNonEmbeddingParamsAndUnhalvedAttention) {
  const ModelSpec m = LoadModelPreset("llama3-8b").value();
  const HardwareSpec hw = LoadHardwarePreset("h100_sxm_80gb").value();
  Strategy s;
  s.world_size = 8;
  s.seq = 8192;
  s.gbs = 64;
  auto r = Simulate(m, hw, s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TorchtitanLogFigures t = TorchtitanConventionFigures(r.value(), m, hw, s);
  const double expected = 6 * (r->params_active - 128256.0 * 4096) + 12.0 * 32 * 32 * 128 * 8192;
  EXPECT_NEAR(t.flops_per_token, expected, 1e-6 * expected);
  EXPECT_NEAR(t.flops_per_token, 57.9e9, 0.2e9);
  EXPECT_DOUBLE_EQ(t.tps, r->tokens_per_s_per_gpu);
  EXPECT_NEAR(t.mfu_percent, 100 * expected * t.tps / 989.4e12, 1e-6);
}

TEST(LogConventions, HfTrainerSamplesAreTheGlobalBatchPerStep) {
  StepReport r;
  r.step_time_s = 2.0;
  Strategy s;
  s.gbs = 64;
  const HfTrainerLogFigures f = HfTrainerConventionFigures(r, s);
  EXPECT_DOUBLE_EQ(f.samples_per_second, 32.0);
  EXPECT_DOUBLE_EQ(f.steps_per_second, 0.5);
  r.step_time_s = 0;
  EXPECT_EQ(HfTrainerConventionFigures(r, s).samples_per_second, 0.0);
}

}  // namespace
}  // namespace trainsim

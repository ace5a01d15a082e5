// Attention without a flash kernel: two batched GEMMs over the whole score matrix plus the
// softmax passes over it, so its time grows with the square of the sequence whatever the mask.
#include <gtest/gtest.h>

#include "sim/sim_test_util.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

double AttentionMs(const Strategy& s, const char* model = "llama3-8b") {
  SimOptions opt;
  opt.detail = true;
  auto r = Simulate(LoadModel(model).value(), LoadHardwarePreset("a100_sxm_80gb").value(), s, opt);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return 0;
  for (const LayerReport& l : r->layers)
    for (const OpReport& op : l.ops)
      if (op.name == "core_attention") return 1e3 * (op.fwd_s + op.bwd_s);
  ADD_FAILURE() << "no core_attention op";
  return 0;
}

Strategy OneGpu(int seq, bool flash) {
  Strategy s = test::OneGpu(seq);
  s.recompute = Recompute::kFull;
  s.flash_attention = flash;
  return s;
}

TEST(UnfusedAttention, SlowerThanFlashAndQuadraticInTheSequence) {
  const double flash = AttentionMs(OneGpu(4096, true));
  const double unfused = AttentionMs(OneGpu(4096, false));
  const double unfused_long = AttentionMs(OneGpu(8192, false));
  EXPECT_GT(unfused, 1.5 * flash);
  // Twice the sequence: four times the score matrix (the GEMMs and the softmax passes).
  EXPECT_NEAR(unfused_long / unfused, 4.0, 0.4);
}

TEST(UnfusedAttention, MegatronLocalImplementationWithoutFlashIsUnfused) {
  Strategy s;
  ASSERT_TRUE(ApplyMegatronArgs("--transformer-impl local", s).ok());
  EXPECT_FALSE(s.flash_attention);
  Strategy f;
  ASSERT_TRUE(ApplyMegatronArgs("--transformer-impl local --use-flash-attn", f).ok());
  EXPECT_TRUE(f.flash_attention);
  Strategy te;
  ASSERT_TRUE(ApplyMegatronArgs("--tensor-model-parallel-size 2", te).ok());
  EXPECT_TRUE(te.flash_attention);
}

}  // namespace
}  // namespace trainsim

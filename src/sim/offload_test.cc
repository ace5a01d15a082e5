// Activation offload: the offloaded modules' saved tensors leave HBM (two layers' worth stay),
// and the copies cost time only where the host link cannot keep up with the layer's compute.
#include <gtest/gtest.h>

#include "sim/sim_test_util.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

Strategy MoeStrategy(int offload_modules) {
  Strategy s;
  s.world_size = 8;
  s.ep = 8;
  s.seq = 4096;
  s.mbs = 2;
  s.gbs = 64;
  s.exec.offload_modules = offload_modules;
  return s;
}

StepReport Step(const char* hw, const Strategy& s) {
  auto r = Simulate(LoadModel("qwen3-30b-a3b").value(), LoadHardwarePreset(hw).value(), s);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : StepReport{};
}

TEST(ActivationOffload, OffloadedModulesLeaveHbmAndCostOnlyWhatTheLinkCannotHide) {
  const int mods = kOffloadCoreAttn | kOffloadExpertFc1 | kOffloadMoeAct;
  for (const char* hw : {"h100_sxm_80gb", "gb200_nvl72"}) {
    const StepReport base = Step(hw, MoeStrategy(0));
    const StepReport off = Step(hw, MoeStrategy(mods));
    EXPECT_LT(off.stages[0].activation_bytes, 0.6 * base.stages[0].activation_bytes) << hw;
    EXPECT_GE(off.step_time_s, base.step_time_s) << hw;
    EXPECT_EQ(base.time.exposed_offload_s, 0) << hw;
  }
  // PCIe Gen5 (64 GB/s) cannot hide the copies of a short MoE layer; Grace's C2C (450 GB/s) can.
  EXPECT_GT(Step("h100_sxm_80gb", MoeStrategy(mods)).time.exposed_offload_s, 0);
  EXPECT_EQ(Step("gb200_nvl72", MoeStrategy(mods)).time.exposed_offload_s, 0);
}

TEST(ActivationOffload, BreakdownStillAddsUpToTheStep) {
  const StepReport r = Step("h100_sxm_80gb", MoeStrategy(kOffloadAll));
  const TimeBreakdown& t = r.time;
  const double sum = t.compute_s + t.exposed_tp_comm_s + t.exposed_cp_comm_s + t.exposed_ep_comm_s +
                     t.exposed_offload_s + t.pp_comm_s + t.bubble_s + t.exposed_dp_comm_s +
                     t.optimizer_s + t.overhead_s;
  EXPECT_NEAR(sum, r.step_time_s, 1e-6 * r.step_time_s);
}

// A module whose saved input the recompute policy drops has nothing to offload: layernorm
// recompute reruns the norm, so the QKV projection keeps no input.
TEST(ActivationOffload, RecomputedInputsHaveNothingToOffload) {
  Strategy s = MoeStrategy(kOffloadQkvLinear);
  const StepReport off = Step("h100_sxm_80gb", s);
  s.recompute = Recompute::kSelective;
  s.recompute_modules = kRecomputeLayerNorm;
  const StepReport rc = Step("h100_sxm_80gb", s);
  s.exec.offload_modules = 0;
  const StepReport rc_only = Step("h100_sxm_80gb", s);
  const StepReport none = Step("h100_sxm_80gb", MoeStrategy(0));
  EXPECT_NEAR(rc.stages[0].activation_bytes, rc_only.stages[0].activation_bytes,
              1e-9 * rc_only.stages[0].activation_bytes);
  EXPECT_LT(off.stages[0].activation_bytes, none.stages[0].activation_bytes);
}

// Whole-layer offload (torchtune enable_activation_offloading, Megatron --cpu-offloading) keeps
// two layers' activations in HBM and now pays its copies too.
TEST(ActivationOffload, WholeLayerOffloadKeepsTwoLayers) {
  Strategy s = test::OneGpu(8192);
  const ModelSpec m = LoadModel("llama3-8b").value();
  const HardwareSpec hw = LoadHardwarePreset("h100_sxm_80gb").value();
  const StepReport base = Simulate(m, hw, s).value();
  s.exec.offload_activations = true;
  const StepReport off = Simulate(m, hw, s).value();
  const double per_layer =
      (base.stages[0].activation_bytes - off.stages[0].activation_bytes) / (m.layers - 2);
  EXPECT_GT(per_layer, 0);
  EXPECT_LT(off.stages[0].activation_bytes, 0.2 * base.stages[0].activation_bytes);
  EXPECT_GE(off.step_time_s, base.step_time_s);
}

}  // namespace
}  // namespace trainsim

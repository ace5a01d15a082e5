// Host RAM of RL steps (issue 12: "offload and paged optimizers are bounded by host memory";
// src/rl/host_memory.cc): the per-phase bytes in closed form, the verdict when a plan exceeds
// or nears the server's memory, separate pools without the trainer's offload, and the report.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "rl/rl.h"
#include "rl/rl_test_util.h"
#include "trainsim/trainsim.h"
#include "util/units.h"

namespace trainsim {
namespace {

// One training stage with 10 bytes of weights, 20 of gradients and 60 of optimizer states per
// GPU; the engine's weight shard 15 per GPU.
StepReport Trainer(double weights = 10, double grads = 20, double optimizer = 60) {
  StepReport tr;
  StageReport st;
  st.weight_bytes = weights;
  st.grad_bytes = grads;
  st.optimizer_bytes = optimizer;
  st.static_bytes = weights + grads + optimizer;
  tr.stages = {st};
  return tr;
}

rl::Generation Engine(double weight_bytes = 15) {
  rl::Generation g;
  g.weight_bytes = weight_bytes;
  return g;
}

rl::RlPlan Plan(bool separate, bool kl = true) {
  rl::RlPlan p;
  p.separate = separate;
  p.kl_reference = kl;
  return p;
}

double Parts(const HostMemReport& h) {
  return h.optimizer_bytes + h.grad_bytes + h.param_bytes + h.activation_bytes + h.paged_bytes +
         h.reference_bytes + h.engine_bytes;
}

// Colocated: while vLLM generates, each GPU's trainer states (90) and the reference weights
// (10) sit on the host: 8 GPUs x 100 = 800 per node; scoring holds the sleeping engine (8 x 15),
// the reference and the swapped-out policy (8 x 10 each) = 280. The peak is generation.
TEST(RlHostMemory, ColocatedGenerationHoldsTheTrainerStatesTimesGpusPerNode) {
  const HostMemReport h = rl::RlHostBytes(Plan(false), Engine(), Trainer(), 8);
  EXPECT_EQ(h.phase, "generation");
  EXPECT_DOUBLE_EQ(h.param_bytes, 80);
  EXPECT_DOUBLE_EQ(h.grad_bytes, 160);
  EXPECT_DOUBLE_EQ(h.optimizer_bytes, 480);
  EXPECT_DOUBLE_EQ(h.reference_bytes, 80);
  EXPECT_DOUBLE_EQ(h.engine_bytes, 0);
  EXPECT_DOUBLE_EQ(h.bytes_per_node, 800);
  EXPECT_DOUBLE_EQ(h.pinned_bytes, 80);  // the reference; the offload is pageable
  EXPECT_EQ(h.gpus_per_node, 8);
  // Four GPUs to a server (a GB200 tray): half the bytes.
  EXPECT_DOUBLE_EQ(rl::RlHostBytes(Plan(false), Engine(), Trainer(), 4).bytes_per_node, 400);
}

// An engine shard larger than the trainer's states (a frozen-heavy trainer, a small TP): the
// peak moves to scoring, 8 x (100 engine + 10 reference + 10 policy) = 960, all pinned.
TEST(RlHostMemory, SleepingEngineCanMakeScoringThePeak) {
  const HostMemReport h = rl::RlHostBytes(Plan(false), Engine(100), Trainer(10, 0, 5), 8);
  EXPECT_EQ(h.phase, "scoring");
  EXPECT_DOUBLE_EQ(h.engine_bytes, 800);
  EXPECT_DOUBLE_EQ(h.reference_bytes, 80);
  EXPECT_DOUBLE_EQ(h.param_bytes, 80);
  EXPECT_DOUBLE_EQ(h.optimizer_bytes + h.grad_bytes, 0);
  EXPECT_DOUBLE_EQ(h.bytes_per_node, 960);
  EXPECT_DOUBLE_EQ(h.pinned_bytes, 960);
}

// A separate trainer keeps its states in HBM and no engine sleeps on its hosts: only the
// reference and, during its forward, the swapped-out policy: 8 x (10 + 10).
TEST(RlHostMemory, SeparateRolloutCountsNoTrainerOffload) {
  const HostMemReport h = rl::RlHostBytes(Plan(true), Engine(), Trainer(), 8);
  EXPECT_EQ(h.phase, "scoring");
  EXPECT_DOUBLE_EQ(h.optimizer_bytes + h.grad_bytes + h.engine_bytes, 0);
  EXPECT_DOUBLE_EQ(h.bytes_per_node, 160);
  // Without a KL term (DAPO) nothing is on the host at all: no phase, no host_mem block.
  const HostMemReport none = rl::RlHostBytes(Plan(true, false), Engine(), Trainer(), 8);
  EXPECT_DOUBLE_EQ(none.bytes_per_node, 0);
  EXPECT_TRUE(none.phase.empty());
}

// verl's reference is a module of its own whose offloaded weights stream in for its forward
// (reference_swap false): the policy is never swapped out, so a separate trainer's host holds
// only the reference, 8 x 10, and the colocated scoring peak loses the policy's 8 x 10.
TEST(RlHostMemory, VerlReferenceModuleSwapsNoPolicyOut) {
  rl::RlPlan sep = Plan(true);
  sep.reference_swap = false;
  const HostMemReport h = rl::RlHostBytes(sep, Engine(), Trainer(), 8);
  EXPECT_DOUBLE_EQ(h.reference_bytes, 80);
  EXPECT_DOUBLE_EQ(h.param_bytes, 0);
  EXPECT_DOUBLE_EQ(h.bytes_per_node, 80);
  rl::RlPlan col = Plan(false);
  col.reference_swap = false;
  const HostMemReport c = rl::RlHostBytes(col, Engine(100), Trainer(10, 0, 5), 8);
  EXPECT_DOUBLE_EQ(c.bytes_per_node, 880);  // 8 x (100 engine + 10 reference), no policy copy
  EXPECT_DOUBLE_EQ(c.param_bytes, 0);
}

// PPO offloads the critic's states too (same size): generation holds 8 x (2 x 90 + 10).
TEST(RlHostMemory, PpoOffloadsTheCriticToo) {
  rl::RlPlan p = Plan(false);
  p.critic = true;
  EXPECT_DOUBLE_EQ(rl::RlHostBytes(p, Engine(), Trainer(), 8).bytes_per_node, 1520);
}

// The training plan's own offloads (here 1000 bytes of optimizer states per node, pinned 200)
// stay on the host in every phase.
TEST(RlHostMemory, TrainingPlanOffloadsAddToEveryPhase) {
  StepReport tr = Trainer();
  tr.host_mem.optimizer_bytes = 1000;
  tr.host_mem.bytes_per_node = 1000;
  tr.host_mem.pinned_bytes = 200;
  const HostMemReport h = rl::RlHostBytes(Plan(false), Engine(), tr, 8);
  EXPECT_DOUBLE_EQ(h.bytes_per_node, 1800);
  EXPECT_DOUBLE_EQ(h.pinned_bytes, 280);
  EXPECT_DOUBLE_EQ(rl::RlHostBytes(Plan(true), Engine(), tr, 8).bytes_per_node, 1160);
}

ModelSpec Llama8b() {
  return LoadModelPreset("llama3-8b").value();
}
HardwareSpec H100(double host_gib = 0) {
  HardwareSpec hw = LoadHardwarePreset("h100_sxm_80gb").value();
  if (host_gib > 0) hw.host_mem_bytes = host_gib * units::kGiB;
  return hw;
}

using rl_test::Grpo;

StepReport Step(const HardwareSpec& hw, const Strategy& s) {
  auto r = Simulate(Llama8b(), hw, s);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : StepReport{};
}

// Llama-3-8B sharded over the node's 8 GPUs: the node holds the whole trainer (16-bit weights,
// fp32 gradients and Adam's 12 bytes) plus the 16-bit reference during generation, so the host
// bytes are the params times the bytes per parameter of the stage report, whatever the shard.
TEST(RlHostMemory, ColocatedGrpoHoldsTheWholeTrainerOnOneNode) {
  const StepReport r = Step(H100(), Grpo());
  const HostMemReport& h = r.host_mem;
  ASSERT_EQ(r.stages.size(), 1u);
  const StageReport& st = r.stages[0];
  EXPECT_EQ(h.gpus_per_node, 8);
  EXPECT_EQ(h.phase, "generation");
  EXPECT_NEAR(h.bytes_per_node, 8 * (st.static_bytes + st.weight_bytes), 1);
  EXPECT_NEAR(h.reference_bytes, 8 * st.weight_bytes, 1);
  // ZeRO-3 over 8 GPUs: 8 shards are the model, 2 bytes a parameter, and the stage's weight
  // bytes add FSDP's gathered-layer buffers (counted with the weights, as the offload time does).
  EXPECT_GE(h.reference_bytes, 2 * r.params_total);
  EXPECT_LT(h.reference_bytes, 1.6 * 2 * r.params_total);
  EXPECT_NEAR(h.bytes_per_node, Parts(h), 1);
  EXPECT_LE(h.pinned_bytes, h.bytes_per_node);
  EXPECT_EQ(h.capacity_bytes_per_node, 2048 * units::kGiB);
  EXPECT_TRUE(h.fits);
  EXPECT_TRUE(h.reason.empty()) << h.reason;  // ~165 GiB of 2 TiB
  EXPECT_TRUE(r.fits);
  bool sleep = false;
  for (const Assumption& a : r.assumed) sleep |= a.field == "rollout_sleep";
  EXPECT_TRUE(sleep);
}

// A server with too little memory: the plan is reported, not refused, with the same step time,
// fits false and the reason naming host RAM and the phase.
TEST(RlHostMemory, ExceedingHostRamIsReportedNotRefused) {
  const StepReport big = Step(H100(), Grpo());
  const StepReport small = Step(H100(64), Grpo());
  EXPECT_DOUBLE_EQ(small.step_time_s, big.step_time_s);
  EXPECT_FALSE(small.host_mem.fits);
  EXPECT_FALSE(small.fits);
  EXPECT_NE(small.host_mem.reason.find("host RAM"), std::string::npos) << small.host_mem.reason;
  EXPECT_NE(small.host_mem.reason.find("during generation"), std::string::npos);
  EXPECT_NE(FormatReportText(small, Llama8b(), H100(64), Grpo()).find("exceeds host RAM"),
            std::string::npos);
  const auto j = nlohmann::json::parse(FormatReportJson(small, Llama8b(), H100(64), Grpo()));
  EXPECT_FALSE(j["fits"].get<bool>());
  EXPECT_FALSE(j["host_mem"]["fits"].get<bool>());
  EXPECT_EQ(j["host_mem"]["phase"], "generation");
  EXPECT_GT(j["host_mem"]["reference_bytes"].get<double>(), 0);
  EXPECT_EQ(j["host_mem"]["engine_bytes"].get<double>(), 0);
  // A separate pool does not offload the trainer: the same 64 GiB hold it.
  Strategy sep = Grpo();
  sep.rollout_separate = true;
  sep.rollout_gpus = 8;
  const StepReport s = Step(H100(64), sep);
  EXPECT_TRUE(s.host_mem.fits) << s.host_mem.reason;
  EXPECT_LT(s.host_mem.bytes_per_node, small.host_mem.bytes_per_node);
  EXPECT_EQ(s.host_mem.optimizer_bytes + s.host_mem.grad_bytes, 0);
}

// Above 70 % of host RAM (Ray's object store reserves the other 30 %): fits, with a note.
TEST(RlHostMemory, NearTheLimitSaysWhatLimitsIt) {
  const double bytes = Step(H100(), Grpo()).host_mem.bytes_per_node;
  const StepReport r = Step(H100(bytes / 0.8 / units::kGiB), Grpo());
  EXPECT_TRUE(r.host_mem.fits);
  EXPECT_TRUE(r.fits);
  EXPECT_NE(r.host_mem.reason.find("Ray's object store"), std::string::npos) << r.host_mem.reason;
  EXPECT_NE(r.host_mem.reason.find("optimizer states"), std::string::npos);
  const StepReport roomy = Step(H100(bytes / 0.6 / units::kGiB), Grpo());
  EXPECT_TRUE(roomy.host_mem.reason.empty()) << roomy.host_mem.reason;
}

// A hardware file without host_mem_gib: the default is listed as assumed, once.
TEST(RlHostMemory, DefaultHostMemoryIsAssumedOnce) {
  HardwareSpec hw = H100();
  hw.host_mem_bytes = 0;
  const StepReport r = Step(hw, Grpo());
  int listed = 0;
  for (const Assumption& a : r.assumed) listed += a.field == "host_mem_gib";
  EXPECT_EQ(listed, 1);
  EXPECT_DOUBLE_EQ(r.host_mem.capacity_bytes_per_node, 2 * 8 * hw.hbm_bytes);
}

}  // namespace
}  // namespace trainsim

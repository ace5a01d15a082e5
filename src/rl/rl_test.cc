// RL steps (issue 12, "Tests"): the response-length law, the phases of a step and how they
// add up, decode time against response length, PPO's extra models, refusals by field, and the
// accuracy ratchet on shared/validation/cases/rl.jsonl.
#include "rl/rl.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "rl/rl_test_util.h"
#include "trainsim/trainsim.h"
#include "trainsim/validate.h"

namespace trainsim {
namespace {

ModelSpec Model(const char* id) {
  auto m = LoadModelPreset(id);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.value();
}

HardwareSpec Hw(const char* id) {
  auto h = LoadHardwarePreset(id);
  EXPECT_TRUE(h.ok()) << h.status().message();
  return h.value();
}

using rl_test::Grpo;

double Phase(const StepReport& r, const char* name) {
  for (const PhaseReport& p : r.phases)
    if (p.name == name) return p.time_s;
  ADD_FAILURE() << "no phase " << name;
  return 0;
}

TEST(Rl, TruncatedExponentialHasTheGivenMean) {
  for (double mean : {100.0, 1000.0, 3000.0}) {
    const double cap = 4096, mu = rl::ExponentialScaleForMean(mean, cap);
    EXPECT_NEAR(mu * (1 - std::exp(-cap / mu)), mean, 1e-6 * mean);
  }
  EXPECT_TRUE(std::isinf(rl::ExponentialScaleForMean(4096, 4096)));  // every response capped
}

TEST(Rl, ColocatedPhasesAddUpToTheStep) {
  auto r = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), Grpo());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->phases.size(), 4u);
  double sum = 0;
  for (const PhaseReport& p : r->phases) {
    EXPECT_GT(p.time_s, 0) << p.name;
    sum += p.time_s;
  }
  EXPECT_NEAR(sum, r->step_time_s, 1e-9 * r->step_time_s);
  EXPECT_EQ(r->rl.samples, 512);
  EXPECT_EQ(r->rl.replicas, 8);
  // GRPO: policy log-probs + reference = 2 forwards; one training pass.
  bool assumed_kl = false;
  for (const Assumption& a : r->assumed) assumed_kl |= a.field == "kl_reference";
  EXPECT_TRUE(assumed_kl);
  // The step carries the band of the "rl" regime (calibrate --band-cases rl.jsonl).
  EXPECT_EQ(r->uncertainty.regime, "rl");
  EXPECT_LT(r->step_time_s_low, r->step_time_s);
  EXPECT_GT(r->step_time_s_high, r->step_time_s);
}

// verl fully_async takes the old policy's log-probs from vLLM: one forward fewer per update
// (GRPO keeps the reference forward), nothing else changes.
TEST(Rl, RolloutLogprobsDropTheOldPolicyForward) {
  // Without the reference (whose weights are also swapped in from the host), scoring is only
  // the old policy's forward: none left when the engine returns the log-probs.
  Strategy s = Grpo();
  s.kl_reference = 0;
  auto base = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  s.rollout_logprobs = 1;
  auto engine = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  ASSERT_TRUE(base.ok() && engine.ok());
  EXPECT_GT(Phase(*base, "scoring"), 0);
  EXPECT_EQ(Phase(*engine, "scoring"), 0);
  EXPECT_DOUBLE_EQ(Phase(*engine, "training"), Phase(*base, "training"));
  EXPECT_DOUBLE_EQ(Phase(*engine, "generation"), Phase(*base, "generation"));
}

// verl's reference module streams its offloaded shard in (one copy over the host link), NeMo RL
// swaps the policy out and the reference in and back (three): scoring differs by exactly two
// shard copies, training and generation not at all, and the assumption says which.
TEST(Rl, VerlReferenceStreamsOneShardCopyNotThree) {
  Strategy s = Grpo();
  const HardwareSpec hw = Hw("h100_sxm_80gb");
  auto nemo = Simulate(Model("llama3-8b"), hw, s);
  s.exec.reference_swap = false;
  auto verl = Simulate(Model("llama3-8b"), hw, s);
  ASSERT_TRUE(nemo.ok() && verl.ok());
  double shard = 0;
  for (const StageReport& st : nemo->stages) shard = std::max(shard, st.weight_bytes);
  EXPECT_NEAR(Phase(*nemo, "scoring") - Phase(*verl, "scoring"),
              2 * shard / hw.host_link_bw_bytes_per_s, 1e-9);
  EXPECT_DOUBLE_EQ(Phase(*verl, "training"), Phase(*nemo, "training"));
  EXPECT_DOUBLE_EQ(Phase(*verl, "generation"), Phase(*nemo, "generation"));
  std::string said;
  for (const Assumption& a : verl->assumed)
    if (a.field == "reference_swap") said = a.value;
  EXPECT_EQ(said, "1 x the trainer's weight shard over the host link");
}

TEST(Rl, DecodeTimeScalesWithResponseLengthAtSmallBatch) {
  // 8 sequences on 8 engines: one sequence per engine, so every step reads all weights
  // (memory-bound): twice the response, about twice the decode time.
  Strategy s = Grpo();
  s.gbs = 8;
  s.group_size = 1;
  s.response_len = s.max_response_len = 1000;
  auto short_r = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  s.response_len = s.max_response_len = 2000;
  auto long_r = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  ASSERT_TRUE(short_r.ok() && long_r.ok());
  const double ratio = long_r->rl.decode_s / short_r->rl.decode_s;
  EXPECT_GT(ratio, 1.9);
  EXPECT_LT(ratio, 2.2);
  // Memory-bound: one step costs about the weight read at the achieved HBM bandwidth.
  const double per_step = short_r->rl.decode_s / short_r->rl.decode_steps;
  const double weight_read = 16.06e9 / (Hw("h100_sxm_80gb").hbm_bw_bytes_per_s);
  EXPECT_GT(per_step, weight_read);
  EXPECT_LT(per_step, 3 * weight_read);
}

TEST(Rl, EagerRolloutIsBoundByTheHostAtSmallBatch) {
  // One sequence per engine of an 8B model: the GPU's layer takes less than its kernels' host
  // issue (enforce_eager, 30 us a kernel), so decode slows; the other phases do not move.
  Strategy s = Grpo();
  s.gbs = 8;
  s.group_size = 1;
  auto graphs = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  s.rollout_eager = true;
  auto eager = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  ASSERT_TRUE(graphs.ok() && eager.ok()) << eager.status().message();
  EXPECT_GT(eager->rl.decode_s, 1.2 * graphs->rl.decode_s);  // 1.29x
  EXPECT_DOUBLE_EQ(Phase(*eager, "training"), Phase(*graphs, "training"));
  // A host that issues kernels for free leaves the GPU's time.
  s.exec.host_issue_us_per_kernel = 0;
  auto free_host = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  ASSERT_TRUE(free_host.ok());
  EXPECT_DOUBLE_EQ(free_host->rl.decode_s, graphs->rl.decode_s);
}

TEST(Rl, PpoScoresAndTrainsMoreModelsThanGrpo) {
  Strategy g = Grpo();
  g.group_size = 1;
  g.kl_reference = 0;  // no reference: scoring is forwards only (no host weight swap)
  Strategy p = g;
  p.stage = TrainStage::kPpo;  // + critic (forward and training) + reward model
  auto rg = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), g);
  auto rp = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), p);
  ASSERT_TRUE(rg.ok() && rp.ok());
  EXPECT_NEAR(Phase(*rp, "scoring") / Phase(*rg, "scoring"), 3.0, 1e-9);  // 3 vs 1 forwards
  EXPECT_NEAR(Phase(*rp, "training") / Phase(*rg, "training"), 2.0, 1e-9);
  EXPECT_NEAR(Phase(*rp, "generation"), Phase(*rg, "generation"), 1e-9);
}

// Refit moves the full BF16 model every step, whatever the engine's layout: colocated at NeMo
// RL's measured DeepSeek-V3 rates (1.342 TB in 12.2 s gather + 35 s IPC and load), separate
// pools by the same gather plus a broadcast of every tensor to every generation worker.
TEST(Rl, RefitMovesTheFullModelAtTheMeasuredRates) {
  Strategy s = Grpo();
  auto one = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  s.rollout_tp = 2;
  auto two = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  ASSERT_TRUE(one.ok() && two.ok());
  const double bytes = 2 * one->params_total;
  EXPECT_NEAR(one->rl.refit_s, bytes * (12.2 + 35.0) / 1.342e12, 1e-9);
  EXPECT_NEAR(two->rl.refit_s, one->rl.refit_s, 1e-9);
  s.rollout_separate = true;
  s.rollout_gpus = 8;
  auto sep = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  ASSERT_TRUE(sep.ok());
  EXPECT_GT(sep->rl.refit_s, bytes * 12.2 / 1.342e12);
  EXPECT_EQ(sep->rl.offload_s, 0);  // the trainer keeps its states on a separate pool
  EXPECT_GT(one->rl.offload_s, 0);  // colocated: all of them go to the host and back
}

// The colocated offload goes to pageable host memory: staged through a pinned buffer by the
// host CPU, 13.4 GB/s whatever the link (the rate behind NeMo RL's measured H100 refit). A
// GB200's NVLink-C2C (450 GB/s) used to make it 7x faster and its colocated rows 10-25 % fast.
TEST(Rl, PageableOffloadRunsAtTheHostRateNotTheLinkRate) {
  const ModelSpec m = Model("llama3-8b");
  const HardwareSpec h100 = Hw("h100_sxm_80gb"), gb200 = Hw("gb200_nvl72");
  auto rate = [&](const HardwareSpec& hw) {
    auto r = Simulate(m, hw, Grpo());
    EXPECT_TRUE(r.ok()) << r.status().message();
    double stat = 0;
    for (const StageReport& st : r->stages) stat = std::max(stat, st.static_bytes);
    return 2 * stat / r->rl.offload_s;
  };
  EXPECT_NEAR(rate(h100), 0.21 * 64e9, 1e6);
  EXPECT_NEAR(rate(gb200), 0.21 * 64e9, 1e6);
  HardwareSpec pcie3 = h100;
  pcie3.host_link_bw_bytes_per_s = 12e9;  // a link slower than the staging: the link bounds it
  EXPECT_NEAR(rate(pcie3), 12e9, 1e6);
}

// The per-step orchestration (3 s, NeMo RL v0.3 on x86) is host Python: on a Grace host it
// takes the host_cpus factor of data/inference_engines.json.
TEST(Rl, OrchestrationScalesWithTheHostCpu) {
  auto orchestration = [&](const char* hw) {
    auto r = Simulate(Model("llama3-8b"), Hw(hw), Grpo());
    EXPECT_TRUE(r.ok()) << r.status().message();
    return Phase(*r, "weight_sync") - r->rl.refit_s - r->rl.offload_s;
  };
  EXPECT_NEAR(orchestration("h100_sxm_80gb"), 3.0, 1e-9);
  EXPECT_NEAR(orchestration("gb200_nvl72"), 3.0 * 1.43, 1e-9);
}

TEST(Rl, SeparateAsyncRolloutOverlapsGenerationWithTraining) {
  Strategy s = Grpo();
  s.rollout_separate = true;
  s.rollout_gpus = 8;
  auto r = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double busy =
      std::max(Phase(*r, "generation"), Phase(*r, "scoring") + Phase(*r, "training"));
  EXPECT_NEAR(r->step_time_s, busy + Phase(*r, "weight_sync"), 1e-9 * r->step_time_s);
  s.async_rollout = false;
  auto sync = Simulate(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  ASSERT_TRUE(sync.ok());
  EXPECT_GT(sync->step_time_s, r->step_time_s);
}

// Multi-step off-policy (NeMo RL max_trajectory_age_steps >= 2): the straggler decodes beside
// the next steps' prompts, so the step's generation is its token volume at the full batch, no
// drain tail: faster than one-step async, and unchanged when the pool is colocated.
TEST(Rl, StreamingRolloutIsBoundByThroughputNotTheStraggler) {
  const ModelSpec m = Model("llama3-8b");
  const HardwareSpec hw = Hw("h100_sxm_80gb");
  Strategy s = Grpo();
  s.rollout_separate = true;
  s.rollout_gpus = 8;
  auto one = Simulate(m, hw, s);
  s.rollout_max_age = 4;
  auto four = Simulate(m, hw, s);
  ASSERT_TRUE(one.ok() && four.ok()) << four.status().message();
  EXPECT_LT(Phase(*four, "generation"), Phase(*one, "generation"));
  // 64 x 8 responses of 1024 over 8 engines: 64 per engine, 4 steps in flight -> batch 256,
  // and 64 x 1024 / 256 iterations.
  EXPECT_DOUBLE_EQ(four->rl.batch, 256);
  EXPECT_NEAR(four->rl.decode_steps, 64.0 * 1024 / 256, 1e-9);
  EXPECT_LT(four->rl.decode_steps, one->rl.decode_steps);
  Strategy c = Grpo();  // colocated: generation and training alternate, no streaming
  auto base = Simulate(m, hw, c);
  c.rollout_max_age = 4;
  auto aged = Simulate(m, hw, c);
  ASSERT_TRUE(base.ok() && aged.ok());
  EXPECT_DOUBLE_EQ(aged->step_time_s, base->step_time_s);
}

TEST(Rl, BadInputsAreRefusedByField) {
  const ModelSpec m = Model("llama3-8b");
  const HardwareSpec hw = Hw("h100_sxm_80gb");
  auto refused = [&](Strategy s, const char* field) {
    auto r = Simulate(m, hw, s);
    ASSERT_FALSE(r.ok()) << field;
    EXPECT_EQ(r.status().message().rfind(std::string(field) + ":", 0), 0u) << r.status().message();
  };
  Strategy s = Grpo();
  s.rl_minibatch = 7;
  refused(s, "rl_minibatch");
  s = Grpo();
  s.rollout_tp = 3;
  refused(s, "rollout_tp");
  s = Grpo();
  s.response_len = 5000;
  refused(s, "response_len");
  s = Grpo();
  s.rollout_gpus = 4;  // colocated
  refused(s, "rollout_gpus");
}

// What the cases' notes state is read: "8-step off-policy" is NeMo RL's
// max_trajectory_age_steps (streaming), "1-step" keeps the straggler-bound rollout, and a
// published old_log_prob phase of 0 s means the engine's log-probs (no trainer forward).
TEST(Rl, CaseNotesGiveTheRolloutAgeAndRolloutLogprobs) {
  const std::string cases = std::string(TRAINSIM_SHARED_DIR) + "/validation/cases/rl.jsonl";
  if (!std::filesystem::exists(cases)) GTEST_SKIP() << "no " << cases;
  auto all = LoadValidationCases({cases}, nullptr);
  ASSERT_TRUE(all.ok()) << all.status().message();
  int seen = 0;
  for (const ValidationCase& c : *all) {
    const Strategy& s = c.strategy;
    if (c.id == "rl_nemorl-028" || c.id == "rl_nemorl-022") {
      EXPECT_EQ(s.rollout_max_age, c.id == "rl_nemorl-028" ? 8 : 1) << c.id;
      ++seen;
    }
    if (c.id == "rl_verl-009" || c.id == "rl_verl-001") {
      EXPECT_EQ(s.rollout_logprobs, c.id == "rl_verl-009" ? 1 : -1) << c.id;
      ++seen;
    }
    // verl profile: fully_async pools stream (partial rollout); its Megatron backend recomputes
    // nothing unless the case says so (rl_verl-011 states full), FSDP recipes recompute fully.
    if (c.id == "rl_verl-006" || c.id == "rl_verl-008") {
      EXPECT_EQ(s.rollout_max_age, 2) << c.id;
      EXPECT_EQ(s.recompute, c.id == "rl_verl-008" ? Recompute::kNone : Recompute::kFull) << c.id;
      ++seen;
    }
    // Its Megatron example scripts roll out with vLLM eager (enforce_eager=True); the FSDP
    // rows keep CUDA graphs (rollout.yaml enforce_eager False).
    if (c.id == "rl_verl-011") {
      EXPECT_EQ(s.recompute, Recompute::kFull);
      EXPECT_TRUE(s.rollout_eager);
      ++seen;
    }
    if (c.id == "rl_verl-001") {
      EXPECT_FALSE(s.rollout_eager);
    }
  }
  EXPECT_EQ(seen, 7);
}

// The accuracy ratchet for the RL cases (tests/validation_ratchet.json, rl_*): every case
// scored, MAPE under the bounds.
TEST(Rl, RlCasesStayUnderTheRatchet) {
  const std::string cases = std::string(TRAINSIM_SHARED_DIR) + "/validation/cases/rl.jsonl";
  if (!std::filesystem::exists(cases)) GTEST_SKIP() << "no " << cases;
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation_ratchet.json");
  const nlohmann::json ratchet = nlohmann::json::parse(in);
  auto res = RunValidation({cases});
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->skipped, ratchet["rl_skipped_max"].get<int>());
  EXPECT_LE(res->mape, ratchet["rl_time_mape_max"].get<double>());
  for (const FamilyStats& f : res->families)
    EXPECT_LE(f.mape, ratchet["rl_family_mape_max"].get<double>()) << f.family;
}

}  // namespace
}  // namespace trainsim

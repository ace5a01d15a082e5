// SearchInference against an independent brute force on a tiny case (docs/INFERENCE.md,
// "Layout search").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "trainsim/infer_search.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

InferSearchSpec Tiny() {
  InferSearchSpec s;
  s.base.prompt_len = 512;
  s.base.output_len = 128;
  s.base.engine = "vllm";
  s.gpus = 4;
  s.batches = {1, 8, 64};
  s.top = 1000;
  return s;
}

struct Best {
  double tps = 0;
  int tp = 0, pp = 0;
  double batch = 0;
  int feasible = 0;
};

// Every (tp, pp, batch) over 4 GPUs, simulated one by one, the SLO checked here.
Best BruteForce(const ModelSpec& m, const HardwareSpec& hw, const InferSearchSpec& s) {
  Best best;
  for (int tp : {1, 2, 4})
    for (int pp : {1, 2, 4}) {
      if (tp * pp > 4 || 4 % (tp * pp) != 0) continue;
      for (double b : s.batches) {
        InferenceSpec x = s.base;
        x.gpus = 4;
        x.tp = tp;
        x.pp = pp;
        x.batch = b;
        auto r = SimulateInference(m, hw, x);
        if (!r.ok() || !r->fits) continue;
        if (s.slo_tpot_s > 0 && r->tpot_s > s.slo_tpot_s) continue;
        if (s.slo_ttft_s > 0 && r->ttft_s > s.slo_ttft_s) continue;
        ++best.feasible;
        if (r->output_tokens_per_s > best.tps)
          best = {r->output_tokens_per_s, tp, pp, b, best.feasible};
      }
    }
  return best;
}

TEST(InferSearch, MatchesBruteForceWithAndWithoutSlo) {
  const ModelSpec m = LoadModelPreset("llama3-8b").value();
  const HardwareSpec hw = LoadHardwarePreset("h100_sxm_80gb").value();
  InferSearchSpec s = Tiny();
  for (double slo_tpot : {0.0, 0.008}) {
    s.slo_tpot_s = slo_tpot;
    const Best want = BruteForce(m, hw, s);
    auto got = SearchInference(m, hw, s);
    ASSERT_TRUE(got.ok());
    ASSERT_FALSE(got->ranked.empty());
    EXPECT_EQ(got->feasible, want.feasible);
    EXPECT_DOUBLE_EQ(got->ranked[0].output_tokens_per_s, want.tps);
    EXPECT_EQ(got->ranked[0].tp, want.tp);
    EXPECT_EQ(got->ranked[0].pp, want.pp);
    EXPECT_EQ(got->ranked[0].batch, want.batch);
    for (const InferCandidate& c : got->ranked) {
      if (slo_tpot > 0) {
        EXPECT_LE(c.tpot_s, slo_tpot);
      }
      EXPECT_LE(c.output_tokens_per_s, got->ranked[0].output_tokens_per_s);
    }
  }
}

TEST(InferSearch, TighterSloCostsThroughputAndCostIsPricePerToken) {
  const ModelSpec m = LoadModelPreset("llama3-8b").value();
  const HardwareSpec hw = LoadHardwarePreset("h100_sxm_80gb").value();
  InferSearchSpec s = Tiny();
  s.objective = "cost";
  s.price_usd_per_gpu_hour = 2.0;
  auto free = SearchInference(m, hw, s);
  s.slo_tpot_s = 0.008;
  auto tight = SearchInference(m, hw, s);
  ASSERT_TRUE(free.ok() && tight.ok());
  ASSERT_FALSE(tight->ranked.empty());
  EXPECT_LT(tight->ranked[0].output_tokens_per_s, free->ranked[0].output_tokens_per_s);
  const InferCandidate& c = free->ranked[0];
  EXPECT_NEAR(c.usd_per_million_output_tokens, 2.0 * 4 / 3600 / c.output_tokens_per_s * 1e6, 1e-9);
  const auto j = nlohmann::json::parse(InferSearchJson(free.value()));
  EXPECT_EQ(j["kind"], "infer_search");
  EXPECT_EQ(j["best"]["tp"], c.tp);
}

TEST(InferSearch, ImpossibleSloLeavesNoCandidateAndBadObjectiveIsRefused) {
  const ModelSpec m = LoadModelPreset("llama3-8b").value();
  const HardwareSpec hw = LoadHardwarePreset("h100_sxm_80gb").value();
  InferSearchSpec s = Tiny();
  s.slo_tpot_s = 1e-6;
  auto r = SearchInference(m, hw, s);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ranked.empty());
  EXPECT_EQ(r->feasible, 0);
  s.objective = "latency";
  EXPECT_FALSE(SearchInference(m, hw, s).ok());
}

}  // namespace
}  // namespace trainsim

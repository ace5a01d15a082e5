#include "trainsim/uncertainty.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "spec/embedded.h"
#include "trainsim/trainsim.h"
#include "validate/validate_test_cases.h"

namespace trainsim {
namespace {

TEST(HardwareGeneration, OfThePresets) {
  const std::pair<const char*, const char*> want[] = {
      {"v100_sxm_32gb", "volta"},   {"a100_sxm_40gb", "ampere"},     {"a100_pcie_80gb", "ampere"},
      {"l40s_48gb", "ada"},         {"h100_sxm_80gb", "hopper"},     {"h800_sxm_80gb", "hopper"},
      {"h200_sxm_141gb", "hopper"}, {"b200_sxm_180gb", "blackwell"}, {"gb300_nvl72", "blackwell"},
      {"mi300x_192gb", "amd"},      {"mi355x_288gb", "amd"}};
  for (const auto& [id, gen] : want) {
    auto hw = LoadHardwarePreset(id);
    ASSERT_TRUE(hw.ok()) << id;
    EXPECT_EQ(HardwareGeneration(hw.value()), gen) << id;
  }
  HardwareSpec custom;
  custom.id = "my_accelerator";
  custom.peak_bf16_flops = 1e15;
  custom.peak_fp8_flops = 2e15;
  EXPECT_EQ(HardwareGeneration(custom), "hopper");
}

TEST(RegimeNames, MostSpecificFirstEndingWithAll) {
  RegimeFeatures f;
  f.generation = "hopper";
  f.multi_node = true;
  f.moe = false;
  f.size_bucket = 1;
  EXPECT_EQ(RegimeNames(f),
            (std::vector<std::string>{"hopper/multi-node/dense/10-100B", "hopper/multi-node/dense",
                                      "hopper/multi-node", "hopper", "all"}));
}

TEST(RegimeOf, ReadsModelSizeScaleAndKind) {
  auto m = LoadModelPreset("mixtral-8x7b");
  auto hw = LoadHardwarePreset("b200_sxm_180gb");
  ASSERT_TRUE(m.ok() && hw.ok());
  Strategy s;
  s.world_size = 64;
  const RegimeFeatures f = RegimeOf(m.value(), hw.value(), s);
  EXPECT_EQ(f.generation, "blackwell");
  EXPECT_TRUE(f.multi_node);
  EXPECT_TRUE(f.moe);
  EXPECT_EQ(f.size_bucket, 1);  // 46.7 B parameters
}

TEST(EstimateUncertainty, EveryPredictionHasABandAroundIt) {
  auto m = LoadModelPreset("llama3-8b");
  auto hw = LoadHardwarePreset("h100_sxm_80gb");
  ASSERT_TRUE(m.ok() && hw.ok());
  Strategy s;
  s.world_size = 8;
  s.gbs = 32;
  s.seq = 4096;
  auto r = Simulate(m.value(), hw.value(), s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_LT(r->step_time_s_low, r->step_time_s);
  EXPECT_GT(r->step_time_s_high, r->step_time_s);
  EXPECT_NE(r->uncertainty.regime, "none");
  EXPECT_GT(r->uncertainty.cases, 0);
  EXPECT_DOUBLE_EQ(r->step_time_s_low, r->step_time_s * (1 - r->uncertainty.rel_below));
  EXPECT_DOUBLE_EQ(r->step_time_s_high, r->step_time_s * (1 + r->uncertainty.rel_above));
  const auto j = nlohmann::json::parse(FormatReportJson(r.value(), m.value(), hw.value(), s));
  EXPECT_LT(j["step_time_s_low"].get<double>(), j["step_time_s"].get<double>());
  EXPECT_GT(j["step_time_s_high"].get<double>(), j["step_time_s"].get<double>());
  EXPECT_EQ(j["uncertainty"]["regime"], std::string(r->uncertainty.regime));
  const std::string text = FormatReportText(r.value(), m.value(), hw.value(), s);
  EXPECT_NE(text.find(" s ± "), std::string::npos) << text;
}

TEST(EmbeddedUncertaintyTable, IsWellFormed) {
  const std::string_view* text = detail::FindEmbeddedFile("uncertainty.json");
  ASSERT_NE(text, nullptr);
  const auto j = nlohmann::json::parse(*text);
  for (const char* key :
       {"about", "generated_by", "date", "case_files", "cases", "min_cases", "min_families"})
    EXPECT_TRUE(j.contains(key)) << key;
  bool all = false;
  for (const auto& r : j["regimes"]) {
    const std::string name = r["regime"];
    all |= name == "all";
    // "all", "uncalibrated" and "rl" are kept whatever their size (RegimeBands).
    if (name != "all" && name != kUncalibratedRegime && name != kRlRegime &&
        name != kStackInferredRegime && name != kStackInferredFinetuneRegime) {
      EXPECT_GE(r["cases"].get<int>(), j["min_cases"].get<int>()) << name;
      EXPECT_GE(r["families"].get<int>(), j["min_families"].get<int>()) << name;
    }
    EXPECT_LE(r["error_q10"].get<double>(), r["error_q90"].get<double>()) << name;
    EXPECT_GE(r["rel_below"].get<double>(), 0.01) << name;
    EXPECT_GE(r["rel_above"].get<double>(), 0.01) << name;
  }
  EXPECT_TRUE(all);
}

// Held-out results with known errors: n cases of one regime from three families, errors -0.19,
// -0.17, ... (step 0.02), and one skipped case.
struct Synthetic {
  std::vector<ValidationCase> cases;
  CrossValidation cv;
};

Synthetic MakeSynthetic(int n) {
  Synthetic s;
  for (int i = 0; i < n; ++i) {
    s.cases.push_back(
        ParseValidationCase(testing::BuiltinCaseVariant(i + 1), "t").value());  // 32 A100s
    CaseResult r;
    r.id = s.cases.back().id;
    static const std::string kFamilies[] = {"f0", "f1", "f2"};
    r.family = kFamilies[i % 3];
    r.error = -0.19 + 0.02 * i;
    s.cv.held_out.cases.push_back(r);
  }
  CaseResult skipped;
  skipped.id = "builtin-999";
  skipped.skipped = true;
  s.cv.held_out.cases.push_back(skipped);
  return s;
}

TEST(RegimeBands, HoldEightyPercentOfTheHeldOutCases) {
  const Synthetic s = MakeSynthetic(20);
  const std::vector<RegimeBand> bands = RegimeBands(s.cv, s.cases);
  // GPT-1.7B on 32 A100s: ampere/multi-node/dense/<10B serves all 20 cases; "all", left with
  // none, falls back to every case.
  ASSERT_EQ(bands.size(), 2u);
  EXPECT_EQ(bands[0].regime, "all");
  EXPECT_EQ(bands[1].regime, "ampere/multi-node/dense/<10B");
  for (const RegimeBand& b : bands) {
    EXPECT_EQ(b.cases, 20) << b.regime;
    EXPECT_EQ(b.families, 3) << b.regime;
    // Type-7 quantiles of -0.19..0.19 step 0.02: p10 = -0.19 + 1.9 * 0.02, p90 symmetric.
    EXPECT_NEAR(b.error_q10, -0.152, 1e-12);
    EXPECT_NEAR(b.error_q90, 0.152, 1e-12);
    EXPECT_NEAR(b.rel_below, 1 - std::exp(-b.log_half_width), 1e-12);
    EXPECT_NEAR(b.rel_above, std::expm1(b.log_half_width), 1e-12);
    int inside = 0;
    for (const CaseResult& r : s.cv.held_out.cases) {
      if (r.skipped) continue;
      const double measured = 1 / (1 + r.error);  // for a prediction of 1 s
      inside += 1 - b.rel_below <= measured && measured <= 1 + b.rel_above;
    }
    EXPECT_EQ(inside, 16) << b.regime;  // 80 % of 20
  }
}

TEST(RegimeBands, RegimesNeedEnoughCasesAndSources) {
  EXPECT_EQ(RegimeBands(MakeSynthetic(10).cv, MakeSynthetic(10).cases).size(), 1u);  // "all"
  Synthetic s = MakeSynthetic(20);
  const std::string a = "a", b = "b";  // (assigning literals trips GCC 12's -Wrestrict)
  for (size_t i = 0; i < s.cv.held_out.cases.size(); ++i)
    s.cv.held_out.cases[i].family = i < 10 ? a : b;
  const std::vector<RegimeBand> two = RegimeBands(s.cv, s.cases);
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(two[0].regime, "all");
  EXPECT_EQ(two[0].cases, 20);
  EXPECT_EQ(RegimeBands(s.cv, s.cases, RegimeRule{15, 2}).size(), 2u);
}

// A regime's band comes from the cases it serves, not from its children's: 20 well-predicted
// A100 cases are served by their own regime, and "all" is left with 8 H100 and 8 V100 cases
// (too few for a regime of their own) whose errors are ten times larger.
TEST(RegimeBands, ARegimeBandsTheCasesItServes) {
  Synthetic s = MakeSynthetic(36);
  const HardwareSpec h100 = LoadHardware("h100_sxm_80gb").value();
  const HardwareSpec v100 = LoadHardware("v100_sxm_32gb").value();
  for (int i = 20; i < 36; ++i) {
    s.cases[i].hw = i < 28 ? h100 : v100;
    s.cv.held_out.cases[i].error = (i % 2 ? 0.3 : -0.3) * (1 + (i % 4) * 0.1);
  }
  for (int i = 0; i < 20; ++i) s.cv.held_out.cases[i].error = 0.001 * (i - 10);
  const std::vector<RegimeBand> bands = RegimeBands(s.cv, s.cases);
  ASSERT_EQ(bands.size(), 2u);
  EXPECT_EQ(bands[0].regime, "all");
  EXPECT_EQ(bands[0].cases, 16);
  EXPECT_EQ(bands[1].cases, 20);
  EXPECT_GT(bands[0].rel_below, 0.2);
  EXPECT_LT(bands[1].rel_above, 0.02);
  // The honest check: each family scored against bands built from the other two (two
  // families: no regime but "all", over their every case). The 20 well-predicted cases fall
  // inside; some of the 16 others, whose errors the band's 80th percentile does not reach, do not.
  const BandCheck check = HeldOutBandCoverage(s.cv, s.cases);
  EXPECT_EQ(check.cases, 36);
  EXPECT_GE(check.inside, 20);
  EXPECT_LT(check.inside, 36);
  EXPECT_NEAR(check.coverage, check.inside / 36.0, 1e-12);
  EXPECT_GT(check.mean_half_width, 0.2);
}

// A run whose stack nobody named takes the stack-inferred band where it is wider; an RL step
// keeps its own band; the report says so either way.
TEST(WidenForInferredStack, TakesTheStackInferredBandWhereWider) {
  const std::string_view* text = detail::FindEmbeddedFile("uncertainty.json");
  ASSERT_NE(text, nullptr);
  double inferred = 0;
  const nlohmann::json table = nlohmann::json::parse(*text);
  for (const auto& r : table["regimes"])
    if (r["regime"] == kStackInferredRegime)
      inferred = r["rel_below"].get<double>() + r["rel_above"].get<double>();
  ASSERT_GT(inferred, 0) << "the embedded table has no stack-inferred band";
  StepReport r;
  r.step_time_s = 2;
  r.uncertainty.regime = "hopper/multi-node/dense";
  r.uncertainty.rel_below = r.uncertainty.rel_above = 0.05;
  const Strategy pretrain;
  WidenForInferredStack(r, pretrain);
  EXPECT_TRUE(r.uncertainty.stack_inferred);
  EXPECT_EQ(r.uncertainty.regime, kStackInferredRegime);
  EXPECT_NEAR(r.uncertainty.rel_below + r.uncertainty.rel_above, inferred, 1e-12);
  EXPECT_DOUBLE_EQ(r.step_time_s_low, 2 * (1 - r.uncertainty.rel_below));
  EXPECT_DOUBLE_EQ(r.step_time_s_high, 2 * (1 + r.uncertainty.rel_above));
  StepReport wide = r;  // already wider: kept
  wide.uncertainty.regime = "uncalibrated";
  wide.uncertainty.rel_below = 0.5, wide.uncertainty.rel_above = 0.9;
  WidenForInferredStack(wide, pretrain);
  EXPECT_EQ(wide.uncertainty.regime, "uncalibrated");
  StepReport rl;
  rl.uncertainty.regime = kRlRegime;
  rl.uncertainty.rel_below = rl.uncertainty.rel_above = 0.01;
  Strategy grpo;
  grpo.stage = TrainStage::kGrpo;
  WidenForInferredStack(rl, grpo);
  EXPECT_EQ(rl.uncertainty.regime, kRlRegime);
  EXPECT_TRUE(rl.uncertainty.stack_inferred);
  // A fine-tuning run takes the fine-tuning stack-inferred band.
  StepReport ft;
  ft.step_time_s = 1;
  ft.uncertainty.regime = "finetune";
  ft.uncertainty.rel_below = ft.uncertainty.rel_above = 0.01;
  Strategy lora;
  lora.method = FtMethod::kLora;
  WidenForInferredStack(ft, lora);
  EXPECT_EQ(ft.uncertainty.regime, kStackInferredFinetuneRegime);
}

// The stack-inferred regime comes from the blinded held-out residuals (non-RL), whatever its
// size, and the blind coverage check takes the wider band for each blinded case.
TEST(RegimeBands, StackInferredFromTheBlindedResiduals) {
  const Synthetic s = MakeSynthetic(20);
  CrossValidation blind = s.cv;
  for (CaseResult& r : blind.held_out.cases) r.error *= 3;  // a stack guessed: larger errors
  const std::vector<RegimeBand> bands = RegimeBands(s.cv, s.cases, {}, &blind);
  const RegimeBand* inferred = nullptr;
  const RegimeBand* own = nullptr;
  for (const RegimeBand& b : bands) {
    if (b.regime == kStackInferredRegime) inferred = &b;
    if (b.regime == "ampere/multi-node/dense/<10B") own = &b;
  }
  ASSERT_NE(inferred, nullptr);
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(inferred->cases, 20);
  EXPECT_GT(inferred->rel_below, own->rel_below);
  EXPECT_EQ(RegimeBands(s.cv, s.cases).size(), bands.size() - 1);  // no blind: no such regime
  const BandCheck published = HeldOutBandCoverage(s.cv, s.cases);
  const BandCheck guessed = InferredStackBandCoverage(s.cv, blind, s.cases);
  EXPECT_EQ(guessed.cases, published.cases);
  EXPECT_GT(guessed.mean_half_width, published.mean_half_width);
  EXPECT_GE(guessed.coverage, 0.7);
}

TEST(RegimeBands, TheBandAlwaysContainsThePrediction) {
  Synthetic s = MakeSynthetic(20);
  for (CaseResult& r : s.cv.held_out.cases) r.error = 0.001;
  const std::vector<RegimeBand> bands = RegimeBands(s.cv, s.cases);
  ASSERT_FALSE(bands.empty());
  EXPECT_DOUBLE_EQ(bands[0].rel_below, 0.01);
  EXPECT_DOUBLE_EQ(bands[0].rel_above, 0.01);
}

// A fine-tuning stage or method has regimes of its own: its errors (host-bound short steps,
// adapter kernels) are not those of pre-training runs on the same hardware.
TEST(RegimeNames, FineTuningRunsHaveTheirOwnRegimes) {
  RegimeFeatures f{"ampere", false, false, 0, true};
  EXPECT_EQ(RegimeNames(f), (std::vector<std::string>{"finetune/ampere", "finetune", "all"}));
  auto m = LoadModel("llama3-8b");
  auto hw = LoadHardwarePreset("a100_sxm_80gb");
  ASSERT_TRUE(m.ok() && hw.ok());
  Strategy s;
  s.world_size = 8;
  s.method = FtMethod::kLora;
  EXPECT_TRUE(RegimeOf(m.value(), hw.value(), s).finetune);
  s.method = FtMethod::kFull;
  EXPECT_FALSE(RegimeOf(m.value(), hw.value(), s).finetune);
  s.stage = TrainStage::kSft;
  EXPECT_TRUE(RegimeOf(m.value(), hw.value(), s).finetune);
  // The shipped table has a "finetune" band (calibrate --band-cases finetune.jsonl).
  s.gbs = 8;
  s.seq = 1024;
  auto r = Simulate(m.value(), hw.value(), NormaliseStrategy(s), SimOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->uncertainty.regime.substr(0, 8), "finetune");
}

// RL steps have a regime of their own ("rl", kept with two source families), never "finetune".
TEST(RegimeNames, RlStepsHaveTheirOwnRegime) {
  RegimeFeatures f{"hopper", true, false, 0, false, true};
  EXPECT_EQ(RegimeNames(f), (std::vector<std::string>{"rl/hopper", "rl", "all"}));
  auto m = LoadModel("llama3-8b");
  auto hw = LoadHardwarePreset("h100_sxm_80gb");
  ASSERT_TRUE(m.ok() && hw.ok());
  Strategy s;
  s.world_size = 8;
  s.stage = TrainStage::kGrpo;
  const RegimeFeatures g = RegimeOf(m.value(), hw.value(), s);
  EXPECT_TRUE(g.rl);
  EXPECT_FALSE(g.finetune);
}

TEST(UncertaintyTableJson, HasItsProvenance) {
  const Synthetic s = MakeSynthetic(20);
  const std::string text = UncertaintyTableJson(RegimeBands(s.cv, s.cases), {"cases.jsonl"},
                                                "trainsim calibrate ...", "2026-11-24", 20);
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["date"], "2026-11-24");
  EXPECT_EQ(j["generated_by"], "trainsim calibrate ...");
  EXPECT_EQ(j["case_files"][0], "cases.jsonl");
  EXPECT_EQ(j["cases"], 20);
  EXPECT_EQ(j["min_cases"], 15);
  EXPECT_EQ(j["min_families"], 3);
  EXPECT_EQ(j["regimes"].size(), 2u);
  EXPECT_EQ(j["regimes"][0]["regime"], "all");
  EXPECT_EQ(j["regimes"][0]["families"], 3);
}

}  // namespace
}  // namespace trainsim

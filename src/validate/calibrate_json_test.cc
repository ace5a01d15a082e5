#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "trainsim/hardware.h"
#include "trainsim/results_json.h"

namespace trainsim {
namespace {

CalibrationResult Fit() {
  CalibrationResult r;
  r.hardware = "h100_sxm_80gb";
  r.case_ids = {"mbridge-001", "mbridge-002"};
  r.fitted = {"gemm_max", "mem"};
  r.mape_before = 0.2;
  r.mape_after = 0.05;
  r.eff.gemm_max = 0.712345678;
  return r;
}

TEST(CalibrationEfficiencyJson, IsThePresetBlockInThePresetsOrder) {
  const std::string text = CalibrationEfficiencyJson(Fit(), "2026-11-23");
  EXPECT_EQ(text.find('\n'), std::string::npos);  // one line by default
  EXPECT_EQ(text.rfind(R"({"gemm_max":0.7123,"grouped_gemm":)", 0), 0u);
  const auto j = nlohmann::ordered_json::parse(text);
  EXPECT_EQ(j.back(), "2026-11-23");
  EXPECT_EQ(j["fitted_on"], "2 public cases (mbridge-001...); free: gemm_max,mem");
  EXPECT_EQ(j.size(),
            25u);  // 23 efficiencies (with attn_flex_*, mem_fused, kernel_floor_us, gemm_k_half) +
                   // 2 notes
}

TEST(CalibrationEfficiencyJson, IsAcceptedBackAsAPresetsEfficiency) {
  auto preset = nlohmann::ordered_json::parse(R"({"id": "x", "peak_tflops": {"bf16": 100},
      "hbm_gib": 10, "hbm_tbps": 1, "scaleup_gbps_per_dir": 100, "nic_gbps_per_gpu": 100})");
  preset["efficiency"] = nlohmann::ordered_json::parse(CalibrationEfficiencyJson(Fit(), "d"));
  auto hw = ParseHardwareJson(preset.dump(), "x");
  ASSERT_TRUE(hw.ok()) << hw.status().message();
  EXPECT_DOUBLE_EQ(hw->eff.gemm_max, 0.7123);
}

TEST(CalibrationJson, ListsEveryFit) {
  const auto j = nlohmann::json::parse(CalibrationJson({Fit(), Fit()}, "d"));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["hardware"], "h100_sxm_80gb");
  EXPECT_EQ(j[0]["cases"].size(), 2u);
  EXPECT_EQ(j[0]["mape_after"].get<double>(), 0.05);
  EXPECT_EQ(j[0]["efficiency"]["gemm_max"].get<double>(), 0.7123);
}

}  // namespace
}  // namespace trainsim

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "trainsim/calibrate.h"
#include "trainsim/results_json.h"
#include "validate/validate_test_cases.h"

namespace trainsim {
namespace {

// n cases of each family; the second family's cases run on `hw_b`.
std::vector<ValidationCase> TwoFamilies(int n, const std::string& hw_b = "a100_sxm_80gb") {
  std::vector<ValidationCase> out;
  for (const std::string family : {"alpha", "beta"})
    for (int i = 1; i <= n; ++i) {
      nlohmann::json j = nlohmann::json::parse(testing::BuiltinCaseVariant(i, family));
      if (family == "beta") j["hardware"] = hw_b;
      out.push_back(ParseValidationCase(j.dump(), "t").value());
    }
  return WithNominalEfficiency(out);
}

TEST(LeaveOneSourceOut, HoldsOutEachFamilyOnce) {
  auto cv = LeaveOneSourceOut(TwoFamilies(4), "");
  ASSERT_TRUE(cv.ok()) << cv.status().message();
  EXPECT_TRUE(cv->by_source);
  EXPECT_EQ(cv->folds, 2);
  EXPECT_EQ(cv->held_out.n + cv->held_out.skipped, 8);
  ASSERT_EQ(cv->sources.size(), 2u);
  EXPECT_EQ(cv->sources[0].family, "alpha");
  EXPECT_EQ(cv->sources[0].cases, 4);
  EXPECT_TRUE(cv->sources[0].unfitted_hardware.empty());
  // Family order: alpha's cases first.
  EXPECT_EQ(cv->held_out.cases.front().id, "alpha-101");
  EXPECT_EQ(cv->held_out.cases.back().id, "beta-104");
}

TEST(LeaveOneSourceOut, HardwareNoOtherFamilyMeasuredStaysNominal) {
  const auto cases = TwoFamilies(4, "h100_sxm_80gb");
  auto cv = LeaveOneSourceOut(cases, "");
  ASSERT_TRUE(cv.ok()) << cv.status().message();
  ASSERT_EQ(cv->sources.size(), 2u);
  EXPECT_EQ(cv->sources[0].unfitted_hardware, std::vector<std::string>{"a100_sxm_80gb"});
  EXPECT_EQ(cv->sources[1].unfitted_hardware, std::vector<std::string>{"h100_sxm_80gb"});
  // Every held-out prediction is the nominal one.
  const ValidationSummary nominal = ScoreCases(cases);
  for (size_t i = 0; i < nominal.cases.size(); ++i)
    EXPECT_DOUBLE_EQ(cv->held_out.cases[i].predicted_s, nominal.cases[i].predicted_s);
}

TEST(LeaveOneSourceOut, SharedHardwareUsesTheOtherFamilysFit) {
  const auto cases = TwoFamilies(4);
  const ValidationSummary nominal = ScoreCases(cases);
  auto cv = LeaveOneSourceOut(cases, "");
  ASSERT_TRUE(cv.ok());
  bool moved = false;
  for (size_t i = 0; i < nominal.cases.size(); ++i)
    moved |= cv->held_out.cases[i].predicted_s != nominal.cases[i].predicted_s;
  EXPECT_TRUE(moved);
}

TEST(LeaveOneSourceOut, IsDeterministicAndEndsWithItsSummaryLine) {
  const auto cases = TwoFamilies(4);
  const std::string a = CrossValidationJson(LeaveOneSourceOut(cases, "").value());
  EXPECT_EQ(a, CrossValidationJson(LeaveOneSourceOut(cases, "").value()));
  const auto j = nlohmann::json::parse(a);
  EXPECT_EQ(j["scheme"], "leave-one-source-out");
  EXPECT_EQ(j["sources"].size(), 2u);
  const std::string line = j["summary"];
  EXPECT_TRUE(std::regex_match(
      line, std::regex(R"(calibrate: leave-one-source-out time MAPE [0-9]+\.[0-9]% over 8 cases)")))
      << line;
}

TEST(LeaveOneSourceOut, NeedsTwoFamilies) {
  auto cases = TwoFamilies(2);
  cases.resize(2);
  auto cv = LeaveOneSourceOut(cases, "");
  ASSERT_FALSE(cv.ok());
  EXPECT_EQ(cv.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cv.status().field(), "cases");
}

TEST(LeaveOneSourceOut, OnlyHardwareRestrictsTheCases) {
  auto cv = LeaveOneSourceOut(TwoFamilies(2, "h100_sxm_80gb"), "h100_sxm_80gb");
  ASSERT_FALSE(cv.ok());  // only family beta runs on H100
  EXPECT_EQ(cv.status().field(), "cases");
}

TEST(Calibrate, AnUnknownFrozenParameterNamesTheField) {
  CalibrateOptions o;
  o.frozen = {"gemm_max", "warp_speed"};
  auto fits = Calibrate(TwoFamilies(2), o);
  ASSERT_FALSE(fits.ok());
  EXPECT_EQ(fits.status().field(), "frozen");
  EXPECT_NE(fits.status().message().find("warp_speed"), std::string::npos);
}

TEST(Calibrate, AFrozenParameterIsNeverFree) {
  CalibrateOptions o;
  auto free_fit = Calibrate(TwoFamilies(4), o);
  ASSERT_TRUE(free_fit.ok());
  ASSERT_FALSE(free_fit->front().fitted.empty());
  const std::string first = free_fit->front().fitted.front();
  o.frozen = {first};
  auto fits = Calibrate(TwoFamilies(4), o);
  ASSERT_TRUE(fits.ok());
  for (const std::string& p : fits->front().fitted) EXPECT_NE(p, first);
}

// An MXFP8 speed-up no case can fit stays unset and follows the fitted FP8 one (the refit had
// left 1.5 beside a fitted FP8 1.78 on B200, pricing the same Blackwell GEMMs 16 % slower).
TEST(Calibrate, AnUnfittedMxfp8SpeedupFollowsFp8) {
  std::vector<ValidationCase> cases = TwoFamilies(4);
  for (ValidationCase& c : cases) c.hw.eff.mxfp8_gemm_speedup = 1.5;  // a stale written value
  auto fits = Calibrate(cases, CalibrateOptions{});
  ASSERT_TRUE(fits.ok()) << fits.status().message();
  for (const CalibrationResult& r : fits.value()) {
    EXPECT_EQ(std::count(r.fitted.begin(), r.fitted.end(), "mxfp8_gemm_speedup"), 0);
    EXPECT_LE(r.eff.mxfp8_gemm_speedup, 0) << r.hardware;
  }
}

// A preset whose own cases do not free the FP8 speed-up (B300: 11 cases free one parameter) takes
// the median of the presets that fitted it (here GB200's alone), not the nominal 1.5; a preset
// without FP8 tensor cores (A100) keeps its own.
TEST(Calibrate, AnUnconstrainedFp8SpeedupIsPooledFromThePresetsThatFittedIt) {
  std::vector<CaseResult> bad;
  auto all = LoadValidationCases(
      {std::string(TRAINSIM_SHARED_DIR) + "/validation/cases/public.jsonl"}, &bad);
  ASSERT_TRUE(all.ok()) << all.status().message();
  std::vector<ValidationCase> cases;
  for (const ValidationCase& c : WithNominalEfficiency(all.value()))
    if (c.hw.id == "b300_sxm_288gb" || c.hw.id == "gb200_nvl72" || c.hw.id == "a100_sxm_80gb")
      cases.push_back(c);
  auto fits = Calibrate(cases, CalibrateOptions{});
  ASSERT_TRUE(fits.ok()) << fits.status().message();
  std::map<std::string, CalibrationResult> by;
  for (const CalibrationResult& r : fits.value()) by[r.hardware] = r;
  ASSERT_EQ(by.size(), 3u);
  const auto fitted = [](const CalibrationResult& r) {
    return std::count(r.fitted.begin(), r.fitted.end(), "fp8_gemm_speedup") > 0;
  };
  ASSERT_TRUE(fitted(by["gb200_nvl72"]));
  ASSERT_FALSE(fitted(by["b300_sxm_288gb"]));
  EXPECT_DOUBLE_EQ(by["b300_sxm_288gb"].eff.fp8_gemm_speedup,
                   by["gb200_nvl72"].eff.fp8_gemm_speedup);
  EXPECT_NE(by["b300_sxm_288gb"].eff.fp8_gemm_speedup, 1.5);
  EXPECT_EQ(by["b300_sxm_288gb"].pooled, std::vector<std::string>{"fp8_gemm_speedup"});
  EXPECT_NE(CalibrationEfficiencyJson(by["b300_sxm_288gb"], "d").find("pooled"), std::string::npos);
  EXPECT_DOUBLE_EQ(by["a100_sxm_80gb"].eff.fp8_gemm_speedup, 1.5);
  EXPECT_TRUE(by["a100_sxm_80gb"].pooled.empty());
}

TEST(AblateCalibration, OneRowPerParameterAfterTheBaseline) {
  CalibrateOptions o;
  o.frozen = {"layer_overhead_us"};
  auto rows = AblateCalibration(TwoFamilies(2), o);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), CalibrationParameterNames().size());  // baseline + all but one
  EXPECT_TRUE(rows->front().parameter.empty());
  for (const AblationRow& r : rows.value()) EXPECT_NE(r.parameter, "layer_overhead_us");
  const auto j = nlohmann::json::parse(AblationJson(rows.value()));
  EXPECT_TRUE(j[0]["frozen"].is_null());
  EXPECT_EQ(j[1]["frozen"], CalibrationParameterNames()[0]);
}

}  // namespace
}  // namespace trainsim

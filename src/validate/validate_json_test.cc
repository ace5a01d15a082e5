// ValidationJson / CrossValidationJson and their summary lines.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "trainsim/results_json.h"
#include "validate/validate_test_cases.h"

namespace trainsim {
namespace {

using nlohmann::json;

ValidationSummary Scored() {
  std::vector<CaseResult> bad;
  const std::string text = testing::BuiltinCaseVariant(1) + "\n" +
                           R"({"id": "odd-001", "model": {"hidden_size": 64}})" + "\n";
  auto cases = ParseValidationCases(text, "mem", &bad);
  EXPECT_TRUE(cases.ok());
  return ScoreCases(cases.value(), bad);
}

TEST(ValidationJson, HasTheSummaryFamiliesAndCases) {
  const ValidationSummary s = Scored();
  const json j = json::parse(ValidationJson(s));
  EXPECT_EQ(j["cases_scored"], 1);
  EXPECT_EQ(j["cases_skipped"], 1);
  EXPECT_EQ(j["time_mape"].get<double>(), s.mape);
  EXPECT_EQ(j["memory_cases"], 1);
  ASSERT_EQ(j["families"].size(), 2u);
  ASSERT_EQ(j["cases"].size(), 2u);
  const json& scored = j["cases"][0];
  EXPECT_EQ(scored["id"], "builtin-101");
  EXPECT_FALSE(scored["skipped"].get<bool>());
  for (const char* k : {"framework", "strategy", "predicted_s", "target_s", "error",
                        "predicted_mem_gib", "measured_mem_gib", "mem_error"})
    EXPECT_TRUE(scored.contains(k)) << k;
  const json& skipped = j["cases"][1];
  EXPECT_TRUE(skipped["skipped"].get<bool>());
  EXPECT_TRUE(skipped.contains("reason"));
  EXPECT_FALSE(skipped.contains("predicted_s"));
  EXPECT_EQ(j["summary"], ValidationSummaryLine(s));
}

TEST(ValidationSummaryLine, IsStable) {
  ValidationSummary s;
  s.mape = 0.0842;
  s.n = 383;
  s.skipped = 2;
  s.mem_mape = 0.024;
  s.mem_n = 100;
  EXPECT_EQ(ValidationSummaryLine(s),
            "validate: time MAPE 8.4% over 383 cases (2 skipped); memory MAPE 2.4% over 100 cases");
}

TEST(ValidationJson, AnEmptyRunHasNoFamiliesOrCases) {
  const json j = json::parse(ValidationJson(ValidationSummary{}));
  EXPECT_EQ(j["cases_scored"], 0);
  EXPECT_FALSE(j.contains("cases"));
  EXPECT_FALSE(j.contains("families"));
}

TEST(CrossValidationJson, IsTheHeldOutValidationWithTheFoldCount) {
  CrossValidation cv;
  cv.folds = 5;
  cv.held_out = Scored();
  const json j = json::parse(CrossValidationJson(cv));
  EXPECT_EQ(j["folds"], 5);
  EXPECT_EQ(j["cases_scored"], 1);
  EXPECT_EQ(j["summary"], CrossValidationSummaryLine(cv));
  EXPECT_EQ(CrossValidationSummaryLine(cv).rfind("calibrate: 5-fold held-out time MAPE ", 0), 0u);
}

}  // namespace
}  // namespace trainsim

#include <gtest/gtest.h>

#include "trainsim/calibrate.h"
#include "trainsim/results_json.h"
#include "validate/validate_test_cases.h"

namespace trainsim {
namespace {

std::vector<ValidationCase> Cases(int n) {
  std::vector<ValidationCase> out;
  for (int i = 1; i <= n; ++i)
    out.push_back(ParseValidationCase(testing::BuiltinCaseVariant(i), "t").value());
  return out;
}

TEST(CrossValidate, ScoresEveryCaseOnceHeldOut) {
  const auto cases = WithNominalEfficiency(Cases(4));
  auto cv = CrossValidate(cases, 2, "");
  ASSERT_TRUE(cv.ok()) << cv.status().message();
  EXPECT_EQ(cv->folds, 2);
  EXPECT_EQ(cv->held_out.n + cv->held_out.skipped, 4);
  // Fold order: fold 0 holds cases 0 and 2, fold 1 cases 1 and 3.
  ASSERT_EQ(cv->held_out.cases.size(), 4u);
  EXPECT_EQ(cv->held_out.cases[0].id, "builtin-101");
  EXPECT_EQ(cv->held_out.cases[1].id, "builtin-103");
  EXPECT_EQ(cv->held_out.cases[2].id, "builtin-102");
}

TEST(CrossValidate, IsDeterministic) {
  const auto cases = WithNominalEfficiency(Cases(4));
  EXPECT_EQ(CrossValidationJson(CrossValidate(cases, 2, "").value()),
            CrossValidationJson(CrossValidate(cases, 2, "").value()));
}

TEST(CrossValidate, HeldOutScoresUseTheFitOfTheOtherFolds) {
  const auto cases = WithNominalEfficiency(Cases(4));
  const ValidationSummary nominal = ScoreCases(cases);
  auto cv = CrossValidate(cases, 2, "");
  ASSERT_TRUE(cv.ok());
  // The fit moves at least one prediction away from the nominal efficiencies.
  bool moved = false;
  for (const CaseResult& h : cv->held_out.cases)
    for (const CaseResult& n : nominal.cases)
      if (h.id == n.id && h.predicted_s != n.predicted_s) moved = true;
  EXPECT_TRUE(moved);
}

TEST(CrossValidate, NeedsAtLeastTwoFolds) {
  auto cv = CrossValidate(Cases(2), 1, "");
  ASSERT_FALSE(cv.ok());
  EXPECT_EQ(cv.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(cv.status().message().find("folds"), std::string::npos);
}

TEST(WithNominalEfficiency, ResetsEveryCase) {
  auto cases = Cases(2);
  cases[0].hw.eff.gemm_max = 0.33;
  const auto fresh = WithNominalEfficiency(cases);
  EXPECT_DOUBLE_EQ(fresh[0].hw.eff.gemm_max, Efficiency{}.gemm_max);
  EXPECT_DOUBLE_EQ(cases[0].hw.eff.gemm_max, 0.33);  // the input is a copy
}

}  // namespace
}  // namespace trainsim

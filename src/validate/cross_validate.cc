// CrossValidate(): k-fold held-out scoring of the calibration.
#include <utility>

#include "trainsim/calibrate.h"
#include "trainsim/schema.h"

namespace trainsim {

std::vector<ValidationCase> WithNominalEfficiency(std::vector<ValidationCase> cases) {
  // Only the fitted parameters go back to nominal; measured ones (kernel floor, FlexAttention,
  // those without calibration bounds in the Efficiency schema) stay as the preset has them.
  const Efficiency nominal{};
  for (ValidationCase& c : cases)
    for (const EfficiencyField& f : EfficiencySchema())
      if (f.fit_lo <= f.fit_hi) c.hw.eff.*f.field = nominal.*f.field;
  return cases;
}

Result<CrossValidation> CrossValidate(const std::vector<ValidationCase>& cases, int k,
                                      const std::string& only_hardware) {
  if (k < 2) return Status::Invalid("folds: must be >= 2, got " + std::to_string(k));
  std::vector<ValidationCase> scored;
  for (int f = 0; f < k; ++f) {
    std::vector<ValidationCase> train, test;
    for (size_t i = 0; i < cases.size(); ++i)
      (static_cast<int>(i % k) == f ? test : train).push_back(cases[i]);
    const std::vector<CalibrationResult> fits = Calibrate(train, only_hardware);
    for (ValidationCase& c : test)
      for (const CalibrationResult& r : fits)
        if (r.hardware == c.hw.id) c.hw.eff = r.eff;
    scored.insert(scored.end(), std::make_move_iterator(test.begin()),
                  std::make_move_iterator(test.end()));
  }
  CrossValidation cv;
  cv.folds = k;
  cv.held_out = ScoreCases(scored);
  return cv;
}

}  // namespace trainsim

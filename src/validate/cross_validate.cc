// CrossValidate(): k-fold held-out scoring of the calibration.
#include <utility>

#include "trainsim/calibrate.h"

namespace trainsim {

std::vector<ValidationCase> WithNominalEfficiency(std::vector<ValidationCase> cases) {
  for (ValidationCase& c : cases) c.hw.eff = Efficiency{};
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

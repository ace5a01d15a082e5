// Fitting a hardware preset's efficiency parameters on measured runs (docs/VALIDATION.md).
#pragma once

#include <string>
#include <vector>

#include "trainsim/hardware.h"
#include "trainsim/status.h"
#include "trainsim/validate.h"

namespace trainsim {

struct CalibrationResult {
  std::string hardware;
  std::vector<std::string> case_ids;  // the cases the fit saw
  std::vector<std::string> fitted;    // parameter names that were free
  double mape_before = 0, mape_after = 0;
  Efficiency eff;
};

// Fits, for each hardware preset present in `cases` (or only `only_hardware` if non-empty), the
// efficiency parameters that its cases are sensitive to, by bounded coordinate descent on the
// time MAPE. Deterministic. Parameters stay within physical bounds (fractions in (0, 1]).
// The fit starts from the efficiencies the cases carry: pass WithNominalEfficiency(cases) for a
// reproducible fit that does not start from a previous one.
std::vector<CalibrationResult> Calibrate(const std::vector<ValidationCase>& cases,
                                         const std::string& only_hardware);

// The cases with every hardware efficiency block reset to the nominal defaults (Efficiency{}).
std::vector<ValidationCase> WithNominalEfficiency(std::vector<ValidationCase> cases);

struct CrossValidation {
  int folds = 0;
  ValidationSummary held_out;  // every case scored with the fit of the folds it was not in
};

// k-fold cross-validation of Calibrate: case i goes to fold i % k (in the given order, so that
// families interleave across folds); each fold is scored with the efficiencies fitted on the
// other k - 1 folds (a case whose hardware got no fit keeps its own). Deterministic.
// InvalidArgument naming "folds" when k < 2.
Result<CrossValidation> CrossValidate(const std::vector<ValidationCase>& cases, int k,
                                      const std::string& only_hardware);

}  // namespace trainsim

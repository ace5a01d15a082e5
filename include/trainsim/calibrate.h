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
  // Parameters its own cases did not set that took the other presets' fitted value
  // (fp8_gemm_speedup: their median, PoolFp8Speedup); listed in fitted_on.
  std::vector<std::string> pooled;
  double mape_before = 0, mape_after = 0;
  Efficiency eff;
};

// The parameters a fit keeps at their nominal values unless told otherwise: fitting them made
// the leave-one-source-out error worse (`calibrate --ablate`, docs/VALIDATION.md).
const std::vector<std::string>& DefaultFrozenParameters();

struct CalibrateOptions {
  std::string only_hardware;  // empty: every preset present in the cases
  // Parameters kept at their starting value (never free).
  std::vector<std::string> frozen = DefaultFrozenParameters();
};

// The names of the efficiency parameters a fit may free, in the order the fit visits them.
const std::vector<std::string>& CalibrationParameterNames();

// Fits, for each hardware preset present in `cases` (or only `only_hardware` if non-empty), the
// efficiency parameters that its cases are sensitive to, by bounded coordinate descent on the
// time MAPE. Deterministic. Parameters stay within physical bounds (fractions in (0, 1]).
// The fit starts from the efficiencies the cases carry: pass WithNominalEfficiency(cases) for a
// reproducible fit that does not start from a previous one.
std::vector<CalibrationResult> Calibrate(const std::vector<ValidationCase>& cases,
                                         const std::string& only_hardware);
// The same with options (the overload above: default options with `only_hardware`); InvalidArgument
// naming "frozen" for a name that is not one of CalibrationParameterNames().
Result<std::vector<CalibrationResult>> Calibrate(const std::vector<ValidationCase>& cases,
                                                 const CalibrateOptions& options);

// The cases with every hardware efficiency block reset to the nominal defaults (Efficiency{}).
std::vector<ValidationCase> WithNominalEfficiency(std::vector<ValidationCase> cases);

// One held-out source family of LeaveOneSourceOut.
struct HeldOutSource {
  std::string family;
  int cases = 0;  // cases of the family (scored and skipped)
  // Hardware of the family that no other family measured: no fit was available, so its cases
  // were scored with the efficiencies they carry (nominal after WithNominalEfficiency).
  std::vector<std::string> unfitted_hardware;
};

struct CrossValidation {
  int folds = 0;
  ValidationSummary held_out;          // every case scored with the fit of the folds it was not in
  bool by_source = false;              // leave-one-source-out: one fold per family
  std::vector<HeldOutSource> sources;  // by_source only, in family order
};

// k-fold cross-validation of Calibrate: case i goes to fold i % k (in the given order, so that
// families interleave across folds); each fold is scored with the efficiencies fitted on the
// other k - 1 folds (a case whose hardware got no fit keeps its own). Deterministic.
// InvalidArgument naming "folds" when k < 2.
Result<CrossValidation> CrossValidate(const std::vector<ValidationCase>& cases, int k,
                                      const std::string& only_hardware);

// Leave-one-source-out cross-validation: for each family (ValidationCase::family, the id before
// its last "-NNN"), fits on the cases of every other family and scores that family. A held-out
// case whose hardware no other family measured keeps the efficiencies it carries (pass
// WithNominalEfficiency(cases): the nominal defaults): the error a user gets on a new source,
// and on hardware the calibration never saw. With options.only_hardware, only the cases of that
// preset take part. Deterministic; folds = the number of families. InvalidArgument naming "cases"
// when fewer than two families take part, "frozen" for an unknown parameter name.
Result<CrossValidation> LeaveOneSourceOut(const std::vector<ValidationCase>& cases,
                                          const CalibrateOptions& options);
// The same with each family fitted without it on `fit_cases` and scored on its cases of
// `score_cases` (of the same families): the source-blind check scores the cases read blind
// (LoadValidationCases with blind set) with the fit of the others as published.
Result<CrossValidation> LeaveOneSourceOut(const std::vector<ValidationCase>& fit_cases,
                                          const std::vector<ValidationCase>& score_cases,
                                          const CalibrateOptions& options);
Result<CrossValidation> LeaveOneSourceOut(const std::vector<ValidationCase>& cases,
                                          const std::string& only_hardware);

// The LOSO time MAPE with each fittable parameter in turn kept at its nominal value.
struct AblationRow {
  std::string parameter;  // empty for the baseline (every parameter free to fit)
  double loso_mape = 0;
  int cases = 0, skipped = 0;
};
// Row 0 is the baseline (options as given), then one row per CalibrationParameterNames() entry
// not already in options.frozen, with that parameter added to the frozen set. Errors as
// LeaveOneSourceOut.
Result<std::vector<AblationRow>> AblateCalibration(const std::vector<ValidationCase>& cases,
                                                   const CalibrateOptions& options);

}  // namespace trainsim

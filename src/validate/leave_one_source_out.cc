// LeaveOneSourceOut(): held-out scoring of the calibration, one source family at a time.
// Random k-fold puts rows of one published table on both sides of the split, so its held-out
// figure is optimistic; holding out a whole family is the error a user sees on a new source.
// Hardware that only the held-out family measured keeps the efficiencies the cases carry
// (nominal, from WithNominalEfficiency): borrowing the fit of a same-generation preset instead
// (B200's for GB200/GB300/B300) was measured and is worse (docs/VALIDATION.md).
#include <algorithm>
#include <set>
#include <utility>

#include "trainsim/calibrate.h"

namespace trainsim {

namespace {

std::vector<ValidationCase> OnHardware(const std::vector<ValidationCase>& all,
                                       const std::string& only_hardware) {
  std::vector<ValidationCase> out;
  for (const ValidationCase& c : all)
    if (only_hardware.empty() || c.hw.id == only_hardware) out.push_back(c);
  return out;
}

// `test` with the fitted efficiencies of its hardware; the hardware without a fit (it keeps the
// efficiencies it carries, nominal) goes to `unfitted`.
void ApplyFits(std::vector<ValidationCase>& test, const std::vector<CalibrationResult>& fits,
               std::set<std::string>& unfitted) {
  for (ValidationCase& c : test) {
    auto fit = std::find_if(fits.begin(), fits.end(),
                            [&](const CalibrationResult& r) { return r.hardware == c.hw.id; });
    if (fit != fits.end())
      c.hw.eff = fit->eff;
    else
      unfitted.insert(c.hw.id);
  }
}

}  // namespace

Result<CrossValidation> LeaveOneSourceOut(const std::vector<ValidationCase>& fit_cases,
                                          const std::vector<ValidationCase>& score_cases,
                                          const CalibrateOptions& options) {
  const std::vector<ValidationCase> cases = OnHardware(fit_cases, options.only_hardware);
  const std::vector<ValidationCase> scores = OnHardware(score_cases, options.only_hardware);
  std::set<std::string> families;
  for (const ValidationCase& c : cases) families.insert(c.family);
  if (families.size() < 2)
    return Status::Invalid("cases",
                           "leave-one-source-out needs cases of at least two families, "
                           "got " +
                               std::to_string(families.size()));
  CrossValidation cv;
  cv.by_source = true;
  cv.folds = static_cast<int>(families.size());
  std::vector<ValidationCase> scored;
  for (const std::string& family : families) {
    std::vector<ValidationCase> train, test;
    for (const ValidationCase& c : cases)
      if (c.family != family) train.push_back(c);
    for (const ValidationCase& c : scores)
      if (c.family == family) test.push_back(c);
    auto fits = Calibrate(train, options);
    if (!fits.ok()) return fits.status();
    HeldOutSource src;
    src.family = family;
    src.cases = static_cast<int>(test.size());
    std::set<std::string> unfitted;
    ApplyFits(test, fits.value(), unfitted);
    src.unfitted_hardware.assign(unfitted.begin(), unfitted.end());
    cv.sources.push_back(std::move(src));
    scored.insert(scored.end(), std::make_move_iterator(test.begin()),
                  std::make_move_iterator(test.end()));
  }
  cv.held_out = ScoreCases(scored);
  return cv;
}

Result<CrossValidation> LeaveOneSourceOut(const std::vector<ValidationCase>& all,
                                          const CalibrateOptions& options) {
  return LeaveOneSourceOut(all, all, options);
}

Result<CrossValidation> LeaveOneSourceOut(const std::vector<ValidationCase>& cases,
                                          const std::string& only_hardware) {
  CalibrateOptions options;
  options.only_hardware = only_hardware;
  return LeaveOneSourceOut(cases, options);
}

Result<std::vector<AblationRow>> AblateCalibration(const std::vector<ValidationCase>& cases,
                                                   const CalibrateOptions& options) {
  std::vector<AblationRow> rows;
  auto run = [&](const std::string& parameter, const CalibrateOptions& o) -> Status {
    auto cv = LeaveOneSourceOut(cases, o);
    if (!cv.ok()) return cv.status();
    rows.push_back({parameter, cv->held_out.mape, cv->held_out.n, cv->held_out.skipped});
    return Status::Ok();
  };
  if (Status st = run("", options); !st.ok()) return st;
  for (const std::string& p : CalibrationParameterNames()) {
    if (std::find(options.frozen.begin(), options.frozen.end(), p) != options.frozen.end())
      continue;
    CalibrateOptions o = options;
    o.frozen.push_back(p);
    if (Status st = run(p, o); !st.ok()) return st;
  }
  return rows;
}

}  // namespace trainsim

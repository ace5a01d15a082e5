// `calibrate --leave-one-source-out` (and --write-uncertainty) and `calibrate --ablate`.
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>

#include "cli_util.h"
#include "commands.h"
#include "trainsim/calibrate.h"
#include "trainsim/results_json.h"
#include "trainsim/uncertainty.h"

namespace trainsim::cli {
namespace {

CalibrateOptions Options(const CalibrateArgs& a) {
  CalibrateOptions o;
  o.only_hardware = a.hardware;
  o.frozen = FrozenParameters(a);
  return o;
}

std::string Today() {
  char date[16];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  return date;
}

// The --band-cases files scored with the shipped presets (read source-blind when `blind`): their
// results appended to `held_out`, their cases to `cases` when non-null.
Status ScoreBandCases(const CalibrateArgs& a, bool blind, CrossValidation& held_out,
                      std::vector<ValidationCase>* cases) {
  std::vector<CaseResult> bad;
  auto extra = LoadValidationCases(a.band_cases, &bad, blind);
  if (!extra.ok()) return extra.status().WithContext("--band-cases");
  const ValidationSummary sum = ScoreCases(extra.value(), bad);
  held_out.held_out.cases.insert(held_out.held_out.cases.end(), sum.cases.begin(), sum.cases.end());
  if (cases) cases->insert(cases->end(), extra->begin(), extra->end());
  return Status::Ok();
}

// The held-out results with the --band-cases cases added, scored with the shipped presets (they
// were never fitted on, so their errors are held out from the fit; the framework profiles they
// use were set on them, which docs/VALIDATION.md says). `blind_cv`: the same read source-blind
// (cases left as they are: the blinded twins share ids and features).
Status AddBandCases(const CalibrateArgs& a, CrossValidation& cv, std::vector<ValidationCase>& cases,
                    CrossValidation* blind_cv) {
  if (a.band_cases.empty()) return Status::Ok();
  if (Status st = ScoreBandCases(a, false, cv, &cases); !st.ok()) return st;
  return blind_cv ? ScoreBandCases(a, true, *blind_cv, nullptr) : Status::Ok();
}

// Leave-one-source-out with each held-out family read source-blind (the files again, blind),
// fitted on the other families as published.
Result<CrossValidation> SourceBlindHeldOut(const CalibrateArgs& a,
                                           const std::vector<ValidationCase>& cases) {
  std::vector<CaseResult> bad;
  auto blinded = LoadValidationCases(a.files, &bad, /*blind=*/true);
  if (!blinded.ok()) return blinded.status();
  return LeaveOneSourceOut(cases, WithNominalEfficiency(blinded.value()), Options(a));
}

std::string SourceBlindLine(const CrossValidation& blind) {
  char line[200];
  std::snprintf(line, sizeof line,
                "source-blind held-out (each family read with its source and framework "
                "unknown): time MAPE %.1f%% over %d cases",
                100 * blind.held_out.mape, blind.held_out.n);
  return line;
}

// Writes --write-uncertainty; prints the bands unless `quiet`.
int WriteUncertainty(const CalibrateArgs& a, CrossValidation cv, std::vector<ValidationCase> cases,
                     bool quiet) {
  auto blind = SourceBlindHeldOut(a, cases);
  if (!blind.ok()) return Fail(blind.status());
  if (!quiet) std::printf("%s\n", SourceBlindLine(blind.value()).c_str());
  std::string command = "trainsim calibrate";
  for (const std::string& f : a.files) command += " " + f;
  if (!a.hardware.empty()) command += " --hardware " + a.hardware;
  if (!a.freeze.empty()) {
    command += " --freeze ";
    for (size_t i = 0; i < a.freeze.size(); ++i) command += (i ? "," : "") + a.freeze[i];
  }
  command += " --leave-one-source-out --write-uncertainty " + a.write_uncertainty;
  for (const std::string& f : a.band_cases) command += " --band-cases " + f;
  if (Status st = AddBandCases(a, cv, cases, &blind.value()); !st.ok()) return Fail(st);
  std::vector<std::string> files = a.files;
  files.insert(files.end(), a.band_cases.begin(), a.band_cases.end());
  const std::vector<RegimeBand> bands = RegimeBands(cv, cases, {}, &blind.value());
  if (Status st = WriteTextFile("--write-uncertainty", a.write_uncertainty,
                                UncertaintyTableJson(bands, files, command, Today(),
                                                     HeldOutBandCoverage(cv, cases).cases));
      !st.ok())
    return Fail(st);
  if (quiet) return 0;
  for (const RegimeBand& b : bands)
    std::printf(
        "%-32s %4d cases %d sources  error p10 %+6.1f%% p90 %+6.1f%%  band -%.1f%% / +%.1f%%\n",
        b.regime.c_str(), b.cases, b.families, 100 * b.error_q10, 100 * b.error_q90,
        100 * b.rel_below, 100 * b.rel_above);
  const BandCheck check = HeldOutBandCoverage(cv, cases);
  std::printf(
      "band coverage with each family's band built without it: %.1f%% of %d cases (mean "
      "half-width %.1f%%)\n",
      100 * check.coverage, check.cases, 100 * check.mean_half_width);
  const BandCheck inferred = InferredStackBandCoverage(cv, blind.value(), cases);
  std::printf(
      "the same for each family read source-blind (stack inferred): %.1f%% of %d cases (mean "
      "half-width %.1f%%)\n",
      100 * inferred.coverage, inferred.cases, 100 * inferred.mean_half_width);
  return 0;
}

}  // namespace

std::vector<std::string> FrozenParameters(const CalibrateArgs& a) {
  if (a.freeze.empty()) return DefaultFrozenParameters();
  if (a.freeze.size() == 1 && a.freeze[0] == "none") return {};
  return a.freeze;
}

int RunLeaveOneSourceOut(const CalibrateArgs& a, const std::vector<ValidationCase>& cases) {
  auto cv = LeaveOneSourceOut(cases, Options(a));
  if (!cv.ok()) {
    return Fail(cv.status());
  }
  if (a.json) {
    if (!a.write_uncertainty.empty())
      if (int rc = WriteUncertainty(a, cv.value(), cases, true); rc != 0) return rc;
    std::cout << CrossValidationJson(cv.value()) << "\n";
    return 0;
  }
  std::printf("%-16s %5s %8s %9s  %-22s %s\n", "held-out family", "n", "MAPE %", "worst %",
              "worst case", "hardware without a fit from other families");
  for (const HeldOutSource& h : cv->sources)
    for (const FamilyStats& f : cv->held_out.families) {
      if (f.family != h.family) continue;
      std::string unfitted;
      for (const std::string& u : h.unfitted_hardware)
        unfitted += (unfitted.empty() ? "" : " ") + u;
      std::printf("%-16s %5d %8.1f %9.1f  %-22s %s%s\n", f.family.c_str(), f.n, 100 * f.mape,
                  100 * f.worst, f.worst_id.c_str(), unfitted.empty() ? "-" : unfitted.c_str(),
                  f.skipped ? (" (" + std::to_string(f.skipped) + " skipped)").c_str() : "");
    }
  if (!a.write_uncertainty.empty()) {
    if (int rc = WriteUncertainty(a, cv.value(), cases, false); rc != 0) return rc;
  } else if (a.source_blind) {
    auto blind = SourceBlindHeldOut(a, cases);
    if (!blind.ok()) return Fail(blind.status());
    std::printf("%s\n", SourceBlindLine(blind.value()).c_str());
  }
  std::printf("%s\n", CrossValidationSummaryLine(cv.value()).c_str());
  return 0;
}

int RunAblate(const CalibrateArgs& a, const std::vector<ValidationCase>& cases) {
  auto rows = AblateCalibration(cases, Options(a));
  if (!rows.ok()) {
    return Fail(rows.status());
  }
  if (a.json) {
    std::cout << AblationJson(rows.value()) << "\n";
    return 0;
  }
  const double base = rows->front().loso_mape;
  std::printf("%-22s %12s %8s\n", "kept nominal", "LOSO MAPE %", "change");
  for (const AblationRow& r : rows.value())
    std::printf("%-22s %12.2f %+8.2f\n",
                r.parameter.empty() ? "(none: baseline)" : r.parameter.c_str(), 100 * r.loso_mape,
                100 * (r.loso_mape - base));
  std::printf("calibrate: ablation baseline leave-one-source-out time MAPE %.1f%% over %d cases\n",
              100 * base, rows->front().cases);
  return 0;
}

}  // namespace trainsim::cli

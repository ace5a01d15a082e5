#include <cstdio>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_util.h"
#include "commands.h"
#include "trainsim/calibrate.h"
#include "trainsim/presets.h"
#include "trainsim/results_json.h"
#include "trainsim/schema.h"

namespace trainsim::cli {

void AddCalibrate(CLI::App& app, CalibrateArgs& a) {
  CLI::App* c = app.add_subcommand(
      "calibrate", "fit hardware efficiency parameters on measured runs (JSONL cases)");
  c->add_option("files", a.files, "case files (shared/validation schema)")->required();
  c->add_option("--hardware", a.hardware, "fit only this preset");
  c->add_option("--cross-validate", a.folds,
                "k-fold: fit on k-1 folds, score the held-out fold; prints the held-out MAPE")
      ->check(CLI::Range(2, 100));
  c->add_option("--write", a.write_dir,
                "update the presets' efficiency blocks in this directory (e.g. data/hardware)");
  c->add_flag("--leave-one-source-out", a.loso,
              "fit on every source family but one, score that one, for each family; prints the "
              "held-out MAPE per family and overall");
  c->add_option("--write-uncertainty", a.write_uncertainty,
                "with --leave-one-source-out: write the per-regime error band table here "
                "(data/uncertainty.json)");
  c->add_option("--band-cases", a.band_cases,
                "with --write-uncertainty: more case files whose errors (scored with the shipped "
                "presets, never fitted on) give the bands of their own regimes (fine-tuning: "
                "finetune.jsonl)");
  c->add_flag("--source-blind", a.source_blind,
              "with --leave-one-source-out: also score each held-out family read as if its "
              "source and framework were unknown (fallback profiles fill what it leaves "
              "unstated): the error to expect on a run whose stack trainsim must infer; "
              "--write-uncertainty always does, for the stack-inferred band");
  c->add_flag("--ablate", a.ablate,
              "leave-one-source-out MAPE with each fitted parameter in turn kept nominal");
  c->add_option(
       "--freeze", a.freeze,
       "keep these parameters at their nominal values (default: grouped_gemm attn_bwd; 'none': "
       "fit every parameter the cases are sensitive to)")
      ->delimiter(',');
  c->add_flag("--json", a.json, "print the held-out results as JSON");
}

// Nothing to fit is an error, not a silent success: no parsable case in the files, or none on
// the --hardware preset (a misspelled id).
Status CheckCasesToFit(const std::vector<ValidationCase>& cases, const CalibrateArgs& a) {
  std::string files;
  for (const std::string& f : a.files) files += (files.empty() ? "" : ", ") + f;
  if (cases.empty()) return Status::Invalid("files", "no usable validation case in " + files);
  if (a.hardware.empty()) return Status::Ok();
  std::set<std::string> ids;
  for (const ValidationCase& c : cases) ids.insert(c.hw.id);
  if (ids.count(a.hardware)) return Status::Ok();
  std::string known;
  for (const std::string& id : ids) known += (known.empty() ? "" : ", ") + id;
  return Status::Invalid("--hardware", "no case on '" + a.hardware + "' in " + files +
                                           " (hardware of the cases: " + known + ")");
}

int RunCalibrate(const CalibrateArgs& a) {
  std::vector<CaseResult> bad;
  auto cases = LoadValidationCases(a.files, &bad);
  if (!cases.ok()) {
    return Fail(cases.status());
  }
  if (Status st = CheckCasesToFit(cases.value(), a); !st.ok()) return Fail(st);
  WarnSkipped(bad, "calibrate", "not fitted", bad.size() + cases->size());
  WarnIgnoredCaseKeys(cases.value(), "calibrate");
  // Fit from the nominal defaults, not from a previous fit, so the result is reproducible.
  const std::vector<ValidationCase> fresh = WithNominalEfficiency(cases.value());
  if (!a.band_cases.empty() && a.write_uncertainty.empty()) {
    std::fprintf(stderr, "trainsim: --band-cases: needs --write-uncertainty\n");
    return 2;
  }
  if (a.source_blind && !a.loso) {
    std::fprintf(stderr, "trainsim: --source-blind: needs --leave-one-source-out\n");
    return 2;
  }
  if (!a.write_uncertainty.empty() && !a.loso) {
    std::fprintf(stderr, "trainsim: --write-uncertainty: needs --leave-one-source-out\n");
    return 2;
  }
  if (a.ablate) return RunAblate(a, fresh);
  if (a.loso) return RunLeaveOneSourceOut(a, fresh);
  if (a.folds > 0) {
    auto cv = CrossValidate(fresh, a.folds, a.hardware);
    if (!cv.ok()) {
      return Fail(cv.status());
    }
    for (const FamilyStats& f : cv->held_out.families)
      std::printf("%-16s %4d held-out cases  MAPE %5.1f%%\n", f.family.c_str(), f.n, 100 * f.mape);
    std::printf("%s\n", CrossValidationSummaryLine(cv.value()).c_str());
    return 0;
  }
  CalibrateOptions options;
  options.only_hardware = a.hardware;
  options.frozen = FrozenParameters(a);
  auto fits = Calibrate(fresh, options);
  if (!fits.ok()) {
    return Fail(fits.status());
  }
  const std::vector<CalibrationResult>& results = fits.value();
  char date[16];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  for (const CalibrationResult& r : results) {
    const std::string eff = CalibrationEfficiencyJson(r, date);
    std::printf("%-16s %4zu cases  MAPE %5.1f%% -> %5.1f%%  %s\n", r.hardware.c_str(),
                r.case_ids.size(), 100 * r.mape_before, 100 * r.mape_after, eff.c_str());
    if (!a.write_dir.empty()) {
      const std::string path = a.write_dir + "/" + r.hardware + ".json";
      auto text = ReadTextFile(path);
      if (!text.ok()) {
        return Fail(text.status());
      }
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(text.value(), nullptr, false);
      if (j.is_discarded()) {
        std::fprintf(stderr, "trainsim: %s: malformed JSON\n", path.c_str());
        return 2;
      }
      j["efficiency"] = nlohmann::ordered_json::parse(eff);
      if (Status st = WriteTextFile("--write", path, j.dump(2) + "\n"); !st.ok()) return Fail(st);
    }
  }
  return 0;
}

}  // namespace trainsim::cli

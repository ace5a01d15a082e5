#include <fmt/format.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "trainsim/calibrate.h"
#include "trainsim/presets.h"
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
}

int RunCalibrate(const CalibrateArgs& a) {
  std::vector<CaseResult> bad;
  auto cases = LoadValidationCases(a.files, &bad);
  if (!cases.ok()) {
    std::fprintf(stderr, "trainsim: %s\n", cases.status().message().c_str());
    return 2;
  }
  // Fit from the nominal defaults, not from a previous fit, so the result is reproducible.
  std::vector<ValidationCase> fresh = cases.value();
  for (ValidationCase& c : fresh) c.hw.eff = Efficiency{};
  if (a.folds > 0) {
    // Case i goes to fold i % k (cases are in file order, families interleave across folds).
    std::vector<ValidationCase> scored;
    for (int f = 0; f < a.folds; ++f) {
      std::vector<ValidationCase> train, test;
      for (size_t i = 0; i < fresh.size(); ++i)
        (static_cast<int>(i % a.folds) == f ? test : train).push_back(fresh[i]);
      const auto fits = Calibrate(train, a.hardware);
      for (ValidationCase& c : test)
        for (const CalibrationResult& r : fits)
          if (r.hardware == c.hw.id) c.hw.eff = r.eff;
      scored.insert(scored.end(), test.begin(), test.end());
    }
    const ValidationSummary held = ScoreCases(scored);
    for (const FamilyStats& f : held.families)
      std::printf("%-16s %4d held-out cases  MAPE %5.1f%%\n", f.family.c_str(), f.n, 100 * f.mape);
    std::printf("calibrate: %d-fold held-out time MAPE %.1f%% over %d cases (%d skipped)\n",
                a.folds, 100 * held.mape, held.n, held.skipped);
    return 0;
  }
  const auto results = Calibrate(fresh, a.hardware);
  char date[16];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  for (const CalibrationResult& r : results) {
    const Efficiency& e = r.eff;
    nlohmann::ordered_json eff = EfficiencyToJson(e);  // the Efficiency schema's keys
    for (auto& [k, v] : eff.items())
      if (v.is_number_float()) v = std::round(v.get<double>() * 1e4) / 1e4;
    eff["fitted_on"] = fmt::format("{} public cases ({}...); free: {}", r.case_ids.size(),
                                   r.case_ids.front(), fmt::join(r.fitted, ","));
    eff["fitted_date"] = date;
    std::printf("%-16s %4zu cases  MAPE %5.1f%% -> %5.1f%%  %s\n", r.hardware.c_str(),
                r.case_ids.size(), 100 * r.mape_before, 100 * r.mape_after, eff.dump().c_str());
    if (!a.write_dir.empty()) {
      const std::string path = a.write_dir + "/" + r.hardware + ".json";
      auto text = ReadTextFile(path);
      if (!text.ok()) {
        std::fprintf(stderr, "trainsim: %s\n", text.status().message().c_str());
        return 2;
      }
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(text.value(), nullptr, false);
      if (j.is_discarded()) {
        std::fprintf(stderr, "trainsim: %s: malformed JSON\n", path.c_str());
        return 2;
      }
      j["efficiency"] = eff;
      std::ofstream(path) << j.dump(2) << "\n";
    }
  }
  return 0;
}

}  // namespace trainsim::cli

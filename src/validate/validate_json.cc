// Validation and cross-validation results as JSON and summary lines.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "trainsim/results_json.h"

namespace trainsim {
namespace {

using nlohmann::json;

json CaseJson(const CaseResult& r) {
  json c = {{"id", r.id}, {"family", r.family}, {"skipped", r.skipped}};
  if (r.skipped) {
    c["reason"] = r.reason;
    return c;
  }
  c["framework"] = r.framework;
  c["strategy"] = r.strategy_used;
  json assumed = json::array();
  for (const Assumption& a : r.assumed)
    assumed.push_back({{"field", a.field}, {"value", a.value}, {"why", a.why}});
  c["assumed"] = assumed;
  if (!r.ignored.empty()) {  // keys outside the case schema (only when there are any)
    json ignored = json::array();
    for (const IgnoredInput& a : r.ignored)
      ignored.push_back({{"field", a.field}, {"value", a.value}, {"why", a.why}});
    c["ignored"] = ignored;
  }
  c["predicted_s"] = r.predicted_s;
  c["predicted_low_s"] = r.predicted_low_s;
  c["predicted_high_s"] = r.predicted_high_s;
  c["regime"] = r.regime;
  c["target_s"] = r.target_s;
  c["error"] = r.error;
  c["predicted_mem_gib"] = r.predicted_mem_gib;
  if (r.measured_mem_gib > 0) {
    c["measured_mem_gib"] = r.measured_mem_gib;
    c["mem_error"] = r.mem_error;
  }
  return c;
}

json SummaryJson(const ValidationSummary& s) {
  json j;
  j["time_mape"] = s.mape;
  j["cases_scored"] = s.n;
  j["cases_skipped"] = s.skipped;
  j["memory_mape"] = s.mem_mape;
  j["memory_cases"] = s.mem_n;
  j["band_coverage"] = s.band_coverage;
  j["band_inside"] = s.band_inside;
  j["band_cases"] = s.band_n;
  for (const FamilyStats& f : s.families)
    j["families"].push_back({{"family", f.family},
                             {"n", f.n},
                             {"skipped", f.skipped},
                             {"mape", f.mape},
                             {"worst", f.worst},
                             {"worst_id", f.worst_id},
                             {"memory_n", f.mem_n},
                             {"memory_mape", f.mem_mape}});
  for (const CaseResult& r : s.cases) j["cases"].push_back(CaseJson(r));
  return j;
}

}  // namespace

std::string ValidationSummaryLine(const ValidationSummary& s) {
  return fmt::format(
      "validate: time MAPE {:.1f}% over {} cases ({} skipped); memory MAPE {:.1f}% over {} cases",
      100 * s.mape, s.n, s.skipped, 100 * s.mem_mape, s.mem_n);
}

std::string BandCoverageLine(const ValidationSummary& s) {
  if (s.band_n == 0) return "validate: band coverage: no case carries an uncertainty band";
  return fmt::format("validate: band coverage {:.1f}% of {} cases inside [low, high]",
                     100 * s.band_coverage, s.band_n);
}

std::string ValidationJson(const ValidationSummary& s, int indent) {
  json j = SummaryJson(s);
  j["summary"] = ValidationSummaryLine(s);
  return j.dump(indent);
}

std::string CrossValidationSummaryLine(const CrossValidation& cv) {
  if (cv.by_source)
    return fmt::format("calibrate: leave-one-source-out time MAPE {:.1f}% over {} cases",
                       100 * cv.held_out.mape, cv.held_out.n);
  return fmt::format("calibrate: {}-fold held-out time MAPE {:.1f}% over {} cases ({} skipped)",
                     cv.folds, 100 * cv.held_out.mape, cv.held_out.n, cv.held_out.skipped);
}

std::string CrossValidationJson(const CrossValidation& cv, int indent) {
  json j = SummaryJson(cv.held_out);
  j["folds"] = cv.folds;
  j["scheme"] = cv.by_source ? "leave-one-source-out" : "k-fold";
  if (cv.by_source) {
    j["sources"] = json::array();
    for (const HeldOutSource& h : cv.sources)
      j["sources"].push_back(
          {{"family", h.family}, {"cases", h.cases}, {"unfitted_hardware", h.unfitted_hardware}});
  }
  // Each held-out case's error, for reading which rows a held-out fit misses.
  j["held_out_cases"] = json::array();
  for (const CaseResult& c : cv.held_out.cases)
    if (!c.skipped)
      j["held_out_cases"].push_back({{"id", c.id},
                                     {"predicted_s", c.predicted_s},
                                     {"target_s", c.target_s},
                                     {"error", c.error}});
  j["summary"] = CrossValidationSummaryLine(cv);
  return j.dump(indent);
}

std::string AblationJson(const std::vector<AblationRow>& rows, int indent) {
  json a = json::array();
  for (const AblationRow& r : rows)
    a.push_back({{"frozen", r.parameter.empty() ? json(nullptr) : json(r.parameter)},
                 {"loso_mape", r.loso_mape},
                 {"cases", r.cases},
                 {"skipped", r.skipped}});
  return a.dump(indent);
}

}  // namespace trainsim

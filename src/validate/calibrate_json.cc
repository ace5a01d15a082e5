// Calibration results as JSON: the efficiency block of a hardware preset, and the whole fit.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "trainsim/results_json.h"
#include "trainsim/schema.h"

namespace trainsim {
namespace {

nlohmann::ordered_json EfficiencyBlock(const CalibrationResult& r, std::string_view date) {
  const Efficiency& e = r.eff;
  nlohmann::ordered_json eff = EfficiencyToJson(e);  // the Efficiency schema's keys
  for (auto& [k, v] : eff.items())
    if (v.is_number_float()) v = std::round(v.get<double>() * 1e4) / 1e4;
  eff["fitted_on"] =
      fmt::format("{} public cases ({}...); free: {}", r.case_ids.size(),
                  r.case_ids.empty() ? "" : r.case_ids.front(), fmt::join(r.fitted, ",")) +
      (r.pooled.empty() ? ""
                        : fmt::format("; pooled (median of the presets that fitted it): {}",
                                      fmt::join(r.pooled, ",")));
  eff["fitted_date"] = std::string(date);
  return eff;
}

}  // namespace

std::string CalibrationEfficiencyJson(const CalibrationResult& r, std::string_view date,
                                      int indent) {
  return EfficiencyBlock(r, date).dump(indent);
}

std::string CalibrationJson(const std::vector<CalibrationResult>& results, std::string_view date,
                            int indent) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const CalibrationResult& r : results)
    a.push_back({{"hardware", r.hardware},
                 {"cases", r.case_ids},
                 {"fitted", r.fitted},
                 {"pooled", r.pooled},
                 {"mape_before", r.mape_before},
                 {"mape_after", r.mape_after},
                 {"efficiency", EfficiencyBlock(r, date)}});
  return a.dump(indent);
}

}  // namespace trainsim

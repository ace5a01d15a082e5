// Calibration results as JSON: the efficiency block of a hardware preset, and the whole fit.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "trainsim/results_json.h"

namespace trainsim {
namespace {

nlohmann::ordered_json EfficiencyBlock(const CalibrationResult& r, std::string_view date) {
  const Efficiency& e = r.eff;
  nlohmann::ordered_json eff = {{"gemm_max", e.gemm_max},
                                {"gemm_half_dim", e.gemm_half_dim},
                                {"grouped_gemm", e.grouped_gemm},
                                {"attn_fwd", e.attn_fwd},
                                {"attn_bwd", e.attn_bwd},
                                {"attn_fa2_fwd", e.attn_fa2_fwd},
                                {"attn_fa2_bwd", e.attn_fa2_bwd},
                                {"attn_flex_fwd", e.attn_flex_fwd},
                                {"attn_flex_bwd", e.attn_flex_bwd},
                                {"mem", e.mem},
                                {"scaleup_bus", e.scaleup_bus},
                                {"nic_bus", e.nic_bus},
                                {"a2a_scaleup", e.a2a_scaleup},
                                {"a2a_nic", e.a2a_nic},
                                {"fp8_gemm_speedup", e.fp8_gemm_speedup},
                                {"mxfp8_gemm_speedup", e.mxfp8_gemm_speedup},
                                {"fp4_gemm_speedup", e.fp4_gemm_speedup},
                                {"layer_overhead_us", e.layer_overhead_us},
                                {"kernel_floor_us", e.kernel_floor_us},
                                {"step_overhead_s", e.step_overhead_s},
                                {"comm_overlap", e.comm_overlap}};
  for (auto& [k, v] : eff.items())
    if (v.is_number_float()) v = std::round(v.get<double>() * 1e4) / 1e4;
  eff["fitted_on"] =
      fmt::format("{} public cases ({}...); free: {}", r.case_ids.size(),
                  r.case_ids.empty() ? "" : r.case_ids.front(), fmt::join(r.fitted, ","));
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
                 {"mape_before", r.mape_before},
                 {"mape_after", r.mape_after},
                 {"efficiency", EfficiencyBlock(r, date)}});
  return a.dump(indent);
}

}  // namespace trainsim

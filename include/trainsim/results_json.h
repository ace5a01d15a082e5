// Results as documents: JSON and CSV of search, validation, calibration and cross-validation
// results, and the one-line summaries that end the CLI's output. Every front-end (CLI, MPI
// driver, server, Python module) prints these, so that all of them return the same document.
//
// Convention: every function returns text (std::string). JSON functions take `indent` as
// nlohmann::json::dump does (-1 = one line, n >= 0 = pretty-printed with n spaces; default 2,
// except the one-line efficiency block). Objects list their keys in alphabetical order, except
// the calibration documents, which keep the key order of a hardware preset. Numbers are written
// so that they parse back to the same double.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trainsim/calibrate.h"
#include "trainsim/search.h"
#include "trainsim/status.h"
#include "trainsim/validate.h"

namespace trainsim {

// --- search ------------------------------------------------------------------------------------

// "search: evaluated N strategies (F feasible) in S.SSS s", plus "; incomplete: <reason>" when
// the search was stopped early.
std::string SearchSummaryLine(const SearchResult& r);
// {"evaluated", "feasible", "seconds", "rejected": {reason: count}, "top": [candidate...],
//  "pareto": [candidate...], "summary": SearchSummaryLine} and, only when the search was
// stopped early, "complete": false and "stopped": reason. "top" / "pareto" are absent when
// empty. A candidate: {"strategy" (DescribeStrategy), "tp", "pp", "vpp", "cp", "ep", "etp", "dp",
// "mbs", "zero", "sp", "step_time_s", "mfu", "tokens_per_s_per_gpu", "peak_mem_bytes",
// "usd_per_million_tokens", "variants", "megatron_args" (MegatronArgs), "strategy_file"}.
// With `hw`, also the hardware searched and whether its efficiencies were fitted on it
// ("hardware", "hardware_calibrated", "hardware_calibration_status"): the `search --json`
// document, which the Python module and the REST service return too.
std::string SearchResultJson(const SearchResult& r, int indent = 2,
                             const HardwareSpec* hw = nullptr);
// The top candidates as CSV: a header line, then one line per candidate (rank from 1; peak
// memory in GiB). Every line ends with '\n'.
std::string SearchResultCsv(const SearchResult& r);

// A shard's result in full (counts, candidates by space index, completeness) for sending between
// processes (the MPI driver); ParseSearchShardJson rebuilds it, strategies from `space`, which
// must be the space of the same model, hardware and options. A malformed document is a
// ParseError naming the field.
std::string SearchShardJson(const SearchResult& r);
Result<SearchResult> ParseSearchShardJson(std::string_view text, const SearchSpace& space);

// --- validation --------------------------------------------------------------------------------

// "validate: time MAPE X% over N cases (S skipped); memory MAPE Y% over M cases"
std::string ValidationSummaryLine(const ValidationSummary& s);
// "validate: band coverage X% of N cases inside [low, high]" (the uncertainty band)
std::string BandCoverageLine(const ValidationSummary& s);
// {"time_mape", "cases_scored", "cases_skipped", "memory_mape", "memory_cases",
//  "band_coverage", "band_inside", "families": [{"family", "n", "skipped", "mape", "worst",
//  "worst_id", "memory_n", "memory_mape"}], "cases": [case...], "summary":
//  ValidationSummaryLine}. A case: {"id", "family", "skipped"} and either "reason" (skipped) or
// "framework", "strategy", "assumed" ([{"field", "value", "why"}]: what the case left null and
// was filled), "predicted_s", "predicted_low_s", "predicted_high_s", "regime",
// "target_s", "error", "predicted_mem_gib" and, when memory was measured, "measured_mem_gib",
// "mem_error". "families" / "cases" are absent when empty. MAPEs, errors and coverage are
// fractions.
std::string ValidationJson(const ValidationSummary& s, int indent = 2);

// --- calibration -------------------------------------------------------------------------------

// The "efficiency" block of a hardware preset (data/hardware/*.json) for a fit: every Efficiency
// field in the preset's order, rounded to 4 decimals, then "fitted_on" ("N public cases
// (first-id...); free: p1,p2", then "; pooled (median of the presets that fitted it): p3" when
// CalibrationResult::pooled is not empty) and "fitted_date" (`date` as given, e.g. "2026-11-23").
std::string CalibrationEfficiencyJson(const CalibrationResult& r, std::string_view date,
                                      int indent = -1);
// [{"hardware", "cases": [id...], "fitted": [name...], "pooled": [name...], "mape_before",
//   "mape_after",
//   "efficiency": CalibrationEfficiencyJson}...]
std::string CalibrationJson(const std::vector<CalibrationResult>& results, std::string_view date,
                            int indent = 2);

// "calibrate: K-fold held-out time MAPE X% over N cases (S skipped)"; leave-one-source-out
// (cv.by_source): "calibrate: leave-one-source-out time MAPE X% over N cases".
std::string CrossValidationSummaryLine(const CrossValidation& cv);
// ValidationJson of the held-out scores with "folds": K, "scheme": "k-fold" or
// "leave-one-source-out", for the latter "sources": [{"family", "cases", "unfitted_hardware"}],
// and "summary" the line above.
std::string CrossValidationJson(const CrossValidation& cv, int indent = 2);
// [{"frozen": parameter name or null for the baseline, "loso_mape", "cases", "skipped"}...]
std::string AblationJson(const std::vector<AblationRow>& rows, int indent = 2);

}  // namespace trainsim

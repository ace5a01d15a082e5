// Scoring predictions against measured runs (shared/validation/README.md schema).
#pragma once

#include <string>
#include <vector>

#include "trainsim/hardware.h"
#include "trainsim/model.h"
#include "trainsim/report.h"
#include "trainsim/status.h"
#include "trainsim/strategy.h"

namespace trainsim {

// One measured run turned into simulator inputs. Null fields are filled with the defaults of
// the framework named by the case's source (data/frameworks.json); `measured` is never read
// except peak memory as the memory target.
struct ValidationCase {
  std::string id, family, framework;
  ModelSpec model;
  HardwareSpec hw;
  Strategy strategy;
  bool recompute_auto = false;  // recompute was null: lightest policy that fits is chosen
  // The case's null fields and unstated settings filled from its framework profile or from
  // trainsim's defaults (recompute_auto adds the policy chosen when the case is scored).
  std::vector<Assumption> assumed;
  // Keys of the case outside the schema (shared/validation/README.md), named instead of dropped:
  // top-level keys and `parallel.<key>` (issue 11, "silent acceptance").
  std::vector<IgnoredInput> ignored;
  double target_s = 0;
  double measured_mem_gib = 0;  // 0 = not measured
  // The measured memory is the caching allocator's reserved bytes (the notes name
  // max_memory_reserved): scored against the peak plus the model's fragmentation allowance
  // (memory::kFragmentation), not the allocated peak.
  bool memory_reserved = false;
  // The measured memory is the GPU's used memory as the driver reports it (nvidia-smi: the
  // allocator's reserve plus the CUDA context and library workspaces): scored against the
  // report's reserved_bytes (peak, fragmentation allowance and runtime overhead).
  bool memory_device = false;
  // No profile named the case's stack: a fallback profile filled its settings (its prediction
  // carries at least the "stack-inferred" band, WidenForInferredStack).
  bool stack_inferred = false;
};

// Parses one JSONL line; an error names the case id and the field. The case's "hardware" must
// be an embedded preset id (a case never makes the library read a file).
Result<ValidationCase> ParseValidationCase(std::string_view line, std::string_view origin);

struct CaseResult {
  std::string id, family, framework;
  bool skipped = false;
  std::string reason;
  double predicted_s = 0, target_s = 0, error = 0;  // error = (pred - target) / target
  double predicted_mem_gib = 0, measured_mem_gib = 0, mem_error = 0;
  std::string strategy_used;  // the filled-in strategy, for reading the result
  double predicted_low_s = 0, predicted_high_s = 0;  // the prediction's uncertainty band
  std::string regime;                                // the regime that set the band
  // What was assumed: the case's, the recompute policy chosen, and Simulate's (pipeline_split).
  std::vector<Assumption> assumed;
  std::vector<IgnoredInput> ignored;  // the case's keys outside the schema (ValidationCase)
};

struct FamilyStats {
  std::string family;
  int n = 0, skipped = 0, mem_n = 0;
  double mape = 0, mem_mape = 0, worst = 0;
  std::string worst_id;
};

struct ValidationSummary {
  std::vector<CaseResult> cases;
  std::vector<FamilyStats> families;
  int n = 0, skipped = 0, mem_n = 0;
  double mape = 0, mem_mape = 0;
  int band_inside = 0;       // scored cases whose target lies inside [predicted_low_s, high_s]
  int band_n = 0;            // scored cases that carry a band (width > 0)
  double band_coverage = 0;  // band_inside / band_n
};

// Simulates every case of the JSONL files. Fails only when a file cannot be read or a line is
// not JSON; a case that cannot be simulated is reported as skipped with its reason.
// Equal to LoadValidationCases followed by ScoreCases(cases, unparsable).
Result<ValidationSummary> RunValidation(const std::vector<std::string>& files);
// Same on already-parsed cases (used by calibration).
ValidationSummary ScoreCases(const std::vector<ValidationCase>& cases);
// Same, with the cases that could not be parsed reported as skipped (after the scored ones).
ValidationSummary ScoreCases(const std::vector<ValidationCase>& cases,
                             std::vector<CaseResult> unparsable);
// One case as validation scores it: the case's strategy with its recompute chosen when null
// (the lightest policy that fits); `used` (when non-null) gets the strategy simulated and
// `recompute` the assumption made for it (empty field when the case gave one).
Result<StepReport> SimulateCase(const ValidationCase& c, Strategy* used = nullptr,
                                Assumption* recompute = nullptr);
// A predicted-vs-measured scatter plot (SVG text) of a validation run.
std::string ValidationScatterSvg(const ValidationSummary& s);

// The cases of JSONL text (one case per non-blank line); `origin` names the text in messages
// ("origin:line"). A line that is not JSON fails the whole text (ParseError); a case that does
// not parse is appended to `unparsable` (when non-null) as skipped with its reason.
// `blind`: every case read as if its source were unknown and its framework null, so that no
// profile matches and the fallbacks fill what it leaves unstated (the run of a user whose stack
// trainsim does not know; the source-blind held-out check, kStackInferredRegime).
Result<std::vector<ValidationCase>> ParseValidationCases(std::string_view jsonl,
                                                         std::string_view origin,
                                                         std::vector<CaseResult>* unparsable,
                                                         bool blind = false);
// ParseValidationCases on each file in turn; NotFound names an unreadable file.
Result<std::vector<ValidationCase>> LoadValidationCases(const std::vector<std::string>& files,
                                                        std::vector<CaseResult>* unparsable,
                                                        bool blind = false);

}  // namespace trainsim

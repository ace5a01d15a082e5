// Inference validation cases (shared/validation/README.md, "Inference cases"): reading a line
// into SimulateInference inputs and scoring the case's target metric.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trainsim/hardware.h"
#include "trainsim/infer.h"
#include "trainsim/model.h"
#include "trainsim/status.h"
#include "trainsim/validate.h"

namespace trainsim::detail {

struct InferenceCase {
  std::string id, family, engine, metric;
  ModelSpec model;
  HardwareSpec hw;
  InferenceSpec spec;
  double target = 0;
  std::vector<Assumption> assumed;  // read from the notes (quantisation method, layer pattern)
};

// True when the JSON object is an inference case (a `target` object with a `metric`).
bool IsInferenceCaseText(std::string_view line);
Result<InferenceCase> ParseInferenceCase(std::string_view line, std::string_view origin);
// The case's target metric from a report (output / total tokens per s, latency_s, ttft_ms,
// tpot_ms); Invalid for an unknown metric.
Result<double> InferenceMetric(const InferenceCase& c, const InferenceReport& r);
CaseResult ScoreInferenceCase(const InferenceCase& c);
// Splits `files` into inference-case files, which are scored into `scored` (a line that does not
// parse is a skipped result), and the others, returned in `training` for the training reader.
Status ScoreInferenceFiles(const std::vector<std::string>& files,
                           std::vector<std::string>& training, std::vector<CaseResult>& scored);

}  // namespace trainsim::detail

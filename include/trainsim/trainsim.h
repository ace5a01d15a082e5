// trainsim public API: one call predicts one training step.
#pragma once

#include "trainsim/batch_default.h"
#include "trainsim/hardware.h"
#include "trainsim/model.h"
#include "trainsim/presets.h"
#include "trainsim/report.h"
#include "trainsim/status.h"
#include "trainsim/strategy.h"

namespace trainsim {

struct SimOptions {
  bool detail = false;  // fill StepReport::layers with the per-op table
  // Fill StepReport::assumed with what Simulate chooses itself (the pipeline split of layers
  // that do not divide over pp*vpp). Off in the search's hot loop, where the text would cost.
  bool assumptions = true;
};

// Predicts step time, throughput and per-stage memory. Validates the model and the strategy;
// an illegal combination returns InvalidArgument naming the field. A strategy that does not fit
// in memory is still simulated (StepReport::fits = false).
Result<StepReport> Simulate(const ModelSpec& model, const HardwareSpec& hw,
                            const Strategy& strategy, const SimOptions& options = {});

// Formats the report for people (a summary with breakdowns) or as JSON text.
std::string FormatReportText(const StepReport& r, const ModelSpec& m, const HardwareSpec& hw,
                             const Strategy& s);
std::string FormatReportJson(const StepReport& r, const ModelSpec& m, const HardwareSpec& hw,
                             const Strategy& s);

}  // namespace trainsim

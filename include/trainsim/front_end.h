// What every front-end (the CLI, the HTTP service, the Python module) does with a simulate
// request, in one place so that they cannot disagree: strategy fields by the names people type,
// settings layered on a strategy the way the CLI's flags are, the default batch, and the
// report's list of assumptions.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "trainsim/schema.h"
#include "trainsim/status.h"
#include "trainsim/strategy.h"
#include "trainsim/trainsim.h"

namespace trainsim {

// The schema field that `name` names: its canonical key ("tp_size") or its CLI flag without the
// leading dashes, spelt with '-' or '_' ("tp", "main-grad-fp32", "main_grad_fp32"). No two
// fields share a name (a unit test checks). nullptr when no field has that name.
const StrategyField* FindStrategyFieldByName(std::string_view name);

// Applies `settings` (canonical key -> text) on top of `s` as the CLI's strategy flags are
// applied (errors name the field's flag, e.g. "--tp: must be >= 1, got 0"), then the default
// batch (ApplyDefaultBatch) and NormaliseStrategy. `given` gains the keys of `settings`.
Result<Strategy> FinishStrategy(Strategy s, const std::map<std::string, std::string>& settings,
                                StrategyKeys& given);

// Simulate, then the strategy's defaults that no source gave (AssumedStrategyDefaults of
// `given`) listed first among the report's assumptions: the report `simulate --json` prints.
Result<StepReport> SimulateWithAssumptions(const ModelSpec& model, const HardwareSpec& hw,
                                           const Strategy& strategy, const StrategyKeys& given,
                                           const SimOptions& options = {});

}  // namespace trainsim

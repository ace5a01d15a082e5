// SimuMax's input files (github.com/MooreThreads/SimuMax, configs/{strategy,models,system}):
// readers shared by the strategy, model and hardware parsers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "spec/json_fields.h"
#include "trainsim/hardware.h"
#include "trainsim/model.h"
#include "trainsim/report.h"
#include "trainsim/strategy.h"

namespace trainsim::detail {

// SimuMax's recompute keys (enable_recompute, recompute_granularity, recompute_layer_num, the
// selective switches, megatron_recompute[_modules]) with SimuMax's meaning; no-op unless the
// object has enable_recompute or recompute_granularity and no trainsim `recompute` key.
void ApplySimuMaxRecompute(FieldReader& r, const nlohmann::json& j, Strategy& s);

// A SimuMax model JSON (configs/models/*.json: layer_num, head_num, ...).
Status ReadSimuMaxModel(const nlohmann::json& j, ModelSpec& m, const std::string& origin);

// True when `j` looks like a SimuMax system file (accelerator + networks objects).
bool IsSimuMaxSystem(const nlohmann::json& j);
// Converts a SimuMax system file into a hardware profile; `assumed` receives what had no
// counterpart in the file (field, value, why).
Result<HardwareSpec> ParseSimuMaxSystem(const nlohmann::json& j, const std::string& origin,
                                        std::vector<Assumption>* assumed);

}  // namespace trainsim::detail

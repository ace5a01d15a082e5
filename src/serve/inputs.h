// Request bodies into the library's inputs. A model or hardware is a preset id (string) or an
// object inline (the contents of a config.json / hardware JSON); never a path: ids are looked up
// among the embedded presets only (LoadModelPreset / LoadHardwarePreset), so no request reads a
// file. Every error is a Status naming the field, as the CLI words it.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "trainsim/hardware.h"
#include "trainsim/model.h"
#include "trainsim/report.h"
#include "trainsim/status.h"
#include "trainsim/strategy.h"

namespace trainsim::serve {

// The body as a JSON object, through the library's guarded parser (nesting depth, duplicate
// keys, numbers beyond double such as 1e400, invalid UTF-8 are all errors). An empty body is {}.
Result<nlohmann::json> ParseBody(std::string_view body);
// Fails naming the first key of `body` that is not in `allowed`.
Status CheckKeys(const nlohmann::json& body, const std::vector<std::string_view>& allowed);

// "model": a preset id or a config.json object; absent = `trainsim simulate`'s default
// (llama3-8b).
Result<ModelSpec> ReadModel(const nlohmann::json& body);
// "hardware": a preset id or a hardware JSON object (absent = h100_sxm_80gb), then
// "hw_override": an object of hardware fields (as --hw-override). `notes` receives what an
// inline SimuMax system object had no counterpart for (as for a file given to the CLI).
Result<HardwareSpec> ReadHardware(const nlohmann::json& body, std::vector<Assumption>* notes);

// What POST /v1/simulate and /v1/timeline read: model, hardware, and "strategy" (an object with
// what a strategy file holds, workload fields included), layered as `trainsim simulate
// --strategy FILE` layers it: the struct defaults, the object's keys, then FinishStrategy (the
// default batch, NormaliseStrategy). `more` names the body keys an endpoint adds (/v1/plan's
// options).
struct SimInputs {
  ModelSpec model;
  HardwareSpec hardware;
  Strategy strategy;
  StrategyKeys given;                 // keys the strategy object gave
  std::vector<Assumption> hw_notes;   // ReadHardware's notes
  std::vector<IgnoredInput> ignored;  // strategy keys accepted and not simulated
  // A framework profile (other than a generic-* fallback), framework file or Megatron script
  // named the stack; else the band is at least the stack-inferred one (WidenForInferredStack).
  bool stack_named = false;
};
Result<SimInputs> ReadSimInputs(const nlohmann::json& body,
                                const std::vector<std::string_view>& more = {});
// The step of `in` as `trainsim simulate` reports it (SimulateWithAssumptions, then the strategy
// object's ignored keys and the hardware notes); `detail` fills the per-layer table.
Result<StepReport> SimulateInputs(SimInputs& in,
                                  bool detail);  // may apply model defaults to in.strategy

}  // namespace trainsim::serve

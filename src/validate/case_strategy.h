// A validation case's strategy: what the case gives, and its framework profile's defaults for
// what it leaves null, each fill recorded as an assumption.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "trainsim/validate.h"
#include "validate/framework_profile.h"

namespace trainsim::detail {

// A case's "hardware" preset id with its "hardware_overrides" applied (validate.cc); the
// training and inference case readers share it.
Result<HardwareSpec> LoadCaseHardware(const nlohmann::json& j, const std::string& where);

// Reads gpus, seq, mbs, gbs, precision, parallel and recompute of the case object `j` into
// c.strategy (normalised) and c.recompute_auto; c.model and c.hw must be set. Null fields and
// the settings a case never states (overlaps, fused kernels, ...) take the profile's values, and
// each one that matters for the run is appended to c.assumed. Errors name `where` and the key.
Status FillCaseStrategy(const nlohmann::json& j, const std::string& where, const ProfilePick& pick,
                        const std::string& notes, ValidationCase& c);

// The training-loop options a case's notes state in the recipe's words, set on c.strategy.exec
// (call after the profile's Execution is in place), each recorded in c.assumed:
// "optimizer_in_bwd=True" / "fused into backward" (torchtune optimizer_in_bwd),
// "activation offloading" (torchtune enable_activation_offloading), and for rows that list
// their optimisations one by one ("cumulative optimisations") without "chunked
// cross-entropy", the unchunked loss (fused_cross_entropy false).
void ReadLoopOptions(const std::string& notes, ValidationCase& c);

// The policy of a strategy's recompute, as the assumption's value: "none", "selective
// core_attn,...", "full", "full 3 layers per stage".
std::string RecomputeText(const Strategy& s);

}  // namespace trainsim::detail

// Reads a hardware preset's "efficiency" block with the Efficiency schema (trainsim/schema.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "trainsim/hardware.h"
#include "trainsim/status.h"

namespace trainsim::detail {

// Applies the keys present in `block` onto `e`; strict (unknown keys are errors). The messages
// read "<origin>: efficiency: <key>: <rule>".
Status ReadEfficiencyBlock(const nlohmann::json& block, Efficiency& e, const std::string& origin);
// Every field of `e` against its schema rule; the message reads "<key>: <rule>, got <value>".
Status CheckEfficiency(const Efficiency& e);

}  // namespace trainsim::detail

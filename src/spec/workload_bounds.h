// The upper bounds of a strategy's workload sizes (seq, gbs, RL lengths and group, virtual
// tokens, rollout GPUs): ValidateStrategy applies them with the layout's, and search once for
// all the layouts it enumerates (src/workload_rules.h).
#pragma once

#include "trainsim/status.h"
#include "trainsim/strategy.h"

namespace trainsim::detail {

// Invalid naming the field and its limit (trainsim/limits.h).
Status CheckWorkloadBounds(const Strategy& s);

}  // namespace trainsim::detail

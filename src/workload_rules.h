// The rules on what a step trains that no layout changes (issue 11): the workload's sizes
// (seq, gbs, RL lengths and group, virtual tokens), the adapter rank and frozen layers against
// the model, and the RL batch rules. Simulate checks them for its strategy; search once, before
// it enumerates layouts, so that both refuse the same input with the same message.
#pragma once

#include "trainsim/model.h"
#include "trainsim/status.h"
#include "trainsim/strategy.h"

namespace trainsim {

// Invalid naming the field and the rule.
Status CheckWorkloadRules(const ModelSpec& m, const Strategy& s);

}  // namespace trainsim

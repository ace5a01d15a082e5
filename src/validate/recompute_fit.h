// The recompute policy of a run that does not say: the lightest one that fits in memory.
#pragma once

#include "trainsim/trainsim.h"

namespace trainsim::detail {

// Simulates `s` under the lightest recompute policy that fits in HBM, lightest first: none,
// Megatron's default selective (core_attn), the wider module set of the MoE/MLA recipes, then
// full recompute of the fewest layers per stage that fit (Megatron's --recompute-method block
// --recompute-num-layers N), up to every layer. `s` receives the policy taken, and
// `assumption` (when non-null) the policy with why it was taken. The report's `assumed` stays
// empty (SimOptions::assumptions off).
Result<StepReport> SimulateLightestFittingRecompute(const ModelSpec& m, const HardwareSpec& hw,
                                                    Strategy& s, Assumption* assumption);

}  // namespace trainsim::detail

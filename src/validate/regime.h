// Regime features without allocation, for the per-prediction band (uncertainty.cc).
#pragma once

#include <string_view>

#include "trainsim/uncertainty.h"

namespace trainsim::detail {

// The generations HardwareGeneration can return, in a fixed order (indices of GenerationIndex).
inline constexpr std::string_view kGenerationNames[] = {
    "volta", "ampere", "ada", "hopper", "blackwell", "amd", "tpu", "gaudi", "trainium"};
inline constexpr int kGenerationCount = 9;
inline constexpr int kSizeBuckets = 3;

int GenerationIndex(std::string_view generation);
// RegimeOf with the total parameter count already known (StepReport::params_total).
RegimeFeatures RegimeOfRun(double params_total, bool moe, const HardwareSpec& hw,
                           const Strategy& s);

}  // namespace trainsim::detail

// Embedded presets: the ids that LoadModelPreset / LoadHardwarePreset (and LoadModel /
// LoadHardware, which also take file paths) accept.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trainsim/status.h"

namespace trainsim {

std::vector<std::string> ListModelPresets();
std::vector<std::string> ListHardwarePresets();

// Reads a whole file; NotFound names the path.
Result<std::string> ReadTextFile(std::string_view path);

}  // namespace trainsim

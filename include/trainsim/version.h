// The trainsim version (CMake's project VERSION), e.g. "0.1.0"; reports carry it.
#pragma once

#include <string_view>

namespace trainsim {

std::string_view TrainsimVersion();

}  // namespace trainsim

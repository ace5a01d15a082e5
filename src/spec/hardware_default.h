// Hardware figures the simulator fills in when a file leaves them out, marked in the spec's
// `sources` (the reports list them as assumed: issue 11, a file without host_link_gbps_per_dir
// silently got 32 GB/s).
#pragma once

#include <algorithm>
#include <string_view>

#include "trainsim/hardware.h"

namespace trainsim::detail {

// The `document` of a FieldSource whose field the file did not give.
inline constexpr std::string_view kDefaultedField = "trainsim default: not in the hardware file";

inline bool HardwareFieldDefaulted(const HardwareSpec& hw, std::string_view field) {
  return std::any_of(hw.sources.begin(), hw.sources.end(), [&](const HardwareSpec::FieldSource& f) {
    return f.field == field && f.document == kDefaultedField;
  });
}

}  // namespace trainsim::detail

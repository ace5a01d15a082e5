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

// Host (CPU) memory per server assumed when the hardware file gives no host_mem_gib: twice the
// HBM of the server's accelerators. The servers of the catalogue with a documented figure span
// 1.3x (a GB200 NVL72 compute tray: 2 x 480 GB LPDDR5X for 4 x 186 GiB) to 3.6x (AWS p4d:
// 1,152 GiB for 8 x 40 GiB), DGX H200 1.8x, DGX A100 / DGX H100 3.2x; 2x sits at the low end so
// that a plan flagged as fitting on the default is not an optimistic call (docs/FINETUNE.md,
// "Host memory"). The reports list it as assumed when a plan keeps anything on the host.
inline constexpr double kDefaultHostMemPerHbm = 2.0;

// GPUs of one server: the file's gpus_per_node, else the scale-up domain.
inline int ServerGpus(const HardwareSpec& hw) {
  return hw.gpus_per_node > 0 ? hw.gpus_per_node : std::max(1, hw.scaleup_domain);
}

// Host memory of one server in bytes: the file's host_mem_gib, else the default above.
inline double HostMemBytesPerNode(const HardwareSpec& hw) {
  return hw.host_mem_bytes > 0 ? hw.host_mem_bytes
                               : kDefaultHostMemPerHbm * hw.hbm_bytes * ServerGpus(hw);
}

}  // namespace trainsim::detail

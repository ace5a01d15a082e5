// Catalogue figures a hardware preset gives as null with "no source found"
// (data/hardware/README.md): never invented, so a run that would need one is refused by name.
#pragma once

#include <string_view>

#include "trainsim/hardware.h"
#include "trainsim/status.h"

namespace trainsim {

// True when `hw` gives peak_tflops.<precision> ("bf16", "fp16", "fp8", "fp4", "fp32", "tf32") as
// null: no source was found for it. The spec holds 0 for the figure, and its `sources` hold
// {"peak_tflops.<precision>", "no source found", ""}. An override with a number clears it.
bool PeakUnknown(const HardwareSpec& hw, std::string_view precision);

// The peak_tflops key whose figure GEMMs in `d` run at on `hw` (HardwareSpec::PeakFlops): "bf16",
// "fp16" (or "bf16" where the profile gives no fp16 figure), "tf32" (or "fp32"), "fp8", "fp4".
std::string_view PeakKey(const HardwareSpec& hw, DType d);

// Ok when GEMMs in `d` on `hw` run at a sourced peak; otherwise Invalid naming
// peak_tflops.<key> and the rule (a null catalogue figure is never filled in; give one with
// --hw-override or choose a precision the profile has).
Status CheckPeakSourced(const HardwareSpec& hw, DType d);

}  // namespace trainsim

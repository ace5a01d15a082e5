// The pipeline split's rules and the assumption it reports (trainsim/strategy.h has the split).
#pragma once

#include <optional>

#include "trainsim/model.h"
#include "trainsim/report.h"
#include "trainsim/strategy.h"

namespace trainsim::detail {

// The rules of the split, each failure naming the field: explicit first / last stage layers as
// Megatron-LM checks them; otherwise pp*vpp must not exceed the layers plus the embedding, the
// loss and the MTP modules (a chunk may then hold only the embedding or the loss, as Megatron's
// pipeline layouts allow).
Status CheckPipelineSplit(const Strategy& s, const ModelSpec& m);

// The split chosen for the user when the layers do not divide over pp*vpp and no first / last
// stage layers are given: field "pipeline_split", the layers per stage, and the rule.
std::optional<Assumption> PipelineSplitAssumption(const Strategy& s, const ModelSpec& m);

}  // namespace trainsim::detail

// The keys a model reader's file spells: ValidateModel names fields by their HF config.json key,
// and a reader of another format renames them, in the field and in the rule's text, to its own
// (issue 11, "Messages": name the field the user wrote).
#pragma once

#include "trainsim/model.h"
#include "trainsim/status.h"

namespace trainsim::detail {

// `s` (an error of ValidateModel on `m`) with each HF key renamed to the Megatron-LM argument
// that sets it (num_key_value_heads -> --num-query-groups, num_experts -> --num-experts, ...).
Status InMegatronArgs(const Status& s, const ModelSpec& m);

}  // namespace trainsim::detail

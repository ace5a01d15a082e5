// Megatron-LM arguments that are not Strategy schema rows: model-shape arguments, arguments
// that do not change a step's time or memory (accepted silently), and performance-relevant ones
// trainsim does not model (listed in the report's `ignored` list with why).
#pragma once

#include <string>
#include <string_view>

namespace trainsim::megatron {

enum class FlagKind {
  kShape,       // describes the model (ModelFromMegatronShape)
  kHarmless,    // paths, logging, data, tokenizer, checkpointing, seeds, hyper-parameters...
  kUnmodelled,  // changes performance; trainsim does not model it (listed as ignored)
};

struct FlagInfo {
  std::string_view name;
  FlagKind kind;
  std::string_view why;  // kUnmodelled: what it does that trainsim does not model
};

// nullptr for a flag in none of the tables (nor in the Strategy schema: the caller checks that).
const FlagInfo* FindFlag(std::string_view name);

// The known flag nearest to `name` (edit distance at most 3, schema arguments included); "".
std::string NearestFlag(std::string_view name);

}  // namespace trainsim::megatron

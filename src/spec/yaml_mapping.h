// A framework file's YAML loaded as a mapping (LLaMA-Factory training files, Accelerate configs).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "trainsim/status.h"

namespace trainsim::detail {

// Parses `text`; not YAML, or not a mapping of keys, is an error naming `origin` (`what` names
// the kind of file in the message: "a LLaMA-Factory training file").
Result<YAML::Node> LoadYamlMapping(std::string_view text, const std::string& origin,
                                   std::string_view what);

}  // namespace trainsim::detail

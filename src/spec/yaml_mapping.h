// A framework file's YAML loaded as a mapping (LLaMA-Factory training files, Accelerate configs).
#pragma once

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "trainsim/status.h"

namespace trainsim::detail {

// Parses `text`; not YAML, or not a mapping of keys, is an error naming `origin` (`what` names
// the kind of file in the message: "a LLaMA-Factory training file").
Result<YAML::Node> LoadYamlMapping(std::string_view text, const std::string& origin,
                                   std::string_view what);

// A YAML node as JSON (a mapping given where the framework takes a dict, e.g. TrainingArguments
// fsdp_config / deepspeed): scalars true / false as booleans, numbers as numbers, null / ~ as
// null, anything else as a string (the YAML 1.2 core schema).
nlohmann::json YamlToJson(const YAML::Node& node);

}  // namespace trainsim::detail

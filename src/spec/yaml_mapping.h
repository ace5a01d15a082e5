// A framework file's YAML loaded as a mapping (LLaMA-Factory training files, Accelerate configs).
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "trainsim/limits.h"
#include "trainsim/status.h"

namespace trainsim::detail {

// Parses `text`; not YAML, or not a mapping of keys, is an error naming `origin` (`what` names
// the kind of file in the message: "a LLaMA-Factory training file").
Result<YAML::Node> LoadYamlMapping(std::string_view text, const std::string& origin,
                                   std::string_view what);

// A YAML node as JSON (a mapping given where the framework takes a dict, e.g. TrainingArguments
// fsdp_config / deepspeed): scalars true / false as booleans, numbers as numbers, null / ~ as
// null, anything else as a string (the YAML 1.2 core schema). Aliases are expanded, so a few
// lines of anchors can stand for billions of values: past kMaxYamlValues values the conversion
// stops with an error naming `field`.
using limits::kMaxYamlValues;
Result<nlohmann::json> YamlToJson(const YAML::Node& node, const std::string& field);

}  // namespace trainsim::detail

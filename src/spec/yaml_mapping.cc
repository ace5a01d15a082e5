#include "spec/yaml_mapping.h"

#include <cstdlib>
#include <string>

namespace trainsim::detail {

Result<YAML::Node> LoadYamlMapping(std::string_view text, const std::string& origin,
                                   std::string_view what) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Status::Invalid("", "not YAML: " + std::string(e.what())).WithContext(origin);
  }
  if (!root.IsMap())
    return Status::Invalid("", std::string(what) + " is a YAML mapping of keys")
        .WithContext(origin);
  return root;
}

nlohmann::json YamlToJson(const YAML::Node& node) {
  if (node.IsMap()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& kv : node) out[kv.first.as<std::string>()] = YamlToJson(kv.second);
    return out;
  }
  if (node.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : node) out.push_back(YamlToJson(item));
    return out;
  }
  if (!node.IsScalar()) return nullptr;
  const std::string& t = node.Scalar();
  if (node.Tag() == "!") return t;  // quoted: a string
  if (t == "true" || t == "True") return true;
  if (t == "false" || t == "False") return false;
  if (t == "null" || t == "~" || t.empty()) return nullptr;
  char* end = nullptr;
  const long long i = std::strtoll(t.c_str(), &end, 10);
  if (end && *end == '\0') return i;
  const double d = std::strtod(t.c_str(), &end);
  if (end && *end == '\0') return d;
  return t;
}

}  // namespace trainsim::detail

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

namespace {

nlohmann::json ScalarToJson(const YAML::Node& node) {
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

// Depth-first conversion that counts every value it makes; false once `left` runs out.
bool Convert(const YAML::Node& node, size_t& left, nlohmann::json& out) {
  if (left == 0) return false;
  --left;
  if (node.IsMap()) {
    out = nlohmann::json::object();
    for (const auto& kv : node)
      if (!Convert(kv.second, left, out[kv.first.as<std::string>()])) return false;
  } else if (node.IsSequence()) {
    out = nlohmann::json::array();
    for (const auto& item : node)
      if (!Convert(item, left, out.emplace_back())) return false;
  } else {
    out = node.IsScalar() ? ScalarToJson(node) : nlohmann::json(nullptr);
  }
  return true;
}

}  // namespace

Result<nlohmann::json> YamlToJson(const YAML::Node& node, const std::string& field) {
  size_t left = kMaxYamlValues;
  nlohmann::json out;
  if (!Convert(node, left, out))
    return Status::Invalid(field, "expands to more than " + std::to_string(kMaxYamlValues) +
                                      " values (YAML aliases repeat what they name)");
  return out;
}

}  // namespace trainsim::detail

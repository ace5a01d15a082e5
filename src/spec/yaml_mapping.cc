#include "spec/yaml_mapping.h"

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

namespace trainsim::detail {

namespace {

// Every mapping's keys are names (scalars: yaml-cpp throws when a `? [a, b]` key is read as
// text) and appear once: PyYAML, which the frameworks load these files with, keeps the last of
// a repeated key without a word, so a repeated key is refused like a duplicate JSON key. The
// walk counts the values it visits, aliases expanded, and stops past kMaxYamlValues.
Status CheckKeys(const YAML::Node& node, const std::string& where, size_t& left) {
  if (left == 0)  // named by the top-level key, as YamlToJson names it
    return Status::Invalid(where.substr(0, where.find('.')),
                           "expands to more than " + std::to_string(kMaxYamlValues) +
                               " values (YAML aliases repeat what they name)");
  --left;
  if (node.IsSequence()) {
    for (const auto& item : node)
      if (Status st = CheckKeys(item, where, left); !st.ok()) return st;
  } else if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar())
        return Status::Invalid(where, "keys must be names, not lists or mappings");
      const std::string& key = kv.first.Scalar();
      const std::string full = where.empty() ? key : where + "." + key;
      if (!seen.insert(key).second) return Status::Invalid(full, "duplicate key");
      if (Status st = CheckKeys(kv.second, full, left); !st.ok()) return st;
    }
  }
  return Status::Ok();
}

}  // namespace

Result<YAML::Node> LoadYamlMapping(std::string_view text, const std::string& origin,
                                   std::string_view what) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    return Status::Invalid("", "not YAML: " + std::string(e.what())).WithContext(origin);
  }
  // yaml.safe_load refuses a stream of several documents ("expected a single document"); the
  // first alone would drop the others' keys without a word.
  size_t non_empty = 0;
  for (const YAML::Node& d : docs) non_empty += d.IsNull() ? 0 : 1;
  if (non_empty > 1)
    return Status::Invalid("", std::string(what) + " is one YAML document, got " +
                                   std::to_string(non_empty) + " (separated by ---)")
        .WithContext(origin);
  YAML::Node root;
  for (const YAML::Node& d : docs)
    if (!d.IsNull()) root = d;
  if (!root.IsMap())
    return Status::Invalid("", std::string(what) + " is a YAML mapping of keys")
        .WithContext(origin);
  size_t left = kMaxYamlValues;
  if (Status st = CheckKeys(root, "", left); !st.ok()) return st.WithContext(origin);
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

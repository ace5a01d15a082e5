#include "spec/yaml_mapping.h"

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

}  // namespace trainsim::detail

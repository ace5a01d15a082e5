#include "spec/yaml_mapping.h"

#include <yaml-cpp/eventhandler.h>

#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace trainsim::detail {

namespace {

// The offset of the first byte that is not well-formed UTF-8 (Unicode 15, table 3-7: no
// overlong forms, no surrogates, nothing past U+10FFFF); npos when the text is UTF-8.
size_t FirstNonUtf8(std::string_view t) {
  for (size_t i = 0; i < t.size();) {
    const unsigned char c = static_cast<unsigned char>(t[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      lo = c == 0xe0 ? 0xa0 : 0x80;
      hi = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      lo = c == 0xf0 ? 0x90 : 0x80;
      hi = c == 0xf4 ? 0x8f : 0xbf;
    } else {
      return i;
    }
    if (i + n >= t.size()) return i;  // cut short
    for (size_t k = 1; k <= n; ++k) {
      const unsigned char b = static_cast<unsigned char>(t[i + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return std::string_view::npos;
}

// Counts the non-empty documents of a stream, up to kMaxDocuments + 1. Not YAML::LoadAll: on a
// stray top-level ',' (",a") its loop never advances and allocates until the memory is gone.
constexpr int kMaxDocuments = 8;
class DocumentCounter : public YAML::EventHandler {
 public:
  int documents = 0;
  void OnDocumentStart(const YAML::Mark&) override { content_ = false; }
  void OnDocumentEnd() override { documents += content_ ? 1 : 0; }
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { content_ = true; }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {
    content_ = true;
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    content_ = true;
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    content_ = true;
  }
  void OnMapEnd() override {}

 private:
  bool content_ = false;
};

int CountDocuments(std::string_view text) {
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  DocumentCounter counter;
  for (int i = 0; i <= 4 * kMaxDocuments && counter.documents <= kMaxDocuments; ++i)
    if (!parser.HandleNextDocument(counter)) break;
  return counter.documents;
}

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
  // yaml-cpp passes any bytes through, and a value that is not UTF-8 later threw out of the
  // JSON writer (nlohmann's type_error 316: an abort on a LLaMA-Factory fsdp_config value, and
  // on an Accelerate report with --json). JSON and TOML inputs are refused the same way.
  if (const size_t bad = FirstNonUtf8(text); bad != std::string_view::npos)
    return Status::Invalid("", "not YAML: not UTF-8 text at byte " + std::to_string(bad + 1))
        .WithContext(origin);
  YAML::Node root;
  int documents = 0;
  try {
    root = YAML::Load(std::string(text));
    documents = CountDocuments(text);
  } catch (const YAML::Exception& e) {
    return Status::Invalid("", "not YAML: " + std::string(e.what())).WithContext(origin);
  }
  // yaml.safe_load refuses a stream of several documents ("expected a single document"); the
  // first alone would drop the others' keys without a word.
  if (documents > 1)
    return Status::Invalid("",
                           std::string(what) + " is one YAML document, got " +
                               (documents > kMaxDocuments ? "more" : std::to_string(documents)) +
                               " (separated by ---)")
        .WithContext(origin);
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

// Typed, rule-checked reads of JSON fields. Each failure names the field (with its origin) and
// the rule; the first failure is kept and later reads become no-ops.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "trainsim/status.h"

namespace trainsim::detail {

// Parses text into a JSON value; a syntax error names the origin and byte offset.
Result<nlohmann::json> ParseJsonText(std::string_view text, std::string_view origin);

class FieldReader {
 public:
  FieldReader(const nlohmann::json& obj, std::string origin);

  // Each Get* leaves `out` unchanged when the key is absent or null.
  // Integers: rejects non-integers and values below `min`.
  void Int(const char* key, int& out, long long min = 1);
  void Int64(const char* key, int64_t& out, long long min = 1);
  void Double(const char* key, double& out, double min = 0.0);
  void Bool(const char* key, bool& out);
  void String(const char* key, std::string& out);
  // Marks a key as known without reading it.
  void Ignore(const char* key) { used_.insert(key); }
  bool Has(const char* key) const;
  // True when a Get* or Ignore has named `key` (read, or known).
  bool WasRead(const std::string& key) const { return used_.count(key) > 0; }

  // With strict: fails on keys never read nor ignored.
  Status Finish(bool strict);
  const Status& status() const { return status_; }
  void Fail(const std::string& key, const std::string& rule);
  const std::string& origin() const { return origin_; }

 private:
  const nlohmann::json* Find(const char* key);
  const nlohmann::json& obj_;
  std::string origin_;
  std::set<std::string> used_;
  Status status_;
};

// Without an explicit head_dim the frameworks take hidden / heads; a hidden size the head count
// does not divide would silently truncate it (hidden 100, 32 heads -> 3), so it is refused,
// naming both numbers. MLA models size their heads by their own keys and are not checked.
template <typename Model>
void CheckHeadDimDefault(FieldReader& r, const Model& m) {
  if (m.is_mla() || m.heads <= 0 || m.hidden <= 0 || m.hidden % m.heads == 0) return;
  r.Fail("head_dim", "not given, and hidden_size (" + std::to_string(m.hidden) +
                         ") is not divisible by num_attention_heads (" + std::to_string(m.heads) +
                         "): give head_dim");
}

}  // namespace trainsim::detail

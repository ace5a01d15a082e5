#include "spec/json_fields.h"

#include <cmath>
#include <limits>
#include <vector>

#include "spec/field_text.h"
#include "trainsim/limits.h"
#include "util/text_guard.h"

namespace trainsim::detail {

Result<nlohmann::json> ParseJsonText(std::string_view text, std::string_view origin) {
  // The input limits (trainsim/limits.h), checked before the parser sees the text.
  if (static_cast<int64_t>(text.size()) > limits::kMaxInputFileBytes)
    return Status::Invalid("", "the text is " + std::to_string(text.size()) + " bytes; at most " +
                                   std::to_string(limits::kMaxInputFileBytes) + " are read")
        .WithContext(origin);
  if (util::JsonNestingDepth(text, limits::kMaxJsonDepth) > limits::kMaxJsonDepth)
    return Status::Invalid(
               "", "JSON nested deeper than " + std::to_string(limits::kMaxJsonDepth) + " levels")
        .WithContext(origin);
  // Duplicate keys: the parser would silently keep the last one. One frame per open object or
  // array (its keys, its last key, its element count), so that the duplicate is named by its
  // path ("attn_config.attn_type", "cases[2].model"), not by a bare key that may be anywhere.
  struct Frame {
    bool array = false;
    size_t elements = 0;
    std::string key;
    std::set<std::string> keys;
  };
  std::vector<Frame> open;
  std::string duplicate;
  auto path_to = [&open](const std::string& key) {
    std::string p;
    for (size_t i = 0; i + 1 < open.size(); ++i) {
      if (open[i].array) {
        p += '[';
        p += std::to_string(open[i].elements - 1);
        p += ']';
      } else {
        if (!p.empty()) p += '.';
        p += open[i].key;
      }
    }
    if (!p.empty()) p += '.';
    return p += key;
  };
  auto on_event = [&](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    const bool starts = ev == E::object_start || ev == E::array_start || ev == E::value;
    if (starts && !open.empty() && open.back().array) ++open.back().elements;
    if (ev == E::object_start || ev == E::array_start)
      open.emplace_back().array = ev == E::array_start;
    if ((ev == E::object_end || ev == E::array_end) && !open.empty()) open.pop_back();
    if (ev == E::key && !open.empty() && parsed.is_string()) {
      Frame& f = open.back();
      f.key = parsed.get<std::string>();
      if (!f.keys.insert(f.key).second && duplicate.empty()) duplicate = path_to(f.key);
    }
    return true;
  };
  try {
    nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), on_event);
    if (!duplicate.empty()) return Status::Invalid(duplicate, "duplicate key").WithContext(origin);
    return j;
  } catch (const nlohmann::json::parse_error& e) {
    return Status::Parse(std::string(origin) + ": malformed JSON at byte " +
                         std::to_string(e.byte) + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {  // e.g. out_of_range.406: number overflow (1e309)
    return Status::Parse(std::string(origin) + ": malformed JSON: " + e.what());
  }
}

FieldReader::FieldReader(const nlohmann::json& obj, std::string origin)
    : obj_(obj), origin_(std::move(origin)) {
  if (obj_.is_object()) return;
  // A nested reader's origin ends in its key ("x.json: moe"): that key is the offending field.
  const size_t last = origin_.rfind(": ");
  if (last == std::string::npos)
    status_ = Status::Invalid("", "must be a JSON object").WithContext(origin_);
  else
    status_ = Status::Invalid(origin_.substr(last + 2), "must be a JSON object")
                  .WithContext(origin_.substr(0, last));
}

void FieldReader::Fail(const std::string& key, const std::string& rule) {
  if (status_.ok()) status_ = Status::Invalid(key, rule).WithContext(origin_);
}

bool FieldReader::Has(const char* key) const {
  if (!obj_.is_object()) return false;
  auto it = obj_.find(key);
  return it != obj_.end() && !it->is_null();
}

const nlohmann::json* FieldReader::Find(const char* key) {
  used_.insert(key);
  if (!status_.ok() || !obj_.is_object()) return nullptr;
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null()) return nullptr;
  return &*it;
}

// Integers read from JSON: at most 2^53 in magnitude (exact in a double, as JSON numbers are
// meant to be), so that the readers' own arithmetic before validation (a default of 4 x n_embd,
// a vocabulary padded up to a multiple) cannot overflow int64. Every such field is a model
// dimension, bounded far lower by ValidateModel. ASan + UBSan found 4 * 2^63-1 (GPT-2) and
// 2^63-1 + 1 (SimuMax vocabulary padding).
constexpr long long kMaxJsonInteger = 1LL << 53;

void FieldReader::Int64(const char* key, int64_t& out, long long min) {
  const nlohmann::json* v = Find(key);
  if (!v) return;
  long long x = 0;
  if (v->is_number_unsigned() && v->get<unsigned long long>() > kMaxJsonInteger) {
    x = kMaxJsonInteger + 1;  // above the bound, refused below
  } else if (v->is_number_integer()) {
    x = v->get<long long>();
  } else if (v->is_number_float()) {
    double d = v->get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) return Fail(key, "must be an integer");
    x = std::fabs(d) > static_cast<double>(kMaxJsonInteger)
            ? (d > 0 ? 1 : -1) * (kMaxJsonInteger + 1)
            : static_cast<long long>(d);
  } else {
    return Fail(key, "must be an integer, got " + std::string(v->type_name()));
  }
  if (x < min) return Fail(key, "must be >= " + std::to_string(min) + ", got " + std::to_string(x));
  if (x > kMaxJsonInteger)
    return Fail(key, "must be <= 2^53 (" + std::to_string(kMaxJsonInteger) + ")");
  out = x;
}

void FieldReader::Int(const char* key, int& out, long long min) {
  int64_t x = out;
  const bool had = status_.ok();
  Int64(key, x, min);
  if (!had || !status_.ok()) return;
  if (x > std::numeric_limits<int>::max())
    return Fail(key, "must be <= " + std::to_string(std::numeric_limits<int>::max()));
  out = static_cast<int>(x);
}

void FieldReader::Double(const char* key, double& out, double min) {
  const nlohmann::json* v = Find(key);
  if (!v) return;
  if (!v->is_number()) return Fail(key, "must be a number, got " + std::string(v->type_name()));
  double d = v->get<double>();
  if (!std::isfinite(d)) return Fail(key, "must be finite");
  // %g-style bounds: std::to_string printed "must be >= 0.000000" (and 0.000000 for 1e-9).
  if (d < min) return Fail(key, "must be >= " + NumberText(min) + ", got " + NumberText(d));
  out = d;
}

void FieldReader::Bool(const char* key, bool& out) {
  const nlohmann::json* v = Find(key);
  if (!v) return;
  if (v->is_boolean()) {
    out = v->get<bool>();
  } else if (v->is_number_integer() && (v->get<long long>() == 0 || v->get<long long>() == 1)) {
    out = v->get<long long>() == 1;
  } else {
    Fail(key, "must be true or false, got " + std::string(v->type_name()));
  }
}

void FieldReader::String(const char* key, std::string& out) {
  const nlohmann::json* v = Find(key);
  if (!v) return;
  if (!v->is_string()) return Fail(key, "must be a string, got " + std::string(v->type_name()));
  out = v->get<std::string>();
}

Status FieldReader::Finish(bool strict) {
  if (!status_.ok() || !strict) return status_;
  for (auto it = obj_.begin(); it != obj_.end(); ++it) {
    if (!used_.count(it.key())) {
      Fail(it.key(), "unknown key");
      break;
    }
  }
  return status_;
}

}  // namespace trainsim::detail

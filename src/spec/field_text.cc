#include "spec/field_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace trainsim::detail {

Status ParseIntText(std::string_view text, long long min, long long max, long long& out) {
  long long v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc::result_out_of_range)
    return Status::Invalid("must be <= " + std::to_string(max) + ", got '" + std::string(text) +
                           "'");
  if (ec != std::errc() || ptr != end || text.empty())
    return Status::Invalid("must be an integer, got '" + std::string(text) + "'");
  if (v < min)
    return Status::Invalid("must be >= " + std::to_string(min) + ", got " + std::string(text));
  if (v > max)
    return Status::Invalid("must be <= " + std::to_string(max) + ", got " + std::string(text));
  out = v;
  return Status::Ok();
}

Status ParseIntText(std::string_view text, long long min, long long max, int& out) {
  long long v = 0;
  Status st = ParseIntText(text, min, std::min<long long>(max, std::numeric_limits<int>::max()), v);
  if (st.ok()) out = static_cast<int>(v);
  return st;
}

Status ParseIntText(std::string_view text, long long min, int& out) {
  return ParseIntText(text, min, std::numeric_limits<int>::max(), out);
}

Status ParseBoolText(std::string_view text, bool& out) {
  if (text == "true") {
    out = true;
  } else if (text == "false") {
    out = false;
  } else {
    return Status::Invalid("must be true or false, got '" + std::string(text) + "'");
  }
  return Status::Ok();
}

Status ParseNumberText(std::string_view text, double min, double max, double& out) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || text.empty() || !std::isfinite(v))
    return Status::Invalid("must be a finite number, got '" + std::string(text) + "'");
  if (v < min || v > max)
    return Status::Invalid("must be in [" + NumberText(min) + ", " + NumberText(max) + "], got " +
                           std::string(text));
  out = v;
  return Status::Ok();
}

std::string NumberText(double v) {
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, ptr) : std::string("nan");
}

}  // namespace trainsim::detail

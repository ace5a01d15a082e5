// Strict number parsing with std::from_chars: no exceptions, no locale, no base guessing.
// The whole text must be the number ("12", "-3", "1.5e3"); leading/trailing text, spaces, a '+'
// sign, "0x" prefixes, "inf" and "nan" are rejected. Leading zeros are decimal ("08" is 8, as
// Python's int() reads them in Megatron-LM command lines), never octal.
#pragma once

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <system_error>

namespace trainsim::util {

template <typename T = long long>
std::optional<T> ParseInt(std::string_view s) {
  T v{};
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v, 10);
  if (s.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

inline std::optional<double> ParseDouble(std::string_view s) {
  double v = 0;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v, std::chars_format::general);
  if (s.empty() || ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace trainsim::util

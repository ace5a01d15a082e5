// The canonical text form of schema values (trainsim/schema.h): parsing with std::from_chars and
// the field's rule, printing so that a parse of the print gives the same value.
#pragma once

#include <limits>
#include <string>
#include <string_view>

#include "trainsim/status.h"

namespace trainsim::detail {

// A whole-string integer in [min, max]; the message states the rule ("must be >= 1, got 0").
Status ParseIntText(std::string_view text, long long min, long long max, long long& out);
Status ParseIntText(std::string_view text, long long min, long long max, int& out);
Status ParseIntText(std::string_view text, long long min, int& out);  // max: INT_MAX
// "true" or "false".
Status ParseBoolText(std::string_view text, bool& out);
// A finite number in [min, max].
Status ParseNumberText(std::string_view text, double min, double max, double& out);
// The shortest text that parses back to exactly `v`.
std::string NumberText(double v);
inline std::string BoolText(bool b) {
  return b ? "true" : "false";
}

}  // namespace trainsim::detail

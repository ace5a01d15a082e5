#include "validate/notes_match.h"

namespace trainsim {
namespace {

constexpr size_t kMaxDigits = 9;

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

// The end of the digit run at `at`, or npos when it is empty or longer than kMaxDigits.
size_t DigitRun(std::string_view t, size_t at) {
  size_t e = at;
  while (e < t.size() && IsDigit(t[e])) ++e;
  return e == at || e - at > kMaxDigits ? std::string_view::npos : e;
}

// One pattern token at t[at]: its end in the text, or npos. Digit and blank runs are greedy;
// no pattern here needs them to give back a character, since the literal after each one is
// neither a digit nor a blank.
size_t MatchToken(std::string_view t, size_t at, char kind, std::vector<std::string>& caps) {
  size_t e = std::string_view::npos;
  if (kind == 'd') {
    e = DigitRun(t, at);
  } else if (kind == 'f') {
    size_t p = at < t.size() && t[at] == '0' ? at + 1 : at;
    if (p < t.size() && t[p] == '.') e = DigitRun(t, p + 1);
  } else if (kind == 's') {
    e = at;
    while (e < t.size() && (t[e] == ' ' || t[e] == '\t')) ++e;
    if (e == at) e = std::string_view::npos;
    return e;
  }
  if (e != std::string_view::npos) caps.emplace_back(t.substr(at, e - at));
  return e;
}

bool MatchAt(std::string_view t, size_t at, std::string_view pattern,
             std::vector<std::string>& caps) {
  for (size_t p = 0; p < pattern.size(); ++p) {
    if (pattern[p] == '%' && p + 1 < pattern.size()) {
      at = MatchToken(t, at, pattern[++p], caps);
      if (at == std::string_view::npos) return false;
    } else if (at < t.size() && t[at] == pattern[p]) {
      ++at;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

bool MatchNotes(std::string_view text, std::string_view pattern, std::vector<std::string>& caps) {
  for (size_t at = 0; at < text.size(); ++at) {
    // A capture starting inside a digit run would not be leftmost: skip those starts.
    if (pattern.size() > 1 && pattern[0] == '%' && pattern[1] == 'd' && at > 0 &&
        IsDigit(text[at - 1]))
      continue;
    caps.clear();
    if (MatchAt(text, at, pattern, caps)) return true;
  }
  caps.clear();
  return false;
}

}  // namespace trainsim

// Cheap checks on untrusted text before it is parsed or echoed: JSON nesting depth (a pre-scan,
// so that no recursive walk of a parsed document can overflow the stack) and escaping for a
// one-line terminal message (no raw control characters or newlines from the input).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trainsim::util {

// The deepest nesting of '[' / '{' in JSON text, counting only brackets outside strings; stops
// scanning and returns `cap + 1` as soon as the depth exceeds `cap`. Malformed text is scanned
// all the same (the parser reports it).
int JsonNestingDepth(std::string_view text, int cap);

// `text` made safe for one line of a terminal: "\n", "\r", "\t" as two-character escapes, other
// control bytes (< 0x20, 0x7f) as "\xNN"; bytes >= 0x80 (UTF-8) kept. Longer than `max_bytes`:
// cut there, with " ... (N bytes)" appended.
std::string EscapeForTerminal(std::string_view text, size_t max_bytes = 2000);

}  // namespace trainsim::util

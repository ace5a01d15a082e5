// The small bash subset of launch scripts (trainsim/megatron.h, ParseMegatronScript): a lexer
// that keeps each word's raw text, and the expansion of one word into fields.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/limits.h"
#include "trainsim/status.h"

namespace trainsim::shell {

enum class TokenKind {
  kWord,     // raw text, quotes and $-expressions kept for Expand
  kOp,       // ; & | && || ;; ( ) and redirections (> >> < >& &> <<)
  kNewline,  // end of a logical line
  kArray,    // NAME=( ... ) or NAME+=( ... ): raw = "NAME=" or "NAME+=", elems = the words
};

struct Token {
  TokenKind kind = TokenKind::kWord;
  std::string raw;
  int line = 0;  // 1-based
  std::vector<std::string> elems;
};

// Splits the text into tokens: comments dropped, backslash-newline joined. Errors name the line
// of an unmatched quote or bracket.
Result<std::vector<Token>> Lex(std::string_view text);

// Shell variables: a scalar is an array of one element; absent = unset. The script's arguments
// are "1", "2", ... and, for $@ / $* and $#, kPositionalAll and kPositionalCount (names no
// assignment can make).
using Vars = std::map<std::string, std::vector<std::string>>;
inline constexpr const char* kPositionalAll = "@";
inline constexpr const char* kPositionalCount = "#";

// A word expanding to more than this many bytes is refused: launch-script arguments are short,
// and variables that double themselves reach gigabytes in forty lines.
inline constexpr size_t kMaxWordBytes = limits::kMaxScriptWordBytes;

// The fields one raw word expands to (quote removal, parameter and arithmetic expansion, word
// splitting of unquoted expansions; "${A[@]}" gives one field per element). $(command) and
// `command` are kept as their text. An error names the construct (or a word past kMaxWordBytes).
Result<std::vector<std::string>> Expand(std::string_view raw, const Vars& vars);
// The same joined with single spaces (assignments, which are not split).
Result<std::string> ExpandJoined(std::string_view raw, const Vars& vars);

// Integer arithmetic of $(( )): + - * / % and parentheses over numbers and variables.
Result<long long> Arithmetic(std::string_view expr, const Vars& vars);

// NAME=... or NAME+=...: the name and whether it appends; false when `raw` is not one.
bool IsAssignment(std::string_view raw, std::string* name, bool* append, std::string* value);

}  // namespace trainsim::shell

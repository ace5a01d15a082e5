// The conditions of if / elif in launch scripts: [[ ]], [ ] and test with the string, integer
// and file tests of bash(1), "CONDITIONAL EXPRESSIONS", joined by && / || and negated by !.
// File tests count as true: the script runs where its files exist.
#include <fnmatch.h>
#include <regex.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "spec/megatron_shell.h"
#include "trainsim/status.h"

namespace trainsim::detail {
namespace {

// [[ x =~ re ]]: POSIX extended regular expression, matched anywhere in x (bash(1),
// "CONDITIONAL EXPRESSIONS"). Bounded so that glibc's matcher stays cheap on any input: a pattern
// of at most kMaxRegex characters without interval expressions ({n,m} copies the expression n
// times when compiled: nested, a short pattern compiles to millions of nodes), with at most
// kMaxRegexPlus '+' (glibc's parse_dup_op, posix/regcomp.c, compiles "x+" as "x x*", a copy of
// x: each '+' may double the pattern, and "(qw+++...+en)" with forty of them took 2 GB) and
// without back-references (\1 to \9: glibc matches them by backtracking), and a word of at
// most kMaxRegexSubject characters (the matcher's work grows with both). Launch scripts test
// short names against short patterns; anything else cannot be evaluated.
constexpr size_t kMaxRegex = 256, kMaxRegexSubject = 4096, kMaxRegexPlus = 4;

bool RegexIsBounded(const std::string& re) {
  if (re.size() > kMaxRegex || re.find('{') != std::string::npos) return false;
  if (static_cast<size_t>(std::count(re.begin(), re.end(), '+')) > kMaxRegexPlus) return false;
  for (size_t i = 0; i + 1 < re.size(); ++i)
    if (re[i] == '\\' && re[i + 1] >= '1' && re[i + 1] <= '9') return false;
  return true;
}

std::optional<bool> RegexMatch(const std::string& x, const std::string& re) {
  if (x.size() > kMaxRegexSubject || !RegexIsBounded(re)) return std::nullopt;
  regex_t compiled;
  if (regcomp(&compiled, re.c_str(), REG_EXTENDED | REG_NOSUB) != 0) return std::nullopt;
  const bool match = regexec(&compiled, x.c_str(), 0, nullptr, 0) == 0;
  regfree(&compiled);
  return match;
}

class Cond {
 public:
  Cond(const std::vector<std::string>& w, const std::vector<bool>& op, int line)
      : w_(w), op_(op), line_(line) {}
  Result<bool> Run() {
    auto v = List(w_.size());
    if (v.ok() && i_ != w_.size()) return Bad();
    return v;
  }

 private:
  Status Bad() const {
    std::string text;
    for (const std::string& w : w_) text += (text.empty() ? "" : " ") + w;
    return Status::Invalid("line " + std::to_string(line_),
                           "cannot evaluate the condition '" + text +
                               "' (read: [[ ]], [ ] and test with string, integer and file tests)");
  }
  bool IsOp(size_t i, std::string_view o) const { return i < w_.size() && op_[i] && w_[i] == o; }
  bool Is(size_t i, std::string_view o) const { return i < w_.size() && w_[i] == o; }
  // Terms joined by && / || (and -a / -o inside [ ]), left to right, up to `end`.
  Result<bool> List(size_t end) {
    auto v = Term(end);
    if (!v.ok()) return v;
    bool r = v.value();
    while (i_ < end && (IsOp(i_, "&&") || IsOp(i_, "||") || Is(i_, "-a") || Is(i_, "-o"))) {
      const bool conj = w_[i_] == "&&" || w_[i_] == "-a";
      ++i_;
      auto b = Term(end);
      if (!b.ok()) return b;
      r = conj ? (r && b.value()) : (r || b.value());
    }
    return r;
  }
  Result<bool> Term(size_t end);
  Result<bool> Test(size_t from, size_t to) const;

  const std::vector<std::string>& w_;
  const std::vector<bool>& op_;
  int line_;
  size_t i_ = 0;
};

Result<bool> Cond::Term(size_t end) {
  if (i_ >= end) return Bad();
  if (Is(i_, "!")) {  // a run of negations, counted rather than recursed into
    bool negate = false;
    for (; i_ < end && Is(i_, "!"); ++i_) negate = !negate;
    auto v = Term(end);
    if (!v.ok()) return v;
    return negate != v.value();
  }
  if (Is(i_, "true") || Is(i_, "false")) return w_[i_++] == "true";
  if (IsOp(i_, "(")) {  // ( list ): a subshell, its status the list's
    size_t j = i_ + 1;
    for (int depth = 1; j < end; ++j) {
      if (IsOp(j, "(")) ++depth;
      if (IsOp(j, ")") && --depth == 0) break;
    }
    if (j >= end) return Bad();
    ++i_;
    auto v = List(j);
    if (!v.ok()) return v;
    if (i_ != j) return Bad();
    i_ = j + 1;
    return v;
  }
  if (Is(i_, "[[") || Is(i_, "[")) {
    const std::string close = w_[i_] == "[[" ? "]]" : "]";
    size_t j = i_ + 1;
    while (j < end && !Is(j, close)) ++j;
    if (j >= end) return Bad();
    const size_t from = ++i_;
    // Inside the brackets: tests joined by && / || / -a / -o.
    size_t k = from;
    bool r = false, first = true, conj = false;
    while (k <= j) {
      size_t stop = k;
      while (stop < j && !IsOp(stop, "&&") && !IsOp(stop, "||") && !Is(stop, "-a") &&
             !Is(stop, "-o"))
        ++stop;
      auto t = Test(k, stop);
      if (!t.ok()) return t;
      r = first ? t.value() : conj ? (r && t.value()) : (r || t.value());
      first = false;
      if (stop >= j) break;
      conj = w_[stop] == "&&" || w_[stop] == "-a";
      k = stop + 1;
    }
    i_ = j + 1;
    return r;
  }
  // "[$X = y]" with no space after '[': bash looks up a command named "[0" (say), finds none
  // ("command not found", status 127), and the condition is false; the script goes on.
  if (i_ < end && !op_[i_] && w_[i_].size() > 1 && w_[i_][0] == '[' && w_[i_] != "[[") {
    while (i_ < end && !op_[i_]) ++i_;
    return false;
  }
  if (Is(i_, "test")) {
    size_t j = ++i_;
    while (j < end && !op_[j]) ++j;
    auto t = Test(i_, j);
    i_ = j;
    return t;
  }
  return Bad();
}

Result<bool> Cond::Test(size_t from, size_t to) const {
  const size_t n = to - from;
  const std::string* a = n > 0 ? &w_[from] : nullptr;
  if (n == 0) return false;
  if (n == 1) return !a->empty();
  if (*a == "!") {
    size_t k = from;  // a run of negations, counted rather than recursed into
    while (k < to && w_[k] == "!") ++k;
    if (k == to) return (k - from) % 2 == 1;  // the last "!" is the word tested: non-empty
    auto v = Test(k, to);
    if (!v.ok()) return v;
    return ((k - from) % 2 == 1) != v.value();
  }
  if (n == 2) {
    const std::string& x = w_[from + 1];
    if (*a == "-z") return x.empty();
    if (*a == "-n") return !x.empty();
    if (*a == "-f" || *a == "-d" || *a == "-e" || *a == "-r" || *a == "-s" || *a == "-x" ||
        *a == "-L")
      return true;
    return Bad();
  }
  if (n != 3) return Bad();
  const std::string &x = *a, &op = w_[from + 1], &y = w_[from + 2];
  if (op == "=" || op == "==") return fnmatch(y.c_str(), x.c_str(), 0) == 0;
  if (op == "!=") return fnmatch(y.c_str(), x.c_str(), 0) != 0;
  if (op == "=~") {
    const std::optional<bool> m = RegexMatch(x, y);
    if (!m) return Bad();
    return *m;
  }
  if (op == "<") return x < y;
  if (op == ">") return x > y;
  static const shell::Vars kNone;
  auto l = shell::Arithmetic(x, kNone), r = shell::Arithmetic(y, kNone);
  if (!l.ok() || !r.ok()) return Bad();
  const long long p = l.value(), q = r.value();
  if (op == "-eq") return p == q;
  if (op == "-ne") return p != q;
  if (op == "-lt") return p < q;
  if (op == "-le") return p <= q;
  if (op == "-gt") return p > q;
  if (op == "-ge") return p >= q;
  return Bad();
}

}  // namespace

// The right side of =~ runs to the next && / || outside parentheses or the ]]: bash reads
// ^(llama|qwen) as one pattern, where the lexer saw the words ^ ( llama | qwen ).
void MergeRegexOperands(std::vector<std::string>& words, std::vector<bool>& is_op) {
  for (size_t k = 0; k + 1 < words.size(); ++k) {
    if (words[k] != "=~" || is_op[k]) continue;
    size_t end = k + 1;
    int depth = 0;
    std::string re;
    for (; end < words.size(); ++end) {
      const std::string& w = words[end];
      if (w == "]]" || (depth == 0 && is_op[end] && (w == "&&" || w == "||"))) break;
      if (is_op[end] && w == "(") ++depth;
      if (is_op[end] && w == ")") --depth;
      re += w;
    }
    if (end == k + 1) continue;
    words.erase(words.begin() + static_cast<long>(k) + 2, words.begin() + static_cast<long>(end));
    is_op.erase(is_op.begin() + static_cast<long>(k) + 2, is_op.begin() + static_cast<long>(end));
    words[k + 1] = re;
    is_op[k + 1] = false;
  }
}

Result<bool> EvalCondition(const std::vector<std::string>& words_in,
                           const std::vector<bool>& is_op_in, int line) {
  std::vector<std::string> words = words_in;
  std::vector<bool> is_op = is_op_in;
  MergeRegexOperands(words, is_op);
  return Cond(words, is_op, line).Run();
}

}  // namespace trainsim::detail

// Expanding one word of a launch script into fields (megatron_shell.h), as bash(1) describes
// it: "Parameter Expansion", "Arithmetic Expansion", "Word Splitting", "Quote Removal".
#include <algorithm>
#include <cctype>

#include "spec/megatron_shell.h"
#include "trainsim/limits.h"

namespace trainsim::shell {
namespace {

// Builds the fields of one word: quoted text joins the current field, unquoted expansion
// results are split at blanks.
class Fields {
 public:
  void Quoted(std::string_view s) {
    Open();
    out_.back() += s;
    bytes_ += s.size();
  }
  void Unquoted(std::string_view s) {
    for (char c : s) {
      if (c == ' ' || c == '\t' || c == '\n') {
        open_ = false;
      } else {
        Open();
        out_.back() += c;
        ++bytes_;
      }
    }
  }
  void Break() { open_ = false; }
  std::vector<std::string> Take() { return std::move(out_); }
  size_t bytes() const { return bytes_; }

 private:
  void Open() {
    if (!open_) {
      out_.emplace_back();
      bytes_ += sizeof(std::string);  // an empty field still costs its string
    }
    open_ = true;
  }
  std::vector<std::string> out_;
  bool open_ = false;
  size_t bytes_ = 0;
};

const std::vector<std::string>* Lookup(const Vars& vars, const std::string& name) {
  const auto it = vars.find(name);
  return it == vars.end() ? nullptr : &it->second;
}

std::string Joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& e : v) s += (s.empty() ? "" : " ") + e;
  return s;
}

// The end of the construct opened at `i` (a '(' or '{'), matching nested pairs.
size_t Closing(std::string_view s, size_t i) {
  const char open = s[i], close = open == '(' ? ')' : '}';
  int depth = 0;
  for (; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '\'') {
      i = s.find('\'', i + 1);
      if (i == std::string_view::npos) return s.size();
    } else if (s[i] == open) {
      ++depth;
    } else if (s[i] == close && --depth == 0) {
      return i;
    }
  }
  return s.size();
}

// The index after the backtick that closes the one at `i`, backslash escapes skipped as the
// lexer skips them (megatron_shell_lex.cc, ReadBalanced); the end of `s` when unmatched.
size_t BacktickEnd(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '`') {
      return i + 1;
    }
  }
  return s.size();
}

// $@ / $* (every positional parameter) and $# (their count), which the interpreter stores under
// the names "@" and "#" (kPositionalAll, kPositionalCount); none when the script got no arguments.
std::vector<std::string> Special(const Vars& vars, char which) {
  const auto* v = Lookup(vars, which == '#' ? kPositionalCount : kPositionalAll);
  if (v) return *v;
  return which == '#' ? std::vector<std::string>{"0"} : std::vector<std::string>{};
}

// ${...} without the braces: NAME, NAME[@], NAME[n], #NAME, NAME:-w, NAME-w, NAME:=w, NAME:+w.
// `elems` receives the values (more than one only for NAME[@] / NAME[*]).
Status Parameter(std::string_view body, const Vars& vars, std::vector<std::string>& elems) {
  if (body == "#" || body == "@" || body == "*") {  // ${#}, ${@}, ${*}: the script's arguments
    elems = Special(vars, body[0]);
    return Status::Ok();
  }
  const bool length = !body.empty() && body[0] == '#';
  if (length) body.remove_prefix(1);
  size_t k = 0;
  while (k < body.size() && (std::isalnum(static_cast<unsigned char>(body[k])) || body[k] == '_'))
    ++k;
  const std::string name(body.substr(0, k));
  std::string_view rest = body.substr(k);
  const std::vector<std::string>* v = Lookup(vars, name);
  elems.clear();
  if (!rest.empty() && rest[0] == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos)
      return Status::Invalid("${" + std::string(body) + "}", "unmatched [");
    const std::string_view index = rest.substr(1, close - 1);
    rest.remove_prefix(close + 1);
    if (v && (index == "@" || index == "*")) {
      elems = *v;
    } else if (v) {
      auto n = Arithmetic(index, vars);
      if (!n.ok()) return n.status();
      if (n.value() >= 0 && n.value() < static_cast<long long>(v->size()))
        elems.push_back((*v)[n.value()]);
    }
  } else if (v) {
    elems.push_back(v->empty() ? std::string() : v->front());
  }
  if (length) {
    elems = {std::to_string(elems.empty() ? 0 : elems.front().size())};
    return Status::Ok();
  }
  if (rest.empty()) return Status::Ok();
  const bool colon = rest[0] == ':';
  if (colon) rest.remove_prefix(1);
  if (rest.empty() || (rest[0] != '-' && rest[0] != '=' && rest[0] != '+' && rest[0] != '?'))
    return Status::Invalid("${" + std::string(body) + "}",
                           "only ${VAR}, ${VAR:-default}, ${VAR:+alt}, ${A[@]} and ${#VAR} are "
                           "read");
  const char op = rest[0];
  const bool unset = elems.empty() || (colon && elems.size() == 1 && elems[0].empty());
  auto word = ExpandJoined(rest.substr(1), vars);
  if (!word.ok()) return word.status();
  if (op == '+') {
    elems = unset ? std::vector<std::string>{} : std::vector<std::string>{word.value()};
  } else if (unset) {
    elems = {word.value()};  // -, = (the assignment is not kept) and ? alike
  }
  return Status::Ok();
}

// One $-expression at s[i] (s[i] == '$'); appends its value to `f`; returns the index after it.
Result<size_t> Dollar(std::string_view s, size_t i, const Vars& vars, bool quoted, Fields& f) {
  const char n = i + 1 < s.size() ? s[i + 1] : '\0';
  std::vector<std::string> elems;
  size_t end = i + 1;
  if (n == '(' && i + 2 < s.size() && s[i + 2] == '(') {  // $(( arithmetic ))
    const size_t close = Closing(s, i + 1);
    if (close >= s.size()) return Status::Invalid(std::string(s), "unmatched $((");
    // A value only known when the script runs (a variable holding $(command) text) stays text.
    auto v = Arithmetic(s.substr(i + 3, close - i - 4), vars);
    elems.push_back(v.ok() ? std::to_string(v.value()) : std::string(s.substr(i, close + 1 - i)));
    end = close + 1;
  } else if (n == '(') {  // $(command): its output is unknown; kept as text
    const size_t close = Closing(s, i + 1);
    elems.push_back(std::string(s.substr(i, close + 1 - i)));
    end = close + 1;
  } else if (n == '{') {
    const size_t close = Closing(s, i + 1);
    if (close >= s.size()) return Status::Invalid(std::string(s), "unmatched ${");
    if (Status st = Parameter(s.substr(i + 2, close - i - 2), vars, elems); !st.ok()) return st;
    end = close + 1;
  } else if (std::isalpha(static_cast<unsigned char>(n)) || n == '_') {
    size_t k = i + 1;
    while (k < s.size() && (std::isalnum(static_cast<unsigned char>(s[k])) || s[k] == '_')) ++k;
    if (const auto* v = Lookup(vars, std::string(s.substr(i + 1, k - i - 1))); v && !v->empty())
      elems.push_back(v->front());
    end = k;
  } else if (std::isdigit(static_cast<unsigned char>(n))) {  // $1: one digit, as bash reads it
    if (const auto* v = Lookup(vars, std::string(1, n)); v && !v->empty())
      elems.push_back(v->front());
    end = i + 2;
  } else if (n == '@' || n == '*' || n == '#') {
    elems = Special(vars, n);
    end = i + 2;
  } else if (n == '?') {  // the last exit status: commands are taken to succeed
    elems.push_back("0");
    end = i + 2;
  } else if (n == '$' || n == '!' || n == '-') {
    end = i + 2;  // process ids, shell options: none in a script read as text
  } else {
    elems.push_back("$");
  }
  for (size_t e = 0; e < elems.size(); ++e) {
    if (e > 0 && quoted) f.Break();  // "${A[@]}": one field per element
    if (quoted)
      f.Quoted(elems[e]);
    else
      f.Unquoted(e > 0 ? " " + elems[e] : elems[e]);
  }
  return end;
}

}  // namespace

namespace {

// ${A:-${B:-...}} nests Expand inside itself: deeper than this is refused rather than allowed
// to overflow the stack (launch scripts nest two or three levels).
constexpr int kMaxNest = limits::kMaxScriptExpansionNesting;
thread_local int expand_nest = 0;

}  // namespace

Result<std::vector<std::string>> Expand(std::string_view s, const Vars& vars) {
  struct Nest {
    Nest() { ++expand_nest; }
    ~Nest() { --expand_nest; }
  } nest;
  if (expand_nest > kMaxNest)
    return Status::Invalid(std::string(s.substr(0, 40)),
                           "nests ${...} more than " + std::to_string(kMaxNest) + " deep");
  Fields f;
  bool dq = false;  // inside double quotes
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (c == '\'' && !dq) {
      // An unmatched quote (a word the lexer read inside backticks) runs to the end: the scan
      // never restarts.
      const size_t close = std::min(s.find('\'', i + 1), s.size());
      f.Quoted(s.substr(i + 1, close - i - 1));
      i = close + 1;
    } else if (c == '"') {
      dq = !dq;
      f.Quoted("");
      ++i;
    } else if (c == '\\' && i + 1 < s.size()) {
      const char n = s[i + 1];
      if (!dq || n == '$' || n == '`' || n == '"' || n == '\\')
        f.Quoted(std::string(1, n));
      else
        f.Quoted(s.substr(i, 2));
      i += 2;
    } else if (c == '$') {
      auto next = Dollar(s, i, vars, dq, f);
      if (!next.ok()) return next.status();
      i = next.value();
    } else if (c == '`') {
      const size_t end = BacktickEnd(s, i);
      f.Quoted(s.substr(i, end - i));
      i = end;
    } else {
      f.Quoted(std::string(1, c));
      ++i;
    }
    if (f.bytes() > kMaxWordBytes)
      return Status::Invalid(std::string(s.substr(0, 40)),
                             "expands to more than " + std::to_string(kMaxWordBytes) +
                                 " bytes (variables that double themselves?)");
  }
  return f.Take();
}

Result<std::string> ExpandJoined(std::string_view raw, const Vars& vars) {
  auto fields = Expand(raw, vars);
  if (!fields.ok()) return fields.status();
  return Joined(fields.value());
}

}  // namespace trainsim::shell

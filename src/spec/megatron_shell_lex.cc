// Lexing launch scripts (megatron_shell.h): words with their raw text, operators and newlines,
// following bash's quoting rules (bash(1), "QUOTING" and "DEFINITIONS").
#include <cctype>

#include "spec/megatron_shell.h"

namespace trainsim::shell {
namespace {

bool IsOpChar(char c) {
  return c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
}

class Lexer {
 public:
  explicit Lexer(std::string_view t) : t_(t) {}
  Result<std::vector<Token>> Run();

 private:
  char At(size_t i) const { return i < t_.size() ? t_[i] : '\0'; }
  Status Fail(int line, const std::string& what) const {
    return Status::Invalid("line " + std::to_string(line), what);
  }
  void SkipBlanks();
  Status ReadWord(std::string& out);
  Status ReadSingle(std::string& out);
  Status ReadDouble(std::string& out);
  Status ReadDollar(std::string& out);
  Status ReadBalanced(std::string& out, char open, char close);
  Status ReadArray(Token& tok);
  void ReadOp(Token& tok);

  void SkipHeredoc();
  static bool StartsCondition(const std::vector<Token>& out);
  Status ReadArithmeticCommand(std::vector<Token>& out);

  std::string_view t_;
  size_t i_ = 0;
  int line_ = 1;
  std::string heredoc_;  // delimiter of a pending << here-document ("" = none)
};

// The body of a here-document (cat <<EOF ... EOF): lines up to the delimiter line, not read.
void Lexer::SkipHeredoc() {
  std::string delim;
  for (char c : heredoc_)
    if (c != '\'' && c != '"' && c != '-') delim += c;
  heredoc_.clear();
  while (i_ < t_.size()) {
    size_t end = t_.find('\n', i_);
    if (end == std::string_view::npos) end = t_.size();
    std::string_view line = t_.substr(i_, end - i_);
    while (!line.empty() && (line.front() == '\t' || line.front() == ' ')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    i_ = end < t_.size() ? end + 1 : end;
    ++line_;
    if (line == delim) return;
  }
}

void Lexer::SkipBlanks() {
  while (i_ < t_.size()) {
    if (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\r') {
      ++i_;
    } else if (t_[i_] == '\\' && At(i_ + 1) == '\n') {  // continuation
      i_ += 2;
      ++line_;
    } else {
      break;
    }
  }
}

Status Lexer::ReadSingle(std::string& out) {
  const int start = line_;
  out += t_[i_++];
  while (i_ < t_.size() && t_[i_] != '\'') {
    if (t_[i_] == '\n') ++line_;
    out += t_[i_++];
  }
  if (i_ >= t_.size()) return Fail(start, "unmatched ' quote");
  out += t_[i_++];
  return Status::Ok();
}

Status Lexer::ReadDouble(std::string& out) {
  const int start = line_;
  out += t_[i_++];
  while (i_ < t_.size() && t_[i_] != '"') {
    if (t_[i_] == '\\' && i_ + 1 < t_.size()) {
      if (t_[i_ + 1] == '\n') {
        i_ += 2, ++line_;
        continue;
      }
      out += t_[i_++];
    } else if (t_[i_] == '$') {
      if (Status st = ReadDollar(out); !st.ok()) return st;
      continue;
    } else if (t_[i_] == '`') {
      if (Status st = ReadBalanced(out, '`', '`'); !st.ok()) return st;
      continue;
    }
    if (t_[i_] == '\n') ++line_;
    out += t_[i_++];
  }
  if (i_ >= t_.size()) return Fail(start, "unmatched \" quote");
  out += t_[i_++];
  return Status::Ok();
}

// From `open` (at i_) to its matching `close`, quotes inside respected (not in backticks).
Status Lexer::ReadBalanced(std::string& out, char open, char close) {
  const int start = line_;
  out += t_[i_++];
  int depth = 1;
  while (i_ < t_.size()) {
    const char c = t_[i_];
    if (open != '`' && (c == '\'' || c == '"')) {
      if (Status st = c == '\'' ? ReadSingle(out) : ReadDouble(out); !st.ok()) return st;
      continue;
    }
    if (c == '\\' && i_ + 1 < t_.size()) {
      out += t_[i_++];
      if (t_[i_] == '\n') ++line_;
      out += t_[i_++];
      continue;
    }
    if (c == '\n') ++line_;
    out += t_[i_++];
    if (open == close) {
      if (c == close) return Status::Ok();
    } else if (c == open) {
      ++depth;
    } else if (c == close && --depth == 0) {
      return Status::Ok();
    }
  }
  return Fail(start, std::string("unmatched ") + open);
}

Status Lexer::ReadDollar(std::string& out) {
  const char n = At(i_ + 1);
  if (n == '(' || n == '{') {
    out += t_[i_++];  // $
    return ReadBalanced(out, n, n == '(' ? ')' : '}');
  }
  out += t_[i_++];
  return Status::Ok();
}

Status Lexer::ReadWord(std::string& out) {
  while (i_ < t_.size()) {
    const char c = t_[i_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || IsOpChar(c)) break;
    Status st;
    if (c == '\'') {
      st = ReadSingle(out);
    } else if (c == '"') {
      st = ReadDouble(out);
    } else if (c == '$') {
      st = ReadDollar(out);
    } else if (c == '`') {
      st = ReadBalanced(out, '`', '`');
    } else if (c == '\\') {
      if (At(i_ + 1) == '\n') {
        i_ += 2, ++line_;
        break;  // a continuation ends the word
      }
      out += t_[i_++];
      if (i_ < t_.size()) out += t_[i_++];
    } else {
      out += t_[i_++];
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

// The words of NAME=( ... ), comments and newlines allowed between them.
Status Lexer::ReadArray(Token& tok) {
  const int start = line_;
  ++i_;  // (
  for (;;) {
    SkipBlanks();
    if (i_ >= t_.size()) return Fail(start, "unmatched ( of the array " + tok.raw);
    const char c = t_[i_];
    if (c == ')') {
      ++i_;
      return Status::Ok();
    }
    if (c == '\n') {
      ++i_, ++line_;
      continue;
    }
    if (c == '#') {
      while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      continue;
    }
    std::string w;
    if (IsOpChar(c)) {
      w += t_[i_++];
    } else if (Status st = ReadWord(w); !st.ok()) {
      return st;
    }
    if (!w.empty()) tok.elems.push_back(std::move(w));
  }
}

void Lexer::ReadOp(Token& tok) {
  tok.kind = TokenKind::kOp;
  const char c = t_[i_], n = At(i_ + 1);
  const bool two = (c == '&' && (n == '&' || n == '>')) || (c == '|' && n == '|') ||
                   (c == ';' && n == ';') || (c == '>' && (n == '>' || n == '&')) ||
                   (c == '<' && n == '<');
  tok.raw = std::string(t_.substr(i_, two ? 2 : 1));
  i_ += two ? 2 : 1;
}

// Whether a command read next is the condition of if / elif / while / until (or follows && / ||
// or ! in one), where "(( expr ))" is read as an arithmetic command.
bool Lexer::StartsCondition(const std::vector<Token>& out) {
  if (out.empty()) return false;
  const Token& p = out.back();
  if (p.kind == TokenKind::kOp) return p.raw == "&&" || p.raw == "||";
  return p.kind == TokenKind::kWord &&
         (p.raw == "if" || p.raw == "elif" || p.raw == "while" || p.raw == "until" || p.raw == "!");
}

// "(( expr ))" (bash(1), "Compound Commands"): status 0 when expr is non-zero, the same as
// test "$(( expr ))" -ne 0, which is what it is read as.
Status Lexer::ReadArithmeticCommand(std::vector<Token>& out) {
  const int line = line_;
  size_t k = i_ + 2;
  for (int depth = 0; k < t_.size(); ++k) {
    if (t_[k] == '\n') ++line_;
    if (t_[k] == '(') ++depth;
    if (t_[k] == ')' && depth-- == 0) break;
  }
  if (k + 1 >= t_.size() || t_[k + 1] != ')')
    return Fail(line, "unmatched (( of an arithmetic command");
  const std::string expr(t_.substr(i_ + 2, k - i_ - 2));
  i_ = k + 2;
  for (const std::string& w :
       {std::string("test"), "\"$((" + expr + "))\"", std::string("-ne"), std::string("0")}) {
    Token tok;
    tok.line = line;
    tok.kind = TokenKind::kWord;
    tok.raw = w;
    out.push_back(std::move(tok));
  }
  return Status::Ok();
}

Result<std::vector<Token>> Lexer::Run() {
  std::vector<Token> out;
  for (;;) {
    SkipBlanks();
    if (i_ >= t_.size()) break;
    Token tok;
    tok.line = line_;
    const char c = t_[i_];
    if (c == '\n') {
      ++i_, ++line_;
      tok.kind = TokenKind::kNewline;
      if (!heredoc_.empty()) SkipHeredoc();
    } else if (c == '#') {
      while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      continue;
    } else if (c == '(' && At(i_ + 1) == '(' && StartsCondition(out)) {
      if (Status st = ReadArithmeticCommand(out); !st.ok()) return st;
      continue;
    } else if (IsOpChar(c)) {
      ReadOp(tok);
      if (tok.raw == "<<" && At(i_) == '<') {  // <<< word: a here-string, one word of input
        ++i_;
        tok.raw = "<<<";
      } else if (tok.raw == "<<") {  // the delimiter word follows
        if (At(i_) == '-') ++i_;
        SkipBlanks();
        out.push_back(tok);
        Token word;
        word.line = line_;
        if (Status st = ReadWord(word.raw); !st.ok()) return st;
        heredoc_ = word.raw.empty() ? "EOF" : word.raw;
        out.push_back(std::move(word));
        continue;
      }
    } else {
      if (Status st = ReadWord(tok.raw); !st.ok()) return st;
      // "2>&1": a file descriptor number in front of a redirection belongs to it.
      const bool fd = !tok.raw.empty() && (At(i_) == '>' || At(i_) == '<') &&
                      tok.raw.find_first_not_of("0123456789") == std::string::npos;
      if (fd) continue;
      if (At(i_) == '(' && IsAssignment(tok.raw + "x", nullptr, nullptr, nullptr) &&
          tok.raw.back() == '=') {
        tok.kind = TokenKind::kArray;
        if (Status st = ReadArray(tok); !st.ok()) return st;
      }
    }
    out.push_back(std::move(tok));
  }
  return out;
}

}  // namespace

Result<std::vector<Token>> Lex(std::string_view text) {
  return Lexer(text).Run();
}

bool IsAssignment(std::string_view raw, std::string* name, bool* append, std::string* value) {
  size_t k = 0;
  if (raw.empty() || !(std::isalpha(static_cast<unsigned char>(raw[0])) || raw[0] == '_'))
    return false;
  while (k < raw.size() && (std::isalnum(static_cast<unsigned char>(raw[k])) || raw[k] == '_')) ++k;
  const bool plus = k + 1 < raw.size() && raw[k] == '+' && raw[k + 1] == '=';
  if (!plus && (k >= raw.size() || raw[k] != '=')) return false;
  if (name) *name = std::string(raw.substr(0, k));
  if (append) *append = plus;
  if (value) *value = std::string(raw.substr(k + (plus ? 2 : 1)));
  return true;
}

}  // namespace trainsim::shell

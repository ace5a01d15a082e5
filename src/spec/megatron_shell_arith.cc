// $(( )) integer arithmetic of launch scripts (bash(1), "ARITHMETIC EVALUATION"): the operators
// scripts use to derive sizes (WORLD_SIZE=$((GPUS_PER_NODE*NNODES))) and switches
// (TP_COMM_OVERLAP=$(( ($TP > 1) ? 1 : 0 ))), with bash's precedence, lowest first: ?:, ||, &&,
// == !=, < > <= >=, + -, * / %, unary + - !. Comparisons and logic give 1 or 0; both sides of
// && and || are evaluated (bash skips the right one when the left decides: the result is the
// same unless that side divides by zero, which is refused here).
#include <cctype>
#include <initializer_list>
#include <string_view>

#include "spec/megatron_shell.h"
#include "trainsim/limits.h"

namespace trainsim::shell {
namespace {

class Arith {
 public:
  Arith(std::string_view e, const Vars& v, int depth) : e_(e), vars_(v), depth_(depth) {}
  Result<long long> Run() {
    auto v = Ternary();
    if (!v.ok()) return v;
    Blank();
    if (i_ != e_.size()) return Bad();
    return v;
  }

 private:
  Status Bad() const { return Status::Invalid("$((" + std::string(e_) + "))", "cannot evaluate"); }
  void Blank() {
    while (i_ < e_.size() && std::isspace(static_cast<unsigned char>(e_[i_]))) ++i_;
  }
  // cond ? a : b (right-associative: a ? b : c ? d : e).
  Result<long long> Ternary() {
    auto c = Or();
    if (!c.ok()) return c;
    Blank();
    if (i_ >= e_.size() || e_[i_] != '?') return c;
    ++i_;
    if (++nest_ > kMaxNest) return Bad();
    auto a = Ternary();
    Blank();
    if (!a.ok() || i_ >= e_.size() || e_[i_] != ':') return Bad();
    ++i_;
    auto b = Ternary();
    --nest_;
    if (!b.ok()) return b;
    return c.value() != 0 ? a.value() : b.value();
  }
  // Left-associative binary levels: ||, &&, equality, relational.
  Result<long long> Or() { return Binary(&Arith::And, {"||"}); }
  Result<long long> And() { return Binary(&Arith::Equality, {"&&"}); }
  Result<long long> Equality() { return Binary(&Arith::Relational, {"==", "!="}); }
  Result<long long> Relational() { return Binary(&Arith::Sum, {"<=", ">=", "<", ">"}); }
  Result<long long> Binary(Result<long long> (Arith::*next)(),
                           std::initializer_list<std::string_view> ops) {
    auto a = (this->*next)();
    if (!a.ok()) return a;
    long long v = a.value();
    for (;;) {
      Blank();
      std::string_view op;
      for (std::string_view o : ops)
        if (e_.substr(i_, o.size()) == o && (o.size() == 2 || !IsDoubled(o[0]))) {
          op = o;
          break;
        }
      if (op.empty()) return v;
      i_ += op.size();
      auto b = (this->*next)();
      if (!b.ok()) return b;
      v = Apply(op, v, b.value());
    }
  }
  // '<' or '>' starting "<<" / ">>" (shifts, not read) or "<=" is not the one-character operator.
  bool IsDoubled(char c) const {
    return i_ + 1 < e_.size() && (e_[i_ + 1] == c || e_[i_ + 1] == '=');
  }
  static long long Apply(std::string_view op, long long a, long long b) {
    if (op == "||") return (a != 0 || b != 0) ? 1 : 0;
    if (op == "&&") return (a != 0 && b != 0) ? 1 : 0;
    if (op == "==") return a == b;
    if (op == "!=") return a != b;
    if (op == "<=") return a <= b;
    if (op == ">=") return a >= b;
    if (op == "<") return a < b;
    return a > b;
  }
  Result<long long> Sum() {
    auto a = Product();
    if (!a.ok()) return a;
    long long v = a.value();
    for (Blank(); i_ < e_.size() && (e_[i_] == '+' || e_[i_] == '-'); Blank()) {
      const char op = e_[i_++];
      auto b = Product();
      if (!b.ok()) return b;
      v = op == '+' ? v + b.value() : v - b.value();
    }
    return v;
  }
  Result<long long> Product() {
    auto a = Unary();
    if (!a.ok()) return a;
    long long v = a.value();
    for (Blank(); i_ < e_.size() && (e_[i_] == '*' || e_[i_] == '/' || e_[i_] == '%'); Blank()) {
      const char op = e_[i_++];
      auto b = Unary();
      if (!b.ok()) return b;
      if (op != '*' && b.value() == 0) return Bad();
      v = op == '*' ? v * b.value() : op == '/' ? v / b.value() : v % b.value();
    }
    return v;
  }
  Result<long long> Unary() {
    Blank();
    if (i_ < e_.size() && (e_[i_] == '-' || e_[i_] == '+' ||
                           (e_[i_] == '!' && (i_ + 1 >= e_.size() || e_[i_ + 1] != '=')))) {
      const char op = e_[i_++];
      if (++nest_ > kMaxNest) return Bad();
      auto v = Unary();
      --nest_;
      if (!v.ok()) return v;
      return op == '-' ? -v.value() : op == '!' ? (v.value() == 0 ? 1 : 0) : v.value();
    }
    return Primary();
  }
  Result<long long> Primary();
  Result<long long> Variable();

  std::string_view e_;
  const Vars& vars_;
  int depth_;  // variables whose text is itself evaluated, nested
  size_t i_ = 0;
  // Parentheses and unary signs open inside each other: the recursive descent stops at
  // kMaxNest rather than overflow the stack (bash has no such limit; no script comes near it).
  static constexpr int kMaxNest = limits::kMaxScriptArithmeticNesting;
  int nest_ = 0;
};

Result<long long> Arith::Variable() {
  const bool dollar = e_[i_] == '$';
  if (dollar) ++i_;
  const bool brace = i_ < e_.size() && e_[i_] == '{';
  if (brace) ++i_;
  const size_t start = i_;
  if (dollar && !brace && i_ < e_.size() &&
      (e_[i_] == '#' || std::isdigit(static_cast<unsigned char>(e_[i_])))) {
    ++i_;  // $# and $1: one character, as bash reads them
  } else if (brace && i_ < e_.size() && e_[i_] == '#' && i_ + 1 < e_.size() && e_[i_ + 1] == '}') {
    ++i_;  // ${#}
  } else {
    while (i_ < e_.size() && (std::isalnum(static_cast<unsigned char>(e_[i_])) || e_[i_] == '_'))
      ++i_;
  }
  const std::string name(e_.substr(start, i_ - start));
  if (brace) {
    if (i_ >= e_.size() || e_[i_] != '}') return Bad();
    ++i_;
  }
  const auto it = vars_.find(name);
  if (it == vars_.end() || it->second.empty() || it->second.front().empty()) return 0LL;
  if (depth_ > 8) return Bad();
  return Arith(it->second.front(), vars_, depth_ + 1).Run();  // bash evaluates a variable's text
}

Result<long long> Arith::Primary() {
  Blank();
  if (i_ >= e_.size()) return Bad();
  if (e_[i_] == '(') {
    ++i_;
    if (++nest_ > kMaxNest) return Bad();
    auto v = Ternary();
    --nest_;
    Blank();
    if (!v.ok() || i_ >= e_.size() || e_[i_] != ')') return Bad();
    ++i_;
    return v;
  }
  if (std::isdigit(static_cast<unsigned char>(e_[i_]))) {
    long long v = 0;
    while (i_ < e_.size() && std::isdigit(static_cast<unsigned char>(e_[i_]))) {
      if (v > 1'000'000'000'000LL) return Bad();
      v = v * 10 + (e_[i_++] - '0');
    }
    return v;
  }
  if (e_[i_] == '$' || std::isalpha(static_cast<unsigned char>(e_[i_])) || e_[i_] == '_')
    return Variable();
  return Bad();
}

}  // namespace

Result<long long> Arithmetic(std::string_view expr, const Vars& vars) {
  return Arith(expr, vars, 0).Run();
}

}  // namespace trainsim::shell

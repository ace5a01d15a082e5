// $(( )) integer arithmetic of launch scripts (bash(1), "ARITHMETIC EVALUATION"): the operators
// scripts use to derive sizes (WORLD_SIZE=$((GPUS_PER_NODE*NNODES))).
#include <cctype>

#include "spec/megatron_shell.h"

namespace trainsim::shell {
namespace {

class Arith {
 public:
  Arith(std::string_view e, const Vars& v, int depth) : e_(e), vars_(v), depth_(depth) {}
  Result<long long> Run() {
    auto v = Sum();
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
    if (i_ < e_.size() && (e_[i_] == '-' || e_[i_] == '+')) {
      const bool neg = e_[i_++] == '-';
      if (++nest_ > kMaxNest) return Bad();
      auto v = Unary();
      --nest_;
      if (!v.ok()) return v;
      return neg ? -v.value() : v.value();
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
  static constexpr int kMaxNest = 256;
  int nest_ = 0;
};

Result<long long> Arith::Variable() {
  if (e_[i_] == '$') ++i_;
  const bool brace = i_ < e_.size() && e_[i_] == '{';
  if (brace) ++i_;
  const size_t start = i_;
  while (i_ < e_.size() && (std::isalnum(static_cast<unsigned char>(e_[i_])) || e_[i_] == '_'))
    ++i_;
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
    auto v = Sum();
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

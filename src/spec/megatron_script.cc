// Reading a Megatron-LM launch script (trainsim/megatron.h, ParseMegatronScript): runs the
// assignments and conditionals of the bash subset launch scripts use and finds the pretrain
// command after its launcher.
#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "spec/field_text.h"
#include "spec/megatron_shell.h"
#include "trainsim/limits.h"
#include "trainsim/megatron.h"

namespace trainsim {
namespace {

using shell::Token;
using shell::TokenKind;

bool IsListOp(const Token& t) {
  return t.kind == TokenKind::kNewline ||
         (t.kind == TokenKind::kOp && (t.raw == ";" || t.raw == "&" || t.raw == "&&" ||
                                       t.raw == "||" || t.raw == "|" || t.raw == ";;"));
}
bool IsRedirect(const Token& t) {
  return t.kind == TokenKind::kOp &&
         (t.raw == ">" || t.raw == ">>" || t.raw == "<" || t.raw == ">&" || t.raw == "&>" ||
          t.raw == "<<" || t.raw == "<<<");
}
bool IsWord(const Token& t, std::string_view w) {
  return t.kind == TokenKind::kWord && t.raw == w;
}
std::string LineOf(int line) {
  return "line " + std::to_string(line);
}

// The launcher's GPU count: --nproc_per_node (torchrun) / --num_gpus (deepspeed) times --nnodes.
int LauncherGpus(const std::vector<std::string>& w) {
  long long per_node = 0, nodes = 1;
  for (size_t i = 0; i < w.size(); ++i) {
    std::string flag = w[i], value;
    const size_t eq = flag.find('=');
    if (flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (i + 1 < w.size()) {
      value = w[i + 1];
    }
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (const size_t colon = value.find(':'); colon != std::string::npos)
      value = value.substr(colon + 1);  // elastic "min:max" nodes
    long long v = 0;
    const bool counts = flag == "--nproc-per-node" || flag == "--num-gpus" ||
                        flag == "--ntasks-per-node" || flag == "--nnodes" ||
                        flag == "--num-nodes" || flag == "--nodes";
    if (value.empty() || value.size() > 6 ||
        value.find_first_not_of("0123456789") != std::string::npos) {
      // A count the script leaves to its environment (`--nnodes $NNODES` with NNODES unset
      // expands to nothing): the GPU count is unknown, not one node.
      if (counts) return 0;
      continue;
    }
    v = std::stoll(value);
    // torchrun / deepspeed; srun's --ntasks-per-node and --nodes.
    if (flag == "--nproc-per-node" || flag == "--num-gpus" || flag == "--ntasks-per-node")
      per_node = v;
    if (flag == "--nnodes" || flag == "--num-nodes" || flag == "--nodes") nodes = std::max(1LL, v);
  }
  return per_node > 0 ? static_cast<int>(per_node * nodes) : 0;
}

bool IsPretrainProgram(const std::string& w) {
  const size_t slash = w.find_last_of('/');
  const std::string base = slash == std::string::npos ? w : w.substr(slash + 1);
  // pretrain_gpt.py, pretrain_bert.py, PAI's pretrain_qwen.py; epfLLM/Megatron-LLM's finetune.py.
  return (base.rfind("pretrain", 0) == 0 || base.rfind("finetune", 0) == 0) && base.size() > 3 &&
         base.compare(base.size() - 3, 3, ".py") == 0;
}

// Utilities that take a file name as data, never run it (POSIX / coreutils).
bool RunsNoProgram(const std::vector<std::string>& fields) {
  if (fields.empty()) return false;
  const size_t slash = fields[0].find_last_of('/');
  const std::string base = slash == std::string::npos ? fields[0] : fields[0].substr(slash + 1);
  static const std::set<std::string> kData = {
      "chmod",    "chown", "cp",  "mv",    "ls",   "cat",       "echo",    "printf",
      "mkdir",    "rm",    "ln",  "touch", "test", "[",         "[[",      "stat",
      "head",     "tail",  "wc",  "sed",   "grep", "realpath",  "dirname", "basename",
      "readlink", "tee",   "git", "wget",  "curl", "sha256sum", "md5sum",  "export"};
  return kData.count(base) > 0;
}

// "bash x.sh ...", "sbatch x.slurm", "source x.sh", "./x.sh": a command that runs another script
// file (whose commands this reader cannot see), named for the error when no pretrain command is
// found; "" otherwise.
std::string ScriptRun(const std::vector<std::string>& fields, int line) {
  if (fields.empty()) return "";
  static const std::set<std::string> kRunners = {"bash", "sh", "zsh", "source", ".", "sbatch"};
  const auto is_script = [](const std::string& w) {
    const size_t dot = w.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : w.substr(dot);
    return ext == ".sh" || ext == ".slurm" || ext == ".sbatch" || ext == ".bash";
  };
  std::string file;
  if (is_script(fields[0])) file = fields[0];
  for (size_t k = 1; file.empty() && kRunners.count(fields[0]) && k < fields.size(); ++k)
    if (fields[k].empty() || fields[k][0] != '-') file = fields[k];
  if (file.empty()) return "";
  return "'" + (file == fields[0] ? file : fields[0] + " " + file) + "' (" + LineOf(line) + ")";
}

class Interpreter {
 public:
  Interpreter(const std::vector<Token>& t, const std::vector<std::string>& args,
              shell::Vars env = {})
      : t_(t), vars_(std::move(env)), functions_(std::make_shared<Functions>()) {
    SetPositional(vars_, args);
  }
  Result<MegatronCommand> Run();

 private:
  bool Active() const {
    return std::all_of(frames_.begin(), frames_.end(), [](const Frame& f) { return f.now; });
  }
  Status Keyword(const std::string& w, size_t& i);
  Status Case(size_t& i);
  void DefineFunction(size_t& i, const std::string& name);
  Status Found(MegatronCommand c, int line);
  Result<MegatronCommand> RunInner(const std::vector<Token>& toks,
                                   const std::vector<std::string>* args, int line);
  static void SetPositional(shell::Vars& vars, const std::vector<std::string>& args) {
    for (auto it = vars.begin(); it != vars.end();)
      it = std::isdigit(static_cast<unsigned char>(it->first[0])) ? vars.erase(it) : std::next(it);
    for (size_t k = 0; k < args.size(); ++k) vars[std::to_string(k + 1)] = {args[k]};
    vars[shell::kPositionalAll] = args;
    vars[shell::kPositionalCount] = {std::to_string(args.size())};
  }
  size_t CaseClauseEnd(size_t k, size_t esac) const;
  Result<bool> Condition(size_t& i, std::string_view until = "then");
  Status Loop(const std::string& w, size_t& i);
  void Shift(const std::vector<std::string>& fields);
  Status Simple(size_t& i);
  Status Assign(const Token& t);
  Status Command(std::vector<std::string> fields, int line);
  void SkipBlock(size_t& i, std::string_view open, std::string_view close);
  Result<std::vector<std::string>> Expand(std::string_view raw, int line);
  Result<std::string> ExpandJoined(std::string_view raw, int line);
  Status Spend(size_t bytes, int line);

  struct Frame {
    bool now = false;    // the branch being read is taken
    bool taken = false;  // some branch was taken
  };
  const std::vector<Token>& t_;
  shell::Vars vars_;
  std::vector<Frame> frames_;
  std::optional<MegatronCommand> found_;
  std::vector<std::vector<std::string>> bare_;  // commands, for a bare argument list
  std::map<size_t, size_t> jumps_;  // the end of a case clause being run -> after its esac
  // Shell functions by name, shared with the scripts a call or an eval runs (bash's are global).
  using Functions = std::map<std::string, std::shared_ptr<const std::vector<Token>>>;
  std::shared_ptr<Functions> functions_;
  static constexpr int kMaxDepth = limits::kMaxScriptEvalNesting;
  int depth_ = 0;  // scripts run by eval / sh -c around this one
  int bare_line_ = 0;
  struct Running {
    size_t start;  // the while / until token
    size_t end;    // the token after its done
  };
  std::vector<Running> loops_;  // while / until loops being run, innermost last
  static constexpr int kMaxLoop = limits::kMaxScriptLoopRounds;
  int loop_runs_ = 0;
  // Tokens that loop rounds and function / eval / sh -c bodies ran, shared like loop_runs_:
  // bounds rounds x body, which kMaxLoop alone leaves proportional to the script's size.
  static constexpr size_t kMaxRunTokens = limits::kMaxScriptRunTokens;
  size_t run_tokens_ = 0;
  Status RunTokens(size_t tokens, int line);
  std::string runs_script_;  // the first other script this one runs ("bash x.sh (line 3)")
  // Bytes all expansions of the script may still produce: each word is bounded by
  // shell::kMaxWordBytes, the whole script (and so every variable) by this budget.
  static constexpr size_t kExpandBudget = limits::kMaxScriptExpansionBytes;
  size_t expand_budget_ = kExpandBudget;
};

Status Interpreter::Spend(size_t bytes, int line) {
  if (bytes > expand_budget_)
    return Status::Invalid(LineOf(line), "the script's expansions pass " +
                                             std::to_string(kExpandBudget >> 20) +
                                             " MiB of text (variables that double themselves?)");
  expand_budget_ -= bytes;
  return Status::Ok();
}

Status Interpreter::RunTokens(size_t tokens, int line) {
  run_tokens_ += tokens;
  if (run_tokens_ <= kMaxRunTokens) return Status::Ok();
  return Status::Invalid(LineOf(line), "loops and function / eval / sh -c bodies run more than " +
                                           std::to_string(kMaxRunTokens) +
                                           " tokens in all (a loop that never ends?)");
}

Result<std::vector<std::string>> Interpreter::Expand(std::string_view raw, int line) {
  auto f = shell::Expand(raw, vars_);
  if (!f.ok()) return f.status().WithContext(LineOf(line));
  size_t bytes = 0;
  for (const std::string& w : f.value()) bytes += w.size() + sizeof(std::string);
  if (Status st = Spend(bytes, line); !st.ok()) return st;
  return f;
}

Result<std::string> Interpreter::ExpandJoined(std::string_view raw, int line) {
  auto s = shell::ExpandJoined(raw, vars_);
  if (!s.ok()) return s.status().WithContext(LineOf(line));
  if (Status st = Spend(s.value().size(), line); !st.ok()) return st;
  return s;
}

Status Interpreter::Assign(const Token& t) {
  std::string name, value;
  bool append = false;
  shell::IsAssignment(t.raw, &name, &append, &value);
  std::vector<std::string> v;
  if (t.kind == TokenKind::kArray) {
    for (const std::string& e : t.elems) {
      auto f = Expand(e, t.line);
      if (!f.ok()) return f.status();
      v.insert(v.end(), f.value().begin(), f.value().end());
    }
  } else {
    auto s = ExpandJoined(value, t.line);
    if (!s.ok()) return s.status();
    v.push_back(s.value());
  }
  std::vector<std::string>& dst = vars_[name];
  if (!append) {
    dst = std::move(v);
  } else if (t.kind == TokenKind::kArray || dst.empty()) {
    dst.insert(dst.end(), v.begin(), v.end());
  } else {
    dst.front() += v.front();
  }
  size_t held = 0;
  for (const std::string& e : dst) held += e.size() + sizeof(std::string);
  if (held > shell::kMaxWordBytes)
    return Status::Invalid(name, "holds more than " + std::to_string(shell::kMaxWordBytes) +
                                     " bytes (a variable that doubles itself?)")
        .WithContext(LineOf(t.line));
  return Status::Ok();
}

// Skips from a keyword that opens a block to its matching close word (loops, case, functions).
void Interpreter::SkipBlock(size_t& i, std::string_view open, std::string_view close) {
  int depth = 0;
  for (; i < t_.size(); ++i) {
    if (IsWord(t_[i], open)) ++depth;
    if (IsWord(t_[i], close) && --depth <= 0) {
      ++i;
      return;
    }
  }
}

// Runs tokens as a script inside this one (eval, sh -c, a function's body; `args` replaces the
// positional parameters for a function call): it starts from this script's variables and shares
// its functions and expansion budget; a function's assignments come back (bash's are global), a
// child shell's do not. Nests at most kMaxDepth deep.
Result<MegatronCommand> Interpreter::RunInner(const std::vector<Token>& toks,
                                              const std::vector<std::string>* args, int line) {
  if (depth_ >= kMaxDepth)
    return Status::Invalid(LineOf(line), "nests eval / sh -c / function calls more than " +
                                             std::to_string(kMaxDepth) + " deep");
  // Each run copies the variables: charged to the expansion budget, so that thousands of calls
  // over thousands of variables end in an error, not minutes of copying.
  size_t copied = 0;
  for (const auto& [name, v] : vars_) {
    copied += name.size() + sizeof(std::string);
    for (const std::string& e : v) copied += e.size() + sizeof(std::string);
  }
  if (Status st = Spend(copied, line); !st.ok()) return st;
  if (Status st = RunTokens(toks.size(), line); !st.ok()) return st;
  Interpreter inner(toks, {});
  inner.vars_ = vars_;
  if (args) SetPositional(inner.vars_, *args);
  inner.functions_ = functions_;
  inner.depth_ = depth_ + 1;
  inner.expand_budget_ = expand_budget_;
  inner.loop_runs_ = loop_runs_;  // one bound on the loops of the script and what it runs
  inner.run_tokens_ = run_tokens_;
  auto r = inner.Run();
  expand_budget_ = inner.expand_budget_;
  loop_runs_ = inner.loop_runs_;
  run_tokens_ = inner.run_tokens_;
  if (!r.ok()) return r.status().WithContext(LineOf(line));
  if (args) {  // a function's assignments are global; its arguments are not
    const std::vector<std::string> outer = vars_[shell::kPositionalAll];
    vars_ = std::move(inner.vars_);
    SetPositional(vars_, outer);
  }
  return r;
}

// name() { ...; } / function name { ...; }: the body is kept (its tokens between the braces) and
// runs when the name is called as a command.
void Interpreter::DefineFunction(size_t& i, const std::string& name) {
  size_t open = i;
  while (open < t_.size() && !IsWord(t_[open], "{")) ++open;
  size_t end = open;
  SkipBlock(end, "{", "}");
  if (Active() && open < t_.size() && end > open + 1)
    (*functions_)[name] = std::make_shared<const std::vector<Token>>(
        t_.begin() + static_cast<long>(open) + 1, t_.begin() + static_cast<long>(end) - 1);
  i = end;
}

Status Interpreter::Command(std::vector<std::string> fields, int line) {
  if (!fields.empty() && fields[0] == "shift") {
    Shift(fields);
    return Status::Ok();
  }
  if (!fields.empty()) {
    if (auto f = functions_->find(fields[0]); f != functions_->end()) {
      const auto body = f->second;  // kept alive should the body redefine the function
      const std::vector<std::string> args(fields.begin() + 1, fields.end());
      auto r = RunInner(*body, &args, line);
      if (!r.ok()) return r.status();
      return r->program.empty() ? Status::Ok() : Found(std::move(r).value(), line);
    }
  }
  // srun ... sh -c "python pretrain_gpt.py ..." and eval $CMD: the command string is a script
  // of its own.
  if (!fields.empty() && fields[0] == "eval") {
    std::string text;
    for (size_t k = 1; k < fields.size(); ++k) text += (k > 1 ? " " : "") + fields[k];
    fields = {"sh", "-c", text};
  }
  // A command that names pretrain_*.py without running it (chmod +x pretrain_gpt.py, cp, echo
  // in published scripts such as Megatron-MoE-ModelZoo's run-train.sh) is not the pretrain command.
  const auto prog = RunsNoProgram(fields)
                        ? fields.end()
                        : std::find_if(fields.begin(), fields.end(), IsPretrainProgram);
  for (size_t k = 0; prog == fields.end() && k + 2 < fields.size(); ++k) {
    if ((fields[k] != "sh" && fields[k] != "bash") || fields[k + 1] != "-c") continue;
    auto toks = shell::Lex(fields[k + 2]);
    if (!toks.ok()) return toks.status().WithContext(LineOf(line));
    // eval eval ... and sh -c "sh -c ..." run the text as a script inside this one.
    auto r = RunInner(toks.value(), nullptr, line);
    if (!r.ok()) return r.status();
    if (r->program.empty()) continue;
    MegatronCommand c = std::move(r).value();
    const int outer = LauncherGpus(std::vector<std::string>(fields.begin(), fields.begin() + k));
    if (outer > 0) c.launcher_gpus = outer;
    return Found(std::move(c), line);
  }
  if (prog == fields.end()) {
    if (runs_script_.empty()) runs_script_ = ScriptRun(fields, line);
    bare_.push_back(std::move(fields));
    if (bare_.size() == 1) bare_line_ = line;
    return Status::Ok();
  }
  MegatronCommand c;
  const size_t slash = prog->find_last_of('/');
  c.program = slash == std::string::npos ? *prog : prog->substr(slash + 1);
  c.launcher_gpus = LauncherGpus(std::vector<std::string>(fields.begin(), prog));
  c.args.assign(prog + 1, fields.end());
  return Found(std::move(c), line);
}

// The pretrain command, found on `line` (directly, or in what an eval, sh -c or function ran):
// a script has one.
Status Interpreter::Found(MegatronCommand c, int line) {
  if (found_)
    return Status::Invalid(LineOf(line), "a second pretrain command (the first is on " +
                                             LineOf(found_->line) + "); give one");
  c.line = line;
  found_ = std::move(c);
  return Status::Ok();
}

// One simple command from t_[i] up to a list operator: assignments, then words.
Status Interpreter::Simple(size_t& i) {
  const int line = t_[i].line;
  std::vector<const Token*> words;
  for (; i < t_.size() && !IsListOp(t_[i]); ++i) {
    if (IsRedirect(t_[i])) {
      if (i + 1 < t_.size() && t_[i + 1].kind == TokenKind::kWord) ++i;  // its target
      continue;
    }
    if (t_[i].kind == TokenKind::kOp) continue;  // ( ) of subshells
    words.push_back(&t_[i]);
  }
  if (!Active()) return Status::Ok();
  size_t k = 0;  // the leading VAR=value words
  while (k < words.size() &&
         (words[k]->kind == TokenKind::kArray || shell::IsAssignment(words[k]->raw, 0, 0, 0)))
    ++k;
  static constexpr std::string_view kDeclare[] = {"export", "declare", "local", "readonly",
                                                  "typeset"};
  if (k == words.size() ||
      std::find(std::begin(kDeclare), std::end(kDeclare), words[k]->raw) != std::end(kDeclare)) {
    for (size_t j = 0; j < words.size(); ++j)
      if (words[j]->kind == TokenKind::kArray || shell::IsAssignment(words[j]->raw, 0, 0, 0))
        if (Status st = Assign(*words[j]); !st.ok()) return st;
    return Status::Ok();
  }
  // "TP=2 cmd $TP": the command's words are expanded before its assignments, which hold for
  // that command only (bash(1), "SIMPLE COMMAND EXPANSION"); an eval / sh -c it runs sees them.
  std::vector<std::string> fields;
  for (size_t j = k; j < words.size(); ++j) {
    auto f = Expand(words[j]->raw, words[j]->line);
    if (!f.ok()) return f.status();
    fields.insert(fields.end(), f.value().begin(), f.value().end());
  }
  std::vector<std::pair<std::string, std::optional<std::vector<std::string>>>> saved;
  for (size_t j = 0; j < k; ++j) {
    std::string name = words[j]->raw.substr(0, words[j]->raw.find('='));
    if (!name.empty() && name.back() == '+') name.pop_back();
    const auto old = vars_.find(name);
    saved.emplace_back(name, old == vars_.end() ? std::nullopt : std::optional(old->second));
    if (Status st = Assign(*words[j]); !st.ok()) return st;
  }
  Status st = Command(std::move(fields), line);
  for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
    if (it->second)
      vars_[it->first] = *it->second;
    else
      vars_.erase(it->first);
  }
  return st;
}

Status Interpreter::Keyword(const std::string& w, size_t& i) {
  const int line = t_[i].line;
  if (w == "if" || w == "elif") {
    ++i;
    // An elif is evaluated when the enclosing branches are taken (not its own if's).
    std::optional<Frame> own;
    if (w == "elif" && !frames_.empty()) {
      own = frames_.back();
      frames_.pop_back();
    }
    auto c = Condition(i);
    if (own) frames_.push_back(*own);
    if (!c.ok()) return c.status();
    if (w == "if") {
      frames_.push_back({c.value(), c.value()});
    } else if (frames_.empty()) {
      return Status::Invalid(LineOf(line), "elif without if");
    } else {
      Frame& f = frames_.back();
      f.now = !f.taken && c.value();
      f.taken = f.taken || f.now;
    }
    return Status::Ok();
  }
  ++i;
  if (w == "else" || w == "fi") {
    if (frames_.empty()) return Status::Invalid(LineOf(line), w + " without if");
    if (w == "fi") {
      frames_.pop_back();
    } else {
      frames_.back().now = !frames_.back().taken;
      frames_.back().taken = true;
    }
  } else if ((w == "while" || w == "until") && Active()) {
    --i;
    return Loop(w, i);
  } else if (w == "for" || w == "while" || w == "until" || w == "select") {
    // for and select loops are not run; one over the script's own arguments, when it has some,
    // would read them (ROCm's `for ARGUMENT in "$@"; do export "$KEY"="$VALUE"`): refused
    // rather than read without them.
    const auto& all = vars_[shell::kPositionalAll];
    bool over_args = i + 1 < t_.size() && !IsWord(t_[i + 1], "in");  // for x; do: "$@"
    for (size_t k = i; k < t_.size() && !IsWord(t_[k], "do") && t_[k].kind != TokenKind::kNewline;
         ++k)
      over_args = over_args || t_[k].raw.find("$@") != std::string::npos ||
                  t_[k].raw.find("$*") != std::string::npos;
    if (w == "for" && Active() && !all.empty() && over_args &&
        !(i < t_.size() && t_[i].raw == "("))  // for (( ... )) is arithmetic
      return Status::Invalid(LineOf(line),
                             "a for loop over the script's arguments is not run, so "
                             "--megatron-script-args would not be read; set what they set "
                             "in the script (or its environment) instead");
    --i;
    SkipBlock(i, "do", "done");
  } else if (w == "case") {
    --i;
    return Case(i);
  } else if (w == "function") {
    if (i < t_.size()) {
      const std::string name = t_[i].raw;
      DefineFunction(i, name);
    }
  }
  return Status::Ok();
}

// while / until COND; do BODY; done, run as bash runs it (the argument loops of launch scripts:
// while [[ $# -gt 0 ]]; do case $1 in ... esac; shift; done), at most kMaxLoop times.
Status Interpreter::Loop(const std::string& w, size_t& i) {
  const size_t start = i;
  const int line = t_[i].line;
  ++i;
  auto c = Condition(i, "do");
  size_t done = start;
  SkipBlock(done, "do", "done");  // done: the token after the matching "done"
  // A condition other than a test (while read line; ...): the loop is not run.
  const bool run = c.ok() && c.value() != (w == "until");
  if (run && ++loop_runs_ > kMaxLoop)  // all loops of the script together, nested ones included
    return Status::Invalid(LineOf(line), "loops run more than " + std::to_string(kMaxLoop) +
                                             " times (does a loop's condition ever change?)");
  if (run)
    if (Status st = RunTokens(done - start, line); !st.ok()) return st;
  if (!loops_.empty() && loops_.back().start == start) {
    if (!run) loops_.pop_back();
  } else if (run) {
    loops_.push_back({start, done});
  }
  if (!run) i = done;
  return Status::Ok();
}

void Interpreter::Shift(const std::vector<std::string>& fields) {
  long long n = 1;
  if (fields.size() > 1 && !detail::ParseIntText(fields[1], 0, 1 << 20, n).ok()) return;
  std::vector<std::string>& all = vars_[shell::kPositionalAll];
  if (static_cast<size_t>(n) > all.size()) return;  // bash: shift fails, nothing moves
  for (size_t k = 1; k <= all.size(); ++k) vars_.erase(std::to_string(k));
  all.erase(all.begin(), all.begin() + n);
  for (size_t k = 0; k < all.size(); ++k) vars_[std::to_string(k + 1)] = {all[k]};
  vars_[shell::kPositionalCount] = {std::to_string(all.size())};
}

// The end of the case clause whose body starts at k: its ";;" (or ";&", ";;&") outside nested
// case blocks, or the esac.
size_t Interpreter::CaseClauseEnd(size_t k, size_t esac) const {
  int depth = 0;
  for (; k < esac; ++k) {
    if (IsWord(t_[k], "case")) ++depth;
    if (IsWord(t_[k], "esac")) --depth;
    if (depth == 0 && t_[k].kind == TokenKind::kOp &&
        (t_[k].raw == ";;" || t_[k].raw == ";&" || t_[k].raw == ";;&"))
      return k;
  }
  return esac;
}

// case WORD in PATTERN|PATTERN) ... ;; ... esac, as bash(1) runs it: the first clause with a
// pattern (a glob, after expansion) that matches the expanded word runs, then the script goes on
// after esac (a jump registered at the clause's end).
Status Interpreter::Case(size_t& i) {
  const int line = t_[i].line;
  size_t end = i;
  SkipBlock(end, "case", "esac");
  const size_t esac = end - 1;
  if (!Active() || !IsWord(t_[esac], "esac")) {
    i = end;
    return IsWord(t_[esac], "esac") ? Status::Ok()
                                    : Status::Invalid(LineOf(line), "case without esac");
  }
  size_t k = i + 1;
  if (k >= esac || t_[k].kind != TokenKind::kWord)
    return Status::Invalid(LineOf(line), "case without a word");
  auto word = ExpandJoined(t_[k].raw, t_[k].line);
  if (!word.ok()) return word.status();
  for (++k; k < esac && t_[k].kind == TokenKind::kNewline; ++k) {
  }
  if (!IsWord(t_[k], "in")) return Status::Invalid(LineOf(line), "case without 'in'");
  for (++k; k < esac;) {
    if (t_[k].kind == TokenKind::kNewline || t_[k].raw == ";") {
      ++k;
      continue;
    }
    if (t_[k].kind == TokenKind::kOp && t_[k].raw == "(") ++k;
    bool match = false;
    for (; k < esac && !(t_[k].kind == TokenKind::kOp && t_[k].raw == ")"); ++k) {
      if (t_[k].kind == TokenKind::kOp && t_[k].raw == "|") continue;
      if (t_[k].kind != TokenKind::kWord)
        return Status::Invalid(LineOf(t_[k].line), "case pattern expected before ')'");
      auto pattern = ExpandJoined(t_[k].raw, t_[k].line);
      if (!pattern.ok()) return pattern.status();
      match = match || fnmatch(pattern.value().c_str(), word.value().c_str(), 0) == 0;
    }
    if (k >= esac) return Status::Invalid(LineOf(line), "case pattern without ')'");
    const size_t clause_end = CaseClauseEnd(++k, esac);
    if (match) {
      i = k;
      jumps_[clause_end] = end;
      return Status::Ok();
    }
    k = clause_end + 1;
  }
  i = end;
  return Status::Ok();
}

Result<MegatronCommand> Interpreter::Run() {
  size_t i = 0;
  while (i < t_.size()) {
    if (auto jump = jumps_.find(i); jump != jumps_.end()) {
      i = jump->second;
      continue;
    }
    const Token& tok = t_[i];
    if (IsListOp(tok) || tok.kind == TokenKind::kOp) {
      ++i;
      continue;
    }
    static constexpr std::string_view kKeywords[] = {
        "if", "elif", "else", "fi", "for", "while", "until", "select", "case", "function"};
    if (tok.kind == TokenKind::kWord &&
        std::find(std::begin(kKeywords), std::end(kKeywords), tok.raw) != std::end(kKeywords)) {
      if (Status st = Keyword(tok.raw, i); !st.ok()) return st;
      continue;
    }
    // name() { ... }: a function definition, run when called.
    if (i + 2 < t_.size() && t_[i + 1].raw == "(" && t_[i + 2].raw == ")") {
      DefineFunction(i, tok.raw);
      continue;
    }
    if (IsWord(tok, "done") && !loops_.empty() && loops_.back().end == i + 1) {
      i = loops_.back().start;  // the loop's condition again
      continue;
    }
    if (IsWord(tok, "then") || IsWord(tok, "do") || IsWord(tok, "done") || IsWord(tok, "{") ||
        IsWord(tok, "}")) {
      ++i;
      continue;
    }
    if (Status st = Simple(i); !st.ok()) return st;
  }
  if (!frames_.empty()) return Status::Invalid("script", "if without fi");
  if (found_) return *found_;
  if (depth_ > 0) return MegatronCommand{};  // an eval / sh -c that runs something else
  // No pretrain_*.py: a bare argument list ("--tensor-model-parallel-size 2 ...").
  // (One command that does not start with a program name: a token such as "8" is reported by
  // the argument reader.)
  const auto is_program = [](const std::string& w) {
    return !w.empty() && (std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '.' ||
                          w[0] == '/' || w[0] == '_');
  };
  if (bare_.size() == 1 && (bare_[0].empty() || !is_program(bare_[0][0]))) {
    MegatronCommand c;
    c.args = bare_[0];
    c.line = bare_line_;
    return c;
  }
  if (bare_.empty()) return MegatronCommand{};
  std::string why =
      "no pretrain_*.py command found (expected e.g. 'torchrun ... "
      "pretrain_gpt.py --tensor-model-parallel-size ...')";
  if (!runs_script_.empty())
    why += "; it runs another script, " + runs_script_ +
           ", which holds the command: give that script (with the variables this one sets)";
  return Status::Invalid("script", why);
}

}  // namespace

namespace detail {
// The condition of if / elif, up to `then` (megatron_script_test.cc tests it through scripts).
Result<bool> EvalCondition(const std::vector<std::string>& words, const std::vector<bool>& is_op,
                           int line);
}  // namespace detail

Result<bool> Interpreter::Condition(size_t& i, std::string_view until) {
  const int line = t_[i - 1].line;
  std::vector<std::string> words;
  std::vector<bool> is_op;
  for (; i < t_.size() && !IsWord(t_[i], until); ++i) {
    const Token& t = t_[i];
    if (t.kind == TokenKind::kNewline || (t.kind == TokenKind::kOp && t.raw == ";")) continue;
    if (IsRedirect(t)) {  // [ -f x ] 2>/dev/null
      if (i + 1 < t_.size() && t_[i + 1].kind == TokenKind::kWord) ++i;
      continue;
    }
    if (t.kind == TokenKind::kOp) {
      words.push_back(t.raw);
      is_op.push_back(true);
      continue;
    }
    auto f = ExpandJoined(t.raw, t.line);
    if (!f.ok()) return f.status();
    words.push_back(f.value());
    is_op.push_back(false);
  }
  if (i >= t_.size())
    return Status::Invalid(LineOf(line), until == "then" ? "if without then" : "while without do");
  ++i;
  if (!Active()) return false;
  return detail::EvalCondition(words, is_op, line);
}

namespace {
// A Slurm batch script's "#SBATCH" header, before its first command: sbatch runs the script
// with the counts it asked for in its environment (sbatch(1), "OUTPUT ENVIRONMENT VARIABLES"):
// --nodes / -N → SLURM_NNODES and SLURM_JOB_NUM_NODES, --gpus-per-node → SLURM_GPUS_PER_NODE,
// --gres=gpu:N → SLURM_GPUS_ON_NODE, --ntasks-per-node → SLURM_NTASKS_PER_NODE, --cpus-per-task
// → SLURM_CPUS_PER_TASK. A range (--nodes=2-4) leaves the count to the scheduler.
void SbatchEnvironment(std::string_view text, shell::Vars& vars) {
  static const std::map<std::string, std::vector<const char*>> kSets = {
      {"--nodes", {"SLURM_NNODES", "SLURM_JOB_NUM_NODES"}},
      {"-N", {"SLURM_NNODES", "SLURM_JOB_NUM_NODES"}},
      {"--gpus-per-node", {"SLURM_GPUS_PER_NODE"}},
      {"--gres", {"SLURM_GPUS_ON_NODE"}},
      {"--ntasks-per-node", {"SLURM_NTASKS_PER_NODE"}},
      {"--cpus-per-task", {"SLURM_CPUS_PER_TASK"}}};
  std::map<std::string, std::string> found;
  size_t at = 0;
  while (at < text.size()) {
    const size_t eol = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, eol - at);
    at = eol + 1;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line.front() == '#') {
      if (line.substr(0, 7) != "#SBATCH") continue;
    } else {
      break;  // sbatch reads the directives before the first command only
    }
    std::vector<std::string> words;
    std::string w;
    for (char c : line.substr(7)) {
      if (c == '#') break;  // a comment after the directive
      if (c == ' ' || c == '\t' || c == '=') {
        if (!w.empty()) words.push_back(w), w.clear();
      } else {
        w += c;
      }
    }
    if (!w.empty()) words.push_back(w);
    for (size_t k = 0; k + 1 < words.size(); ++k) {
      std::string value = words[k + 1];
      if (words[k] == "--gres") {  // gpu:8 or gpu:h100:8
        if (value.rfind("gpu:", 0) != 0) continue;
        value = value.substr(value.rfind(':') + 1);
      } else if (words[k] == "--gpus-per-node") {
        value = value.substr(value.rfind(':') + 1);  // 4 or h100:4
      }
      if (kSets.count(words[k])) found[words[k]] = value;
    }
  }
  for (const auto& [directive, value] : found) {
    if (value.empty() || value.size() > 6 ||
        value.find_first_not_of("0123456789") != std::string::npos)
      continue;
    for (const char* name : kSets.at(directive))
      if (!vars.count(name)) vars[name] = {value};
  }
}
}  // namespace

Result<MegatronCommand> ParseMegatronScript(std::string_view text,
                                            const std::vector<std::string>& args) {
  auto toks = shell::Lex(text);
  if (!toks.ok()) return toks.status();
  shell::Vars env;
  SbatchEnvironment(text, env);
  return Interpreter(toks.value(), args, env).Run();
}

Result<std::vector<std::string>> SplitShellWords(std::string_view text) {
  auto toks = shell::Lex(text);
  if (!toks.ok()) return toks.status();
  std::vector<std::string> out;
  static const shell::Vars kNone;
  for (const shell::Token& t : toks.value()) {
    if (t.kind == shell::TokenKind::kNewline) continue;
    if (t.kind != shell::TokenKind::kWord)
      return Status::Invalid(t.raw, "arguments are words, not shell operators");
    auto f = shell::Expand(t.raw, kNone);
    if (!f.ok()) return f.status();
    out.insert(out.end(), f.value().begin(), f.value().end());
  }
  return out;
}

}  // namespace trainsim

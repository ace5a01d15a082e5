// Megatron-LM command lines in and out, driven by the `megatron` column of the Strategy schema.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "spec/field_text.h"
#include "spec/megatron_flags.h"
#include "spec/strategy_apply.h"
#include "trainsim/megatron.h"
#include "trainsim/schema.h"

namespace trainsim {
namespace {

// One argument of a schema row's `megatron` spec: "--a", "--a:V", "--a=", "--a=:V", "--a=*".
struct ArgSpec {
  std::string_view name;
  bool takes_value = false;
  bool list = false;
  bool fixed = false;  // sets `value` whatever the command line's value is
  std::string_view value;
  const StrategyField* field = nullptr;
};

ArgSpec ParseSpec(std::string_view token, const StrategyField* f) {
  ArgSpec a;
  a.field = f;
  const size_t cut = token.find_first_of("=:");
  a.name = token.substr(0, cut);
  std::string_view rest = cut == std::string_view::npos ? "" : token.substr(cut);
  if (!rest.empty() && rest[0] == '=') {
    a.takes_value = true;
    rest.remove_prefix(1);
    if (rest == "*") a.list = true, rest = "";
  }
  if (!rest.empty() && rest[0] == ':') a.fixed = true, a.value = rest.substr(1);
  return a;
}

std::vector<ArgSpec> SpecsOf(const StrategyField& f) {
  std::vector<ArgSpec> out;
  std::string_view m = f.megatron;
  while (!m.empty()) {
    const size_t sp = m.find(' ');
    const std::string_view token = m.substr(0, sp);
    if (!token.empty()) out.push_back(ParseSpec(token, &f));
    m = sp == std::string_view::npos ? "" : m.substr(sp + 1);
  }
  return out;
}

const std::map<std::string_view, ArgSpec>& ArgTable() {
  static const std::map<std::string_view, ArgSpec> table = [] {
    std::map<std::string_view, ArgSpec> t;
    for (const StrategyField& f : StrategySchema())
      for (const ArgSpec& a : SpecsOf(f)) t.emplace(a.name, a);
    return t;
  }();
  return table;
}

// "--tensor_model_parallel_size": the spelling of forks whose argparse names use underscores
// (epfLLM/Megatron-LLM, early Megatron-LM); read as the dashed name when only that is known.
std::string DashedName(std::string f) {
  if (f.find('_') == std::string::npos || ArgTable().count(f) || megatron::FindFlag(f)) return f;
  std::string dashed = f;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  return ArgTable().count(dashed) || megatron::FindFlag(dashed) ? dashed : f;
}

// "--a=b" splits into "--a", "b".
std::vector<std::string> SplitEquals(const std::vector<std::string>& args) {
  std::vector<std::string> tok;
  for (const std::string& t : args) {
    const size_t eq = t.find('=');
    if (t.rfind("--", 0) == 0 && eq != std::string::npos) {
      tok.push_back(DashedName(t.substr(0, eq)));
      tok.push_back(t.substr(eq + 1));
    } else {
      tok.push_back(t.rfind("--", 0) == 0 ? DashedName(t) : t);
    }
  }
  return tok;
}

bool IsFlag(const std::string& t) {
  return t.rfind("--", 0) == 0;
}

// Older spellings Megatron-LM reads as today's arguments (megatron/training/arguments.py
// validate_args, NVIDIA/Megatron-LM @ 000c4ac2): --encoder-seq-length and --encoder-num-layers
// become --seq-length and --num-layers when those are not given (both given: refused); the
// 2020 arguments --model-parallel-size (tensor parallelism) and --batch-size (per-GPU batch),
// refused since, are read with the meaning they had. A T5 script (--decoder-num-layers) keeps
// its encoder arguments.
Status RenameOldSpellings(std::vector<std::string>& tok, MegatronReading& out) {
  struct Old {
    const char* old_name;
    const char* name;
    const char* key;
    const char* why;
  };
  static constexpr Old kOld[] = {
      {"--encoder-seq-length", "--seq-length", "seq_len",
       "--encoder-seq-length: Megatron-LM's sequence length when --seq-length is not given"},
      {"--encoder-num-layers", "--num-layers", "", ""},
      {"--model-parallel-size", "--tensor-model-parallel-size", "tp_size",
       "--model-parallel-size: the 2020 Megatron-LM argument for the tensor-parallel size "
       "(refused by later versions)"},
      {"--batch-size", "--micro-batch-size", "micro_batch_size",
       "--batch-size: the 2020 Megatron-LM argument for the per-GPU batch (refused by later "
       "versions)"}};
  auto find = [&](std::string_view f) { return std::find(tok.begin(), tok.end(), f); };
  for (const Old& o : kOld) {
    const auto it = find(o.old_name);
    if (it == tok.end()) continue;
    if (o.name == std::string_view("--num-layers") && find("--decoder-num-layers") != tok.end())
      continue;
    if (find(o.name) != tok.end())
      return Status::Invalid(o.old_name, std::string("cannot be given with ") + o.name +
                                             " (Megatron-LM refuses both)");
    for (std::string& t : tok)
      if (t == o.old_name) t = o.name;
    if (*o.key && std::next(it) != tok.end() && !IsFlag(*std::next(it)))
      out.assumed.push_back({o.key, *std::next(it), o.why});
  }
  return Status::Ok();
}

Status ApplyArg(Strategy& s, const ArgSpec& a, std::string_view value) {
  const StrategyField& f = *a.field;
  if (a.fixed) return f.set(s, a.value);
  if (f.from_megatron) return f.from_megatron(s, a.name, value);
  return f.set(s, a.takes_value ? value : std::string_view("true"));
}

// Keys whose Megatron-LM default differs from trainsim's and that ApplyMegatronArgs does not
// reset: without their argument, trainsim's default is an assumption.
bool KeepsTrainsimDefault(std::string_view key) {
  return key == "dtype" || key == "seq_len";
}

// Every key with a Megatron-LM argument: given by the command line, or by Megatron's default.
void RecordMegatronKeys(const std::map<std::string, std::string>& seen, StrategyKeys& given) {
  for (const StrategyField& f : StrategySchema()) {
    if (f.megatron.empty()) continue;
    bool appeared = false;
    for (const ArgSpec& a : SpecsOf(f)) appeared = appeared || seen.count(std::string(a.name)) > 0;
    if (appeared || !KeepsTrainsimDefault(f.key)) given.emplace(f.key);
  }
}

// Arguments that are read by the reader itself (they need the model or every other argument).
bool ReadByReader(const std::string& f, MegatronReading& out) {
  if (f == "--num-layers-per-virtual-pipeline-stage") {
    out.layers_per_virtual_stage = -1;  // parsed by the caller
    return true;
  }
  return false;
}

// One argument that is not a schema row: the model shape, the reader's own, harmless ones, and
// the ones listed as ignored (not modelled, or unknown).
Status ReadOther(const std::string& f, const std::string& value, MegatronReading& out) {
  if (ReadByReader(f, out)) {
    if (f == "--num-layers-per-virtual-pipeline-stage")
      return detail::ParseIntText(value, 1, out.layers_per_virtual_stage);
    return Status::Ok();
  }
  if (const megatron::FlagInfo* info = megatron::FindFlag(f)) {
    if (info->kind == megatron::FlagKind::kShape) out.shape[f] = value.empty() ? "true" : value;
    if (info->kind == megatron::FlagKind::kUnmodelled)
      out.ignored.push_back({f, value, std::string(info->why)});
    return Status::Ok();
  }
  const std::string near = megatron::NearestFlag(f);
  out.ignored.push_back({f, value,
                         near.empty()
                             ? "unknown Megatron-LM argument (may change performance)"
                             : "unknown Megatron-LM argument; did you mean " + near + "?"});
  return Status::Ok();
}

// An argument that shapes the job (a strategy row or a model-shape argument) given twice with
// different values: argparse keeps the last one; say so (harmless ones such as --save-interval
// are repeated by real scripts).
void NoteRepeated(const std::map<std::string, std::string>& seen, const std::string& f,
                  const std::string& value, MegatronReading& out) {
  const auto it = seen.find(f);
  if (it != seen.end() && it->second != value)
    out.ignored.push_back(
        {f, it->second, "given again: argparse keeps the last value (" + value + ")"});
}

}  // namespace

namespace detail {
Status ResolveMegatronArgs(const std::map<std::string, std::string>& seen, const Strategy& before,
                           Strategy& s, MegatronReading& out);
}  // namespace detail

Status ReadMegatronArgs(const std::vector<std::string>& args, Strategy& s, StrategyKeys* given,
                        MegatronReading& out) {
  std::vector<std::string> tok = SplitEquals(args);
  if (Status st = RenameOldSpellings(tok, out); !st.ok()) return st;
  const Strategy before = s;
  // Megatron-LM's own defaults for what the command line does not say.
  s.sp = false;
  s.zero = 0;
  s.overlap_grad_reduce = false;
  s.overlap_param_gather = false;
  s.moe_grouped_gemm = false;  // SequentialMLP without --moe-grouped-gemm
  s.moe_permute_fusion = false;
  std::map<std::string, std::string> seen;
  for (size_t i = 0; i < tok.size(); ++i) {
    const std::string& f = tok[i];
    if (!IsFlag(f)) return Status::Invalid("megatron args: unexpected token '" + f + "'");
    const auto it = ArgTable().find(f);
    if (it == ArgTable().end()) {
      std::string value;  // every value up to the next flag, joined with ','
      while (i + 1 < tok.size() && !IsFlag(tok[i + 1]))
        value += (value.empty() ? "" : ",") + tok[++i];
      if (Status st = ReadOther(f, value, out); !st.ok())
        return Status::Invalid(f + ": " + st.message());
      const megatron::FlagInfo* info = megatron::FindFlag(f);
      if (info && info->kind == megatron::FlagKind::kShape) NoteRepeated(seen, f, value, out);
      seen[f] = value;
      continue;
    }
    const ArgSpec& a = it->second;
    std::string value;
    if (a.takes_value) {
      if (i + 1 >= tok.size() || IsFlag(tok[i + 1])) return Status::Invalid(f + ": needs a value");
      value = tok[++i];
      while (a.list && i + 1 < tok.size() && !IsFlag(tok[i + 1])) value += "," + tok[++i];
    }
    if (Status st = ApplyArg(s, a, value); !st.ok())
      return Status::Invalid(f + ": " + st.message());
    NoteRepeated(seen, f, value, out);
    seen[f] = value;
  }
  if (!seen.count("--num-experts")) {  // a dense model: the MoE switches keep trainsim's values
    s.moe_grouped_gemm = before.moe_grouped_gemm;
    s.moe_permute_fusion = before.moe_permute_fusion;
  }
  if (Status st = detail::ResolveMegatronArgs(seen, before, s, out); !st.ok()) return st;
  out.gave_gbs = seen.count("--global-batch-size") > 0;
  if (given) RecordMegatronKeys(seen, *given);
  if (given)  // what the reader decided is in out.assumed, not a default of the schema
    for (const Assumption& a : out.assumed) given->emplace(a.field);
  return Status::Ok();
}

Status ApplyMegatronArgs(std::string_view args, Strategy& s, StrategyKeys* given) {
  auto cmd = ParseMegatronScript(args);
  if (!cmd.ok()) return cmd.status().WithContext("megatron args");
  MegatronReading unused;
  return ReadMegatronArgs(cmd.value().args, s, given, unused);
}

Result<Strategy> ParseMegatronArgs(std::string_view args, Strategy base) {
  if (Status st = ApplyMegatronArgs(args, base); !st.ok()) return st;
  return NormaliseStrategy(base);
}

std::string FormatMegatronArgs(const Strategy& strategy) {
  const Strategy s = NormaliseStrategy(strategy);
  std::string out;
  for (const StrategyField& f : StrategySchema()) {
    if (f.to_megatron) {
      f.to_megatron(s, out);
      continue;
    }
    const std::vector<ArgSpec> specs = SpecsOf(f);
    if (specs.empty()) continue;
    const ArgSpec& a = specs.front();
    const std::string v = f.get(s);
    const bool emit = a.fixed ? v == a.value : !a.takes_value ? v == "true" : !v.empty();
    if (!emit) continue;
    out += ' ';
    out += a.name;
    if (a.takes_value && !a.fixed) {
      out += ' ';
      out += v;
    }
  }
  return out.empty() ? out : out.substr(1);
}

}  // namespace trainsim

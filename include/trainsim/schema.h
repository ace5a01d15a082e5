// One schema per input struct: a table with one row per field that drives the strategy JSON
// reader and writer, the CLI flags, Megatron-LM arguments in and out, and the docs
// (docs/INPUTS.md is generated from it: `trainsim schema strategy --markdown`).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/hardware.h"
#include "trainsim/report.h"
#include "trainsim/status.h"
#include "trainsim/strategy.h"

namespace trainsim {

// How a field's value is written: in JSON (integer, boolean, number, string) and as text.
enum class FieldKind { kInt, kBool, kNumber, kText };
std::string_view FieldKindName(FieldKind k);  // "int", "bool", "number", "string"

// One Strategy field. Every value has a canonical text form ("4", "true", "0.25", "full",
// "core_attn,mlp") that `set` parses and `get` prints; JSON values, CLI flag values and
// Megatron-LM argument values are converted to it.
struct StrategyField {
  std::string_view key;  // canonical JSON key (strategy files, the report's "strategy" echo)
  FieldKind kind;
  std::string_view flag;  // CLI option, e.g. "--tp"; a kBool field also gets "--no-<name>"
  // Megatron-LM arguments read, space-separated: "--a" a switch (sets "true"), "--a:V" a switch
  // that sets V, "--a=" an argument with a value, "--a=:V" one whose value is ignored (sets V),
  // "--a=*" a list of values up to the next "--" (joined with ','). "" = Megatron has none.
  std::string_view megatron = {};
  std::string_view rule;     // accepted values, e.g. ">= 1" or "none | selective | full"
  std::string_view example;  // a legal value other than the default (docs, tests)
  std::string_view doc;      // one line
  Status (*set)(Strategy& s, std::string_view text);  // the message states the rule only
  std::string (*get)(const Strategy& s);              // "" = null (not derivable / all layers)
  // Megatron-LM hooks, for arguments that do not map one to one. `from_megatron` reads the
  // arguments of `megatron` without a fixed value (":V"); nullptr: `set` with the value (or
  // "true" for a switch). `to_megatron` appends " --a v" for a normalised strategy; nullptr:
  // the first argument of `megatron`, with get()'s value (a switch when "true").
  Status (*from_megatron)(Strategy& s, std::string_view arg, std::string_view value) = nullptr;
  void (*to_megatron)(const Strategy& s, std::string& out) = nullptr;
  // Why the default is what people run, for the report's list of assumptions when no source
  // gives the field (AssumedStrategyDefaults); "" = not listed (a size of 1, an off switch for
  // a feature, a derived value: the absence of a choice, not an assumption).
  std::string_view assumed = {};
  // Whether the field changes the step of this normalised strategy (sp only with tp > 1, ...);
  // nullptr = always. A field that does not matter is not listed as assumed.
  bool (*matters)(const Strategy& s) = nullptr;
};

// Keys a strategy file accepts besides the canonical ones: SimuMax spellings and keys that are
// accepted and ignored.
struct StrategyAlias {
  std::string_view key;
  FieldKind kind;
  std::string_view meaning;  // one line, naming the canonical key it sets
  bool wins;  // applied after the canonical keys (it overrides them) rather than before
  Status (*set)(Strategy& s, std::string_view text);  // nullptr: accepted and ignored
  std::string_view sets = {};  // the canonical key it gives (StrategyKeys); "" = none
};

// Every Strategy setting, in application order (a field that implies a default for another
// comes first, e.g. dtype fp16 before use_fp32_accum_grad).
std::span<const StrategyField> StrategySchema();
std::span<const StrategyAlias> StrategyAliases();
const StrategyField* FindStrategyField(std::string_view key);  // by canonical key

// Applies (canonical key -> text) settings in schema order, with the batch rule of
// ApplyStrategyJson. Errors name the key, or the field's CLI flag with `name_flags`.
Status ApplyStrategySettings(Strategy& s, const std::map<std::string, std::string>& settings,
                             bool name_flags);

// The defaults a strategy holds for the fields none of its sources gave (`given`), as the
// report's assumptions: one per schema row with an `assumed` text that matters for the
// normalised strategy `s`, in schema order, with the value s holds. global_batch_size counts as
// given when micro_batch_num is.
std::vector<Assumption> AssumedStrategyDefaults(const Strategy& s, const StrategyKeys& given);

// The normalised strategy with every canonical key (null where a value cannot be derived), plus
// the derived "dp". ParseStrategyJson(StrategyToJson(s).dump()) gives NormaliseStrategy(s).
nlohmann::json StrategyToJson(const Strategy& s);

// One Efficiency field of a hardware preset's "efficiency" block.
enum class EfficiencyRule {
  kFraction,         // (0, 1]
  kFractionOrUnset,  // (0, 1], or [-1, 0) = unset
  kPositive,         // > 0
  kPositiveOrUnset,  // > 0, or [-1, 0) = unset
  kNonNegative,      // >= 0
};
struct EfficiencyField {
  std::string_view key;
  double Efficiency::*field;
  EfficiencyRule rule;
  double fit_lo, fit_hi;  // `trainsim calibrate` bounds; fit_lo > fit_hi: not fitted
  std::string_view doc;
};
std::span<const EfficiencyField> EfficiencySchema();
std::string_view EfficiencyRuleText(EfficiencyRule r);
// The efficiency block in schema order, with fitted_date when set.
nlohmann::ordered_json EfficiencyToJson(const Efficiency& e);

// The generated docs tables (docs/INPUTS.md holds them between "<!-- schema:NAME -->" and
// "<!-- /schema:NAME -->" markers); `name` is "strategy", "strategy-aliases" or "efficiency".
Result<std::string> SchemaMarkdown(std::string_view name);
// The schema as JSON rows (key, kind, flag, megatron, rule, doc, ...) for tools.
Result<nlohmann::json> SchemaJson(std::string_view name);

}  // namespace trainsim

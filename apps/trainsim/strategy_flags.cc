#include "strategy_flags.h"

#include <stdexcept>

namespace trainsim::cli {
namespace {

// "doc (rule; strategy key K)"; a switch does not repeat "true, false".
std::string Help(const StrategyField& f) {
  std::string_view rule = f.rule;
  if (f.kind == FieldKind::kBool && rule.rfind("true, false", 0) == 0) {
    rule.remove_prefix(std::string_view("true, false").size());
    if (rule.rfind("; ", 0) == 0) rule.remove_prefix(2);
  }
  std::string help(f.doc);
  help += " (";
  if (!rule.empty()) {
    help += rule;
    help += "; ";
  }
  help += "strategy key ";
  help += f.key;
  help += ')';
  return help;
}

const char* TypeName(FieldKind k) {
  switch (k) {
    case FieldKind::kInt:
      return "INT";
    case FieldKind::kNumber:
      return "FLOAT";
    default:
      return "TEXT";
  }
}

const StrategyField& Field(std::string_view key) {
  const StrategyField* f = FindStrategyField(key);
  if (!f || f->flag.empty()) throw std::logic_error("no strategy flag for " + std::string(key));
  return *f;
}

}  // namespace

// A strategy flag given twice (or with its --no- form) is an error naming it, not "the last
// one wins" (issue 11). Thrown inside CLI11's parse, reported like any parse error.
static void SetOnce(StrategyFlagValues& values, const std::string& key, const std::string& value,
                    const std::string& flag) {
  if (!values.emplace(key, value).second)
    throw CLI::ValidationError(flag, "given twice (or with its --no- form); give it once");
}

void AddStrategyFlags(CLI::App* c, StrategyFlagValues& values, const std::string& group) {
  for (const StrategyField& f : StrategySchema()) {
    if (f.flag.empty()) continue;
    const std::string key(f.key), flag(f.flag);
    if (f.kind == FieldKind::kBool) {
      c->add_flag_callback(
           flag, [&values, key, flag] { SetOnce(values, key, "true", flag); }, Help(f))
          ->trigger_on_parse()
          ->group(group);
      c->add_flag_callback(
           "--no-" + flag.substr(2),
           [&values, key, flag] { SetOnce(values, key, "false", "--no-" + flag.substr(2)); },
           "sets " + key + " false")
          ->trigger_on_parse()
          ->group(group);
    } else {
      c->add_option_function<std::string>(
           flag, [&values, key, flag](const std::string& v) { SetOnce(values, key, v, flag); },
           Help(f))
          ->trigger_on_parse()
          ->type_name(TypeName(f.kind))
          ->group(group);
    }
  }
}

CLI::Option* AddSchemaOption(CLI::App* c, std::string_view key, int& out) {
  const StrategyField& f = Field(key);
  return c->add_option(std::string(f.flag), out, Help(f));
}

CLI::Option* AddSchemaOption(CLI::App* c, std::string_view key, std::string& out) {
  const StrategyField& f = Field(key);
  return c->add_option(std::string(f.flag), out, Help(f));
}

}  // namespace trainsim::cli

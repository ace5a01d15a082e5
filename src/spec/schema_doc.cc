// The docs tables (Markdown) and a JSON listing of the schemas (trainsim/schema.h).
#include <initializer_list>
#include <string>

#include "spec/field_text.h"
#include "trainsim/schema.h"

namespace trainsim {
namespace {

std::string Code(std::string_view s) {
  std::string out = "`";
  out += s;
  out += '`';
  return out;
}

// Joins table cells into a Markdown row.
std::string Row(std::initializer_list<std::string> cells) {
  std::string out = "|";
  for (const std::string& c : cells) {
    out += ' ';
    out += c;
    out += " |";
  }
  out += '\n';
  return out;
}

// "--a=:V" -> "`--a X` (V)"; "--a:V" -> "`--a` (V)"; "--a=*" -> "`--a X...`".
std::string MegatronCell(std::string_view spec) {
  std::string out;
  while (!spec.empty()) {
    const size_t sp = spec.find(' ');
    std::string_view t = spec.substr(0, sp);
    spec = sp == std::string_view::npos ? "" : spec.substr(sp + 1);
    const size_t cut = t.find_first_of("=:");
    std::string cell(t.substr(0, cut));
    std::string_view rest = cut == std::string_view::npos ? "" : t.substr(cut);
    if (!rest.empty() && rest[0] == '=') {
      rest.remove_prefix(1);
      cell += rest == "*" ? " X..." : " X";
      if (rest == "*") rest = "";
    }
    if (!out.empty()) out += ", ";
    out += Code(cell);
    if (!rest.empty() && rest[0] == ':') {
      out += " (";
      out += rest.substr(1);
      out += ')';
    }
  }
  return out.empty() ? "–" : out;
}

std::string FlagCell(const StrategyField& f) {
  if (f.flag.empty()) return "–";
  std::string out = Code(f.flag);
  if (f.kind == FieldKind::kBool) {
    std::string no = "--no-";
    no += f.flag.substr(2);
    out += ", ";
    out += Code(no);
  }
  return out;
}

std::string DefaultCell(const StrategyField& f) {
  const std::string v = f.get(Strategy{});
  return v.empty() ? "null" : v;
}

std::string StrategyTable() {
  std::string out =
      "| key | flag | Megatron-LM | type | values | default | meaning |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const StrategyField& f : StrategySchema())
    out +=
        Row({Code(f.key), FlagCell(f), MegatronCell(f.megatron), std::string(FieldKindName(f.kind)),
             std::string(f.rule), DefaultCell(f), std::string(f.doc)});
  return out;
}

std::string AliasTable() {
  std::string out =
      "| key | type | effect | applied |\n"
      "|---|---|---|---|\n";
  for (const StrategyAlias& a : StrategyAliases())
    out += Row({Code(a.key), std::string(FieldKindName(a.kind)), std::string(a.meaning),
                a.wins ? "after the keys above" : "before"});
  return out;
}

std::string Bounds(const EfficiencyField& f) {
  if (f.fit_lo > f.fit_hi) return "not fitted";
  std::string out = detail::NumberText(f.fit_lo);
  out += "–";
  out += detail::NumberText(f.fit_hi);
  return out;
}

std::string EfficiencyTable() {
  const Efficiency d;
  std::string out =
      "| key | meaning | default | rule | calibrate bounds |\n"
      "|---|---|---|---|---|\n";
  for (const EfficiencyField& f : EfficiencySchema())
    out += Row({Code(f.key), std::string(f.doc), detail::NumberText(d.*f.field),
                std::string(EfficiencyRuleText(f.rule)), Bounds(f)});
  return out;
}

}  // namespace

Result<std::string> SchemaMarkdown(std::string_view name) {
  if (name == "strategy") return StrategyTable();
  if (name == "strategy-aliases") return AliasTable();
  if (name == "efficiency") return EfficiencyTable();
  return Status::Invalid("schema: unknown table '" + std::string(name) +
                         "' (strategy, strategy-aliases, efficiency)");
}

Result<nlohmann::json> SchemaJson(std::string_view name) {
  nlohmann::json rows = nlohmann::json::array();
  if (name == "strategy") {
    for (const StrategyField& f : StrategySchema())
      rows.push_back({{"key", f.key},
                      {"type", FieldKindName(f.kind)},
                      {"flag", f.flag},
                      {"megatron", f.megatron},
                      {"rule", f.rule},
                      {"default", DefaultCell(f)},
                      {"example", f.example},
                      {"doc", f.doc},
                      {"assumed", f.assumed}});
  } else if (name == "strategy-aliases") {
    for (const StrategyAlias& a : StrategyAliases())
      rows.push_back({{"key", a.key},
                      {"type", FieldKindName(a.kind)},
                      {"effect", a.meaning},
                      {"after_canonical", a.wins}});
  } else if (name == "efficiency") {
    const Efficiency d;
    for (const EfficiencyField& f : EfficiencySchema())
      rows.push_back({{"key", f.key},
                      {"doc", f.doc},
                      {"default", d.*f.field},
                      {"rule", EfficiencyRuleText(f.rule)},
                      {"calibrate", Bounds(f)}});
  } else {
    return SchemaMarkdown(name).status();
  }
  return rows;
}

}  // namespace trainsim

// The strategy JSON reader: SimuMax strategy files (their field names, unchanged) and every key
// of the Strategy schema (trainsim/schema.h).
#include <limits>
#include <string>

#include "spec/field_text.h"
#include "spec/json_fields.h"
#include "spec/simumax.h"
#include "spec/strategy_apply.h"
#include "trainsim/schema.h"

namespace trainsim {
namespace {

using detail::FieldReader;

// Reads `key` as its kind's canonical text and applies it; a failure names the key.
void ApplyJsonKey(FieldReader& r, std::string_view key_sv, FieldKind kind,
                  Status (*set)(Strategy&, std::string_view), Strategy& s) {
  const std::string key(key_sv);
  if (!r.Has(key.c_str()) || !set) {
    r.Ignore(key.c_str());
    return;
  }
  std::string text;
  switch (kind) {
    case FieldKind::kInt: {
      int64_t v = 0;
      r.Int64(key.c_str(), v, std::numeric_limits<long long>::min());
      text = std::to_string(v);
      break;
    }
    case FieldKind::kBool: {
      bool b = false;
      r.Bool(key.c_str(), b);
      text = detail::BoolText(b);
      break;
    }
    case FieldKind::kNumber: {
      double d = 0;
      r.Double(key.c_str(), d, -std::numeric_limits<double>::max());
      text = detail::NumberText(d);
      break;
    }
    case FieldKind::kText:
      r.String(key.c_str(), text);
      break;
  }
  if (!r.status().ok()) return;
  if (Status st = set(s, text); !st.ok()) r.Fail(key, st.message());
}

void ApplyAliases(FieldReader& r, Strategy& s, bool wins) {
  for (const StrategyAlias& a : StrategyAliases())
    if (a.wins == wins) ApplyJsonKey(r, a.key, a.kind, a.set, s);
}

// "dp" is derived; when given it must agree.
void CheckDp(FieldReader& r, const Strategy& s) {
  if (!r.Has("dp")) return;
  int dp = 0;
  r.Int("dp", dp);
  const long long par = 1LL * s.tp * s.pp * s.cp;
  if (r.status().ok() && (par < 1 || s.world_size % par != 0 || s.world_size / par != dp))
    r.Fail("dp", "must equal world_size / (tp_size * pp_size * cp_size) (" +
                     std::to_string(s.world_size) + " / " + std::to_string(par) + "), got " +
                     std::to_string(dp));
}

// The canonical keys the object gives, directly or through an alias.
void RecordKeys(const FieldReader& r, StrategyKeys& given) {
  for (const StrategyField& f : StrategySchema())
    if (r.Has(std::string(f.key).c_str())) given.emplace(f.key);
  for (const StrategyAlias& a : StrategyAliases())
    if (!a.sets.empty() && r.Has(std::string(a.key).c_str())) given.emplace(a.sets);
}

}  // namespace

Status ApplyStrategyJson(std::string_view text, std::string_view origin_sv, Strategy& s,
                         StrategyKeys* given) {
  const std::string origin(origin_sv);
  auto parsed = detail::ParseJsonText(text, origin);
  if (!parsed.ok()) return parsed.status();
  FieldReader r(parsed.value(), origin);
  if (!r.status().ok()) return r.status();
  Strategy out = s;
  ApplyAliases(r, out, false);
  detail::ApplySimuMaxRecompute(r, parsed.value(), out);
  for (const StrategyField& f : StrategySchema()) ApplyJsonKey(r, f.key, f.kind, f.set, out);
  ApplyAliases(r, out, true);
  CheckDp(r, out);
  if (Status st = r.Finish(true); !st.ok()) return st;
  ApplyBatchSource(out, r.Has("global_batch_size"), r.Has("micro_batch_num"));
  s = out;
  if (given) RecordKeys(r, *given);
  return Status::Ok();
}

Result<Strategy> ParseStrategyJson(std::string_view text, std::string_view origin) {
  Strategy s;
  if (Status st = ApplyStrategyJson(text, origin, s); !st.ok()) return st;
  return NormaliseStrategy(s);
}

}  // namespace trainsim

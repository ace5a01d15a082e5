// SimuMax strategy files: the recompute keys with SimuMax's meaning.
//
// Source: MooreThreads/SimuMax simumax/core/config.py, StrategyConfig (fields and defaults:
// enable_recompute = True, recompute_granularity = None, recompute_layer_num = 0,
// megatron_recompute = False) and its is_recompute / parse_attention_recompute /
// parse_mlp_recompute: a layer is recomputed only when recompute_granularity is set and the
// layer index is below recompute_layer_num, so `"enable_recompute": true` alone (the shipped
// configs/strategy/*_mbs1.json files) recomputes nothing.
#include <string>

#include "spec/simumax.h"
#include "trainsim/formats.h"
#include "trainsim/schema.h"
#include "trainsim/strategy.h"

namespace trainsim::detail {
namespace {

using nlohmann::json;

struct SimuMaxRecompute {
  bool enable = true;  // StrategyConfig.enable_recompute default
  std::string gran;    // recompute_granularity; "" = None
  int layers = 0;      // recompute_layer_num default
  bool attn = false, mlp = false, mla_rms = false, mlp_rms = false, variance = false;
  bool megatron = false;
};

// parse_attention_recompute / parse_mlp_recompute of the legacy selective switches, in
// trainsim's Megatron-LM module names: attn_recompute recomputes the q/kv up-projections, rope
// and core attention; mla_rms_recompute the input norm and the down-projections; mlp_recompute
// the (grouped) MLP linears; mlp_rms_recompute the pre-MLP norm, router and shared expert.
int LegacyModules(const SimuMaxRecompute& c) {
  int mods = 0;
  if (c.attn) mods |= kRecomputeCoreAttn | kRecomputeMlaUpProj;
  if (c.mla_rms) mods |= kRecomputeLayerNorm;
  if (c.mlp) mods |= kRecomputeMlp | kRecomputeMoe;
  if (c.mlp_rms) mods |= kRecomputeLayerNorm | kRecomputeSharedExperts;
  return mods;
}

// megatron_recompute_modules: Megatron-LM --recompute-modules names (trainsim's own names).
void ReadMegatronModules(FieldReader& r, const json& j, const SimuMaxRecompute& c, Strategy& s) {
  const char* key = "megatron_recompute_modules";
  std::string list;
  if (j.contains(key) && !j[key].is_null()) {
    if (!j[key].is_array()) return r.Fail(key, "must be a list of module names");
    for (const json& m : j[key]) {
      if (!m.is_string()) return r.Fail(key, "must be a list of module names");
      if (!list.empty()) list += ',';
      list += m.get<std::string>();
    }
  }
  if (c.attn || c.mlp || c.mla_rms || c.mlp_rms || c.variance)
    return r.Fail("megatron_recompute",
                  "is exclusive with attn_recompute, mlp_recompute, mla_rms_recompute, "
                  "mlp_rms_recompute and recompute_variance (SimuMax's rule)");
  if (list.empty()) return r.Fail(key, "must name at least one module with megatron_recompute");
  auto mask = ParseRecomputeModules(list);
  if (!mask.ok()) return r.Fail(key, mask.status().message());
  s.recompute = Recompute::kSelective;
  s.recompute_modules = mask.value();
}

void ApplyGranularity(FieldReader& r, const json& j, const SimuMaxRecompute& c, Strategy& s) {
  s.recompute = Recompute::kNone;
  s.recompute_layers = -1;
  // "full" and "selective" are trainsim's spellings (also its `recompute` key): every layer
  // unless recompute_layer_num says otherwise, and core_attn when no switch picks modules.
  const bool trainsim = c.gran == "full" || c.gran == "selective";
  static const char* kKnown[] = {"full_block",          "attn_only", "mlp_only", "sdp_only",
                                 "selective_recompute", "full",      "selective"};
  bool known = c.gran.empty();
  for (const char* k : kKnown) known = known || c.gran == k;
  if (!known)  // SimuMax's sanity_check rejects it even when nothing is recomputed
    return r.Fail("recompute_granularity",
                  "must be full_block, attn_only, mlp_only, sdp_only or selective_recompute "
                  "(or full, selective), got '" +
                      c.gran + "'");
  if (!c.enable || c.gran.empty() || (c.layers == 0 && !trainsim)) return;  // SimuMax: none
  if (c.gran == "full_block" || c.gran == "full") {
    s.recompute = Recompute::kFull;
    // SimuMax counts layers per pipeline stage as Megatron does; the schema key re-reads it.
    s.recompute_layers = trainsim ? -1 : c.layers;
    return;
  }
  // The partial granularities recompute every layer's part in trainsim (SimuMax: the first
  // recompute_layer_num layers of the stage).
  int mods = 0;
  if (c.gran == "attn_only") {
    mods = kRecomputeCoreAttn | kRecomputeMlaUpProj | kRecomputeLayerNorm;
  } else if (c.gran == "sdp_only") {
    mods = kRecomputeCoreAttn;
  } else if (c.gran == "mlp_only") {
    mods = kRecomputeMlp | kRecomputeMoe | kRecomputeSharedExperts;
  } else {  // selective_recompute, selective
    if (c.megatron) return ReadMegatronModules(r, j, c, s);
    mods = LegacyModules(c);
    if (mods == 0 && trainsim) mods = kRecomputeCoreAttn;
  }
  if (mods == 0) return;  // selective_recompute without a switch: nothing (is_recompute false)
  s.recompute = Recompute::kSelective;
  s.recompute_modules = mods;
}

}  // namespace

void ApplySimuMaxRecompute(FieldReader& r, const json& j, Strategy& s) {
  SimuMaxRecompute c;
  std::string policy;
  r.Bool("enable_recompute", c.enable);
  r.String("recompute_granularity", c.gran);
  r.Int("recompute_layer_num", c.layers, 0);
  r.Bool("attn_recompute", c.attn);
  r.Bool("mlp_recompute", c.mlp);
  r.Bool("mla_rms_recompute", c.mla_rms);
  r.Bool("mlp_rms_recompute", c.mlp_rms);
  r.Bool("recompute_variance", c.variance);
  r.Bool("megatron_recompute", c.megatron);
  r.String("recompute", policy);
  r.Ignore("megatron_recompute_modules");
  if (!r.status().ok()) return;
  const bool simumax = r.Has("enable_recompute") || r.Has("recompute_granularity");
  if (c.megatron && c.gran != "selective_recompute")
    return r.Fail("megatron_recompute", "needs recompute_granularity selective_recompute");
  if (policy == "selective" || policy == "full") {  // trainsim's key; the switches pick modules
    c.enable = true;
    c.gran = policy;
  } else if (!simumax || !policy.empty()) {
    return;  // trainsim's `recompute` is read with the schema
  }
  ApplyGranularity(r, j, c, s);
}

}  // namespace trainsim::detail

namespace trainsim {

std::vector<Assumption> IgnoredStrategyJsonKeys(std::string_view text) {
  std::vector<Assumption> out;
  auto parsed = detail::ParseJsonText(text, "");
  if (!parsed.ok() || !parsed.value().is_object()) return out;
  const nlohmann::json& j = parsed.value();
  for (const StrategyAlias& a : StrategyAliases()) {
    const std::string key(a.key);
    if (a.set || !a.meaning.starts_with("ignored") || !j.contains(key)) continue;
    // SimuMax's "auto" network tiers, a switch left off, a zero, and pp_comm_async,
    // enable_straggler_model, reshard_after_forward at their default true say nothing.
    const nlohmann::json& v = j[key];
    const bool default_true =
        key == "pp_comm_async" || key == "enable_straggler_model" || key == "reshard_after_forward";
    if ((v.is_string() && v.get<std::string>() == "auto") ||
        (v.is_boolean() && v.get<bool>() == default_true) || (v.is_number() && v == 0) ||
        v.is_null())
      continue;
    out.push_back({key, j[key].dump(), std::string(a.meaning)});
  }
  return out;
}

}  // namespace trainsim

// Names of the strategy enums, in one place: the strategy file, the flags, the report and the
// docs all use these.
#include <array>
#include <string>
#include <utility>

#include "trainsim/strategy.h"

namespace trainsim {
namespace {

template <typename E, size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& names, E e) {
  for (const auto& [v, name] : names)
    if (v == e) return name;
  return "?";
}

template <typename E, size_t N>
std::string Choices(const std::array<std::pair<E, std::string_view>, N>& names) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    out += i == 0 ? "" : i + 1 == N ? " or " : ", ";
    out += names[i].second;
  }
  return out;
}

constexpr std::array<std::pair<Recompute, std::string_view>, 3> kRecompute{{
    {Recompute::kNone, "none"},
    {Recompute::kSelective, "selective"},
    {Recompute::kFull, "full"},
}};

constexpr std::array<std::pair<PipelineSchedule, std::string_view>, 5> kSchedule{{
    {PipelineSchedule::k1F1B, "1f1b"},
    {PipelineSchedule::kInterleaved, "interleaved_1f1b"},
    {PipelineSchedule::kGPipe, "gpipe"},
    {PipelineSchedule::kZeroBubbleH1, "zb_h1"},
    {PipelineSchedule::kDualPipe, "dualpipe"},
}};

constexpr std::array<std::pair<RankOrder, std::string_view>, 4> kOrder{{
    {RankOrder::kTpCpDpPp, "tp-cp-dp-pp"},
    {RankOrder::kTpDpCpPp, "tp-dp-cp-pp"},
    {RankOrder::kTpCpPpDp, "tp-cp-pp-dp"},
    {RankOrder::kTpPpCpDp, "tp-pp-cp-dp"},
}};

constexpr std::array<std::pair<AttentionImpl, std::string_view>, 3> kAttention{{
    {AttentionImpl::kFused, "fused"},
    {AttentionImpl::kFa2, "fa2"},
    {AttentionImpl::kFa1, "fa1"},
}};

constexpr std::array<std::pair<int, std::string_view>, 8> kModules{{
    {kRecomputeCoreAttn, "core_attn"},
    {kRecomputeLayerNorm, "layernorm"},
    {kRecomputeMlaUpProj, "mla_up_proj"},
    {kRecomputeMlp, "mlp"},
    {kRecomputeMoeAct, "moe_act"},
    {kRecomputeMoe, "moe"},
    {kRecomputeSharedExperts, "shared_experts"},
    {kRecomputeOpSac, "op_sac"},
}};

constexpr std::array<std::pair<int, std::string_view>, 7> kOffload{{
    {kOffloadAttnNorm, "attn_norm"},
    {kOffloadQkvLinear, "qkv_linear"},
    {kOffloadCoreAttn, "core_attn"},
    {kOffloadAttnProj, "attn_proj"},
    {kOffloadMlpNorm, "mlp_norm"},
    {kOffloadExpertFc1, "expert_fc1"},
    {kOffloadMoeAct, "moe_act"},
}};

}  // namespace

std::string_view RecomputeName(Recompute r) {
  return NameOf(kRecompute, r);
}

Result<Recompute> ParseRecompute(std::string_view s) {
  for (const auto& [v, name] : kRecompute)
    if (s == name) return v;
  return Status::Invalid("recompute: must be " + Choices(kRecompute) + ", got '" + std::string(s) +
                         "'");
}

std::string_view ScheduleName(PipelineSchedule s) {
  return NameOf(kSchedule, s);
}

Result<PipelineSchedule> ParseSchedule(std::string_view s) {
  for (const auto& [v, name] : kSchedule)
    if (s == name) return v;
  return Status::Invalid("schedule: must be " + Choices(kSchedule) + ", got '" + std::string(s) +
                         "'");
}

std::string_view AttentionImplName(AttentionImpl a) {
  return NameOf(kAttention, a);
}

Result<AttentionImpl> ParseAttentionImpl(std::string_view s) {
  for (const auto& [v, name] : kAttention)
    if (s == name) return v;
  return Status::Invalid("attention_kernel: must be " + Choices(kAttention) + ", got '" +
                         std::string(s) + "'");
}

std::string_view RankOrderName(RankOrder o) {
  return NameOf(kOrder, o);
}

Result<RankOrder> ParseRankOrder(std::string_view s) {
  for (const auto& [v, name] : kOrder)
    if (s == name) return v;
  if (s == "tp-cp-ep-dp-pp") return RankOrder::kTpCpDpPp;  // Megatron-Core's spelling
  return Status::Invalid("order: unknown rank order '" + std::string(s) +
                         "' (tp-cp-dp-pp, tp-dp-cp-pp, tp-cp-pp-dp, tp-pp-cp-dp)");
}

// A comma-separated list of module names into their mask; `field` and `choices` word the errors.
template <size_t N>
Result<int> ParseModuleMask(std::string_view list,
                            const std::array<std::pair<int, std::string_view>, N>& names,
                            const std::string& field, const std::string& choices) {
  int mask = 0;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string_view::npos) comma = list.size();
    const std::string_view item = list.substr(pos, comma - pos);
    pos = comma + 1;
    if (item.empty() && pos > list.size()) break;  // a trailing comma, or the empty list
    bool found = false;
    for (const auto& [bit, name] : names)
      if (item == name) mask |= bit, found = true;
    if (!found)
      return Status::Invalid(field + ": unknown module '" + std::string(item) + "' (" + choices +
                             ")");
  }
  if (mask == 0) return Status::Invalid(field + ": give at least one module");
  return mask;
}

Result<int> ParseRecomputeModules(std::string_view list) {
  auto mask =
      ParseModuleMask(list, kModules, "recompute_modules",
                      "core_attn, layernorm, mla_up_proj, mlp, moe_act, moe, shared_experts");
  if (!mask.ok()) return mask;
  if ((*mask & kRecomputeOpSac) && *mask != kRecomputeOpSac)
    return Status::Invalid(
        "recompute_modules: op_sac (torchtitan's per-op policy) excludes the Megatron-LM modules");
  return mask;
}

std::string RecomputeModulesName(int mask) {
  std::string out;
  for (const auto& [bit, name] : kModules) {
    if (!(mask & bit)) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

Result<int> ParseOffloadModules(std::string_view list) {
  return ParseModuleMask(list, kOffload, "offload_modules", OffloadModulesName(kOffloadAll));
}

std::string OffloadModulesName(int mask) {
  std::string out;
  for (const auto& [bit, name] : kOffload) {
    if (!(mask & bit)) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

}  // namespace trainsim

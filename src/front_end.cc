#include "trainsim/front_end.h"

#include <initializer_list>
#include <string>
#include <vector>

#include "trainsim/batch_default.h"
#include "trainsim/finetune.h"

namespace trainsim {

const StrategyField* FindStrategyFieldByName(std::string_view name) {
  if (const StrategyField* f = FindStrategyField(name)) return f;
  for (const StrategyField& f : StrategySchema()) {
    std::string_view flag = f.flag;
    if (flag.size() < 3 || flag.substr(0, 2) != "--") continue;
    flag.remove_prefix(2);
    if (flag.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < flag.size() && same; ++i)
      same = flag[i] == name[i] || (flag[i] == '-' && name[i] == '_');
    if (same) return &f;
  }
  return nullptr;
}

Result<Strategy> FinishStrategy(Strategy s, const std::map<std::string, std::string>& settings,
                                StrategyKeys& given) {
  if (Status st = ApplyStrategySettings(s, settings, /*name_flags=*/true); !st.ok()) return st;
  for (const auto& [key, value] : settings) given.insert(key);
  // A layer count acts only under full recompute (NormaliseStrategy drops it otherwise): refused
  // rather than dropped without a word.
  if (settings.count("recompute_layer_num") && s.recompute != Recompute::kFull)
    return Status::Invalid("--recompute-layers", "acts only with --recompute full (recompute is " +
                                                     std::string(RecomputeName(s.recompute)) + ")");
  ApplyDefaultBatch(s);  // 8 micro-batches per DP rank when neither gbs nor the count is set
  return NormaliseStrategy(s);
}

std::vector<Assumption> ApplyModelDefaults(const ModelSpec& model, Strategy& s,
                                           const StrategyKeys& given) {
  std::vector<Assumption> out;
  // Expert TP: Megatron-LM defaults --expert-tensor-parallel-size to the TP size, but its MoE
  // performance recipes (Megatron-Bridge, Megatron-MoE-ModelZoo) set it to 1, and with TP > 1
  // the Megatron default often cannot place ep x etp inside a pipeline stage at all.
  if (model.is_moe() && !given.count("etp_size") && s.tp > 1 && s.etp != 1) {
    s.etp = 1;
    out.push_back({"etp_size", "1",
                   "expert TP 1, as the MoE performance recipes run it (Megatron-Bridge, "
                   "Megatron-MoE-ModelZoo: --expert-tensor-parallel-size 1; Megatron-LM's own "
                   "default is the TP size)"});
  }
  if (model.is_moe()) {  // MoE expert and router rows (strategy_schema.cc): what the recipes run
    const auto assume = [&](const char* key, std::string why) {
      if (!given.count(key)) out.push_back({key, FindStrategyField(key)->get(s), std::move(why)});
    };
    assume("moe_grouped_gemm",
           "grouped expert GEMMs, as the MoE performance recipes run them (Megatron-Bridge, "
           "Megatron-MoE-ModelZoo: --moe-grouped-gemm; Megatron-LM's own default is off)");
    assume("moe_permute_fusion",
           "fused permute/unpermute, as the MoE performance recipes run them "
           "(--moe-permute-fusion; Megatron-LM's own default is off)");
    assume("moe_router_dtype", "the router in the parameter dtype, Megatron-LM's default");
    assume("moe_capacity_factor", "none: dropless routing, Megatron-LM's default");
    const bool low = s.dtype == DType::kFp8 || s.dtype == DType::kMxfp8 || s.dtype == DType::kFp4;
    if (low && !given.count("moe_router_padding")) {
      s.moe_router_padding = true;
      assume("moe_router_padding",
             "the router pads each expert's rows for the FP8 GEMMs, as the Megatron-Bridge FP8 "
             "MoE recipes set it (moe_router_padding_for_fp8; Megatron-LM's default is off)");
    }
  }
  return out;
}

namespace {

// Settings given with a value other than the default that nothing in this run reads: MoE
// switches on a dense model, RL settings outside an RL stage, adapter settings of a method
// without them. Listed as ignored (issue 11: --moe-router-dtype fp64 on llama3-8b, --group-size
// with sft, --lora-rank with full were taken without a word); a report's strategy fed back
// carries the defaults and adds nothing.
void ListInertSettings(const ModelSpec& model, const Strategy& s, const StrategyKeys& given,
                       std::vector<IgnoredInput>& ignored) {
  static const Strategy kDefaults;
  const auto inert = [&](std::initializer_list<const char*> keys, const std::string& why) {
    for (const char* key : keys) {
      const StrategyField* f = FindStrategyField(key);
      if (!f || !given.count(key) || f->get(s) == f->get(kDefaults)) continue;
      // A framework profile's value (ApplyFrameworkProfile marks it) is the stack's, not the
      // user's: listed as assumed, not as ignored.
      if (given.count("profile:" + std::string(key))) continue;
      ignored.push_back({key, f->get(s), why});
    }
  };
  if (!model.is_moe())
    inert({"moe_grouped_gemm", "moe_permute_fusion", "moe_router_dtype", "moe_capacity_factor",
           "moe_pad_to_capacity", "moe_router_padding", "moe_dedup_dispatch"},
          model.name + " is dense: no MoE layer to apply it to");
  const std::string stage(TrainStageName(s.stage));
  if (!IsRlStage(s.stage))
    inert({"group_size", "prompt_len", "response_len", "max_response_len", "rl_minibatch",
           "rollout", "rollout_gpus", "rollout_tp", "rollout_pp", "async_rollout",
           "rollout_max_age", "rollout_mem_fraction", "rollout_eager", "kl_reference",
           "rollout_logprobs", "reward_model"},
          "an RL setting; stage " + stage + " generates nothing");
  const std::string method(FtMethodName(s.method));
  if (!UsesLoraRank(s.method)) inert({"lora_rank"}, "method " + method + " has no adapter rank");
  if (!HasLoraDropout(s.method))
    inert({"lora_dropout"}, "method " + method + " has no LoRA dropout");
  if (!IsPeftMethod(s.method))
    inert({"lora_targets", "lora_alpha", "train_embeddings"},
          "method " + method + " trains no adapters");
  if (s.method != FtMethod::kPrefixTuning && s.method != FtMethod::kPromptTuning &&
      s.method != FtMethod::kPTuning)
    inert({"virtual_tokens"}, "method " + method + " has no virtual tokens");
  if (s.method != FtMethod::kFreeze)
    inert({"freeze_layers"}, "method " + method + " freezes no layers");
}

}  // namespace

Result<StepReport> SimulateWithAssumptions(const ModelSpec& model, const HardwareSpec& hw,
                                           Strategy& strategy, const StrategyKeys& given,
                                           const SimOptions& options) {
  const std::vector<Assumption> model_defaults = ApplyModelDefaults(model, strategy, given);
  auto rep = Simulate(model, hw, strategy, options);
  if (!rep.ok()) return rep;
  ListInertSettings(model, strategy, given, rep.value().ignored);
  std::vector<Assumption> assumed = AssumedStrategyDefaults(strategy, given);
  assumed.insert(assumed.end(), model_defaults.begin(), model_defaults.end());
  rep.value().assumed.insert(rep.value().assumed.begin(), assumed.begin(), assumed.end());
  return rep;
}

}  // namespace trainsim

// Strategy file keys besides the schema's canonical ones: SimuMax spellings that set a canonical
// field, and SimuMax keys that are accepted and ignored (trainsim/schema.h).
#include "spec/field_text.h"
#include "trainsim/schema.h"

namespace trainsim {
namespace {

Status Nothing(Strategy&, std::string_view) {
  return Status::Ok();
}

template <auto M>
Status SetBool(Strategy& s, std::string_view t) {
  return detail::ParseBoolText(t, s.*M);
}

template <auto M>
Status SetLayers(Strategy& s, std::string_view t) {
  return detail::ParseIntText(t, 1, s.*M);
}

constexpr StrategyAlias kAliases[] = {
    {"cross_entropy_loss_fusion", FieldKind::kBool, "fused_cross_entropy", false,
     SetBool<&Strategy::fused_cross_entropy>, "fused_cross_entropy"},
    {"account_for_embedding_in_pipeline_split", FieldKind::kBool, "uneven_pipeline", false,
     SetBool<&Strategy::uneven_pipeline>, "uneven_pipeline"},
    {"num_layers_in_first_pipeline_stage", FieldKind::kInt, "first_pipeline_num_layers", false,
     SetLayers<&Strategy::first_stage_layers>, "first_pipeline_num_layers"},
    {"num_layers_in_last_pipeline_stage", FieldKind::kInt, "last_pipeline_num_layers", false,
     SetLayers<&Strategy::last_stage_layers>, "last_pipeline_num_layers"},
    {"moe_dispatcher_policy", FieldKind::kText,
     "deepep or flex: moe_dedup_dispatch true; other values are ignored", false,
     [](Strategy& s, std::string_view t) {
       if (t == "deepep" || t == "flex") s.moe_dedup_dispatch = true;
       return Status::Ok();
     },
     "moe_dedup_dispatch"},
    {"enable_recompute", FieldKind::kBool, "SimuMax recompute (below)", false, nullptr,
     "recompute"},
    {"recompute_granularity", FieldKind::kText, "SimuMax recompute (below)", false, nullptr,
     "recompute"},
    {"attn_recompute", FieldKind::kBool, "SimuMax recompute (below)", false, nullptr},
    {"mlp_recompute", FieldKind::kBool, "SimuMax recompute (below)", false, nullptr},
    {"mla_rms_recompute", FieldKind::kBool, "SimuMax recompute (below)", false, nullptr},
    {"mlp_rms_recompute", FieldKind::kBool, "SimuMax recompute (below)", false, nullptr},
    {"dp", FieldKind::kInt, "derived (world_size / (tp_size·pp_size·cp_size)); checked", false,
     nullptr},
    {"fp8", FieldKind::kBool, "true: dtype fp8", true,
     [](Strategy& s, std::string_view t) {
       bool on = false;
       Status st = detail::ParseBoolText(t, on);
       if (on) s.dtype = DType::kFp8;
       return st;
     },
     "dtype"},
    {"fp8_recipe", FieldKind::kText, "mxfp8: dtype mxfp8 (even without fp8); others ignored", true,
     [](Strategy& s, std::string_view t) {
       if (t == "mxfp8") s.dtype = DType::kMxfp8;
       return Status::Ok();
     },
     "dtype"},
    {"use_math_sdp", FieldKind::kBool, "true: use_flash_sdp false", true,
     [](Strategy& s, std::string_view t) {
       bool on = false;
       Status st = detail::ParseBoolText(t, on);
       if (on) s.flash_attention = false;
       return st;
     },
     "use_flash_sdp"},
    {"enable_dropout", FieldKind::kBool, "ignored (dropout comes from the model)", false, Nothing},
    {"account_for_loss_in_pipeline_split", FieldKind::kBool,
     "ignored (the embedding key sets uneven_pipeline)", false, nullptr},
    {"grad_reduce_in_bf16", FieldKind::kBool, "ignored", false, nullptr},
    {"use_fused_norm", FieldKind::kBool, "ignored", false, nullptr},
    {"use_fused_swiglu", FieldKind::kBool, "ignored", false, nullptr},
    {"use_fused_rope", FieldKind::kBool, "ignored", false, nullptr},
    {"no_sync", FieldKind::kBool, "ignored", false, nullptr},
    {"mem_factor", FieldKind::kNumber, "ignored", false, nullptr},
    {"enable_cuda_graph", FieldKind::kBool, "ignored", false, nullptr},
    {"attention_sparse_ratio", FieldKind::kNumber, "ignored", false, nullptr},
    {"recompute_variance", FieldKind::kBool, "ignored", false, nullptr},
    {"skip_ckpt_micro_batch_num", FieldKind::kInt, "ignored", false, nullptr},
};

}  // namespace

std::span<const StrategyAlias> StrategyAliases() {
  return kAliases;
}

}  // namespace trainsim

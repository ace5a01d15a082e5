// Strategy file keys besides the schema's canonical ones: SimuMax spellings that set a canonical
// field, and SimuMax keys that are accepted and ignored (trainsim/schema.h).
#include <algorithm>
#include <string>

#include "spec/cuda_graphs.h"
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

// A SimuMax switch trainsim cannot represent: false is accepted, true refused with `why`.
template <size_t N>
struct Why {
  char text[N];
  constexpr Why(const char (&s)[N]) {  // NOLINT(google-explicit-constructor)
    for (size_t i = 0; i < N; ++i) text[i] = s[i];
  }
};
template <Why W>
Status RefuseTrue(Strategy&, std::string_view t) {
  bool on = false;
  if (Status st = detail::ParseBoolText(t, on); !st.ok()) return st;
  if (on) return Status::Invalid(std::string(W.text) + " (give false)");
  return Status::Ok();
}

template <auto M>
Status SetLayers(Strategy& s, std::string_view t) {
  return detail::ParseIntText(t, 1, s.*M);
}

// SimuMax's *_net keys pick the network tier of a group's collectives by hand; trainsim places
// each group on the tier its ranks span (the rank order and the scale-up domain).
constexpr std::string_view kNetIgnored =
    "ignored (SimuMax's hand-picked network tier; trainsim places groups by rank order)";

Status SetSchedule(Strategy& s, std::string_view t) {
  if (t == "zb_h2" || t == "zb_v")
    return Status::Invalid("SimuMax schedule '" + std::string(t) +
                           "' is not represented (1f1b, interleaved_1f1b, gpipe, zb_h1)");
  auto r = ParseSchedule(t);
  if (!r.ok())
    return Status::Invalid("must be 1f1b, interleaved_1f1b, gpipe or zb_h1, got '" +
                           std::string(t) + "'");
  s.schedule = r.value();
  return Status::Ok();
}

// SimuMax's placement string ("tp-cp-ep-dp-pp", innermost first) without its ep tokens, which
// SimuMax drops too (StrategyConfig._validate_order_of_paralielism).
Status SetSimuMaxOrder(Strategy& s, std::string_view t) {
  std::string order;
  size_t start = 0;
  while (start <= t.size()) {
    const size_t end = std::min(t.find('-', start), t.size());
    const std::string_view token = t.substr(start, end - start);
    if (token != "ep") {
      if (!order.empty()) order += '-';
      order += token;
    }
    start = end + 1;
  }
  auto r = ParseRankOrder(order);
  if (!r.ok())
    return Status::Invalid(
        "must be one of tp-cp-dp-pp, tp-dp-cp-pp, tp-cp-pp-dp, tp-pp-cp-dp "
        "(ep tokens aside), got '" +
        std::string(t) + "'");
  s.order = r.value();
  return Status::Ok();
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
    {"megatron_recompute", FieldKind::kBool, "SimuMax recompute (below)", false, nullptr,
     "recompute"},
    {"megatron_recompute_modules", FieldKind::kText,
     "SimuMax recompute (below): a list of Megatron-LM module names", false, nullptr,
     "recompute_modules"},
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
    // SimuMax (simumax/core/perf_llm.py, _compute_dp_time and _analysis_mem_impl) halves the
    // gradient bytes and the DP reduce-scatter with it, as Megatron-LM's --grad-reduce-in-bf16.
    {"grad_reduce_in_bf16", FieldKind::kBool,
     "true: use_fp32_accum_grad false (bf16 gradient buffers and reduce)", true,
     [](Strategy& s, std::string_view t) {
       bool on = false;
       Status st = detail::ParseBoolText(t, on);
       if (on) s.main_grad_fp32 = false;
       return st;
     },
     "use_fp32_accum_grad"},
    {"use_fused_norm", FieldKind::kBool, "accepted, no effect", false, nullptr},
    {"use_fused_swiglu", FieldKind::kBool, "accepted, no effect", false, nullptr},
    {"use_fused_rope", FieldKind::kBool, "accepted, no effect", false, nullptr},
    {"no_sync", FieldKind::kBool, "accepted, no effect", false, nullptr},
    {"mem_factor", FieldKind::kNumber, "accepted, no effect", false, nullptr},
    // SimuMax mirrors Megatron-LM's --enable-cuda-graph (whole-layer capture), costed as the
    // Megatron-LM flags are (spec/cuda_graphs.h).
    {"enable_cuda_graph", FieldKind::kBool, "true: host_issue_us_per_kernel 0 (CUDA graphs)", true,
     [](Strategy& s, std::string_view t) {
       bool on = false;
       Status st = detail::ParseBoolText(t, on);
       if (on) detail::ApplyCudaGraphs(s, "enable_cuda_graph", true);
       return st;
     },
     "host_issue_us_per_kernel"},
    {"attention_sparse_ratio", FieldKind::kNumber, "ignored", false, nullptr},
    {"recompute_variance", FieldKind::kBool, "SimuMax recompute (below)", false, nullptr},
    // SimuMax's StrategyConfig declares it, but perf_llm.py never reads it (analysis_mem passes
    // no value to _analysis_mem_impl, which then recomputes every micro-batch; the compute-time
    // lines that would read it are commented out): it has no effect there either.
    {"skip_ckpt_micro_batch_num", FieldKind::kInt,
     "accepted, no effect (SimuMax never reads it: recompute applies to every micro-batch)", false,
     nullptr},
    // SimuMax's later StrategyConfig keys (simumax/core/config.py).
    {"pp_schedule", FieldKind::kText,
     "pipeline_schedule (1f1b, interleaved_1f1b, gpipe, zb_h1; zb_h2 and zb_v are refused)", false,
     SetSchedule, "pipeline_schedule"},
    {"order_of_paralielism", FieldKind::kText, "order, without SimuMax's ep tokens", false,
     SetSimuMaxOrder, "order"},
    {"pp_comm_async", FieldKind::kBool,
     "ignored (false: Megatron-LM --no-overlap-p2p-communication; trainsim exposes the "
     "pipeline p2p either way)",
     false, nullptr},
    {"tp_net", FieldKind::kText, kNetIgnored, false, nullptr},
    {"cp_net", FieldKind::kText, kNetIgnored, false, nullptr},
    {"pp_net", FieldKind::kText, kNetIgnored, false, nullptr},
    {"dp_net", FieldKind::kText, kNetIgnored, false, nullptr},
    {"ep_net", FieldKind::kText, kNetIgnored, false, nullptr},
    {"etp_net", FieldKind::kText, kNetIgnored, false, nullptr},
    {"edp_net", FieldKind::kText, kNetIgnored, false, nullptr},
    {"fsdp_net", FieldKind::kText, kNetIgnored, false, nullptr},
    {"fsdp_moe_net", FieldKind::kText, kNetIgnored, false, nullptr},
    {"cp_a2a_mode", FieldKind::kText, "ignored (SimuMax's async/sync CP all-to-all)", false,
     nullptr},
    {"microbatch_group_size_per_vp_stage", FieldKind::kInt,
     "ignored (trainsim groups pp micro-batches per chunk, Megatron's default)", false, nullptr},
    {"enable_straggler_model", FieldKind::kBool, "ignored (SimuMax's straggler scaling)", false,
     nullptr},
    {"collective_skew", FieldKind::kText, "ignored (SimuMax's event-driven skew)", false, nullptr},
    {"fsdp_mode", FieldKind::kText, "ignored (SimuMax's FSDP communication pattern)", false,
     nullptr},
    {"reshard_after_forward", FieldKind::kBool, "ignored (trainsim reshards, FSDP2's default)",
     false, nullptr},
    {"fsdp_prefetch_layers", FieldKind::kInt, "accepted, no effect", false, nullptr},
    {"use_accm_weight", FieldKind::kBool, "accepted, no effect", false, nullptr},
    {"use_fused_grad_accumulation", FieldKind::kBool, "accepted, no effect", false, nullptr},
    {"dispatch_probs", FieldKind::kBool, "ignored", false, nullptr},
    // SimuMax docs/strategy.md: cache the grouped GEMMs' FP8 inputs (instead of their 16-bit
    // ones) for the weight gradient; offload the grouped GEMMs' inputs to the host. Both change
    // the saved activations, which trainsim cannot represent: refused when on.
    {"cache_groupgemm_col_fp8_inputs", FieldKind::kBool,
     "false only (true: FP8-cached grouped-GEMM inputs are not represented)", false,
     RefuseTrue<"caching the grouped GEMMs' inputs in FP8 is not represented">},
    {"offload_groupgemm_col_inputs", FieldKind::kBool,
     "false only (true: host offload of grouped-GEMM inputs is not represented)", false,
     RefuseTrue<"offloading the grouped GEMMs' inputs to the host is not represented">},
    {"te_version", FieldKind::kText, "accepted, no effect (SimuMax's TE memory audit)", false,
     nullptr},
    {"te_dummy_wgrad_min_version", FieldKind::kText, "accepted, no effect", false, nullptr},
    {"te_cp_a2a_save_pre_posta2a_min_version", FieldKind::kText, "accepted, no effect", false,
     nullptr},
    {"te_grouped_linear_dummy_wgrad_min_version", FieldKind::kText, "accepted, no effect", false,
     nullptr},
    {"compute_engine_map", FieldKind::kText, "ignored (SimuMax's engine lanes)", false, nullptr},
    {"fused_ops", FieldKind::kText, "ignored (SimuMax's fused-op overlap)", false, nullptr},
    {"fused_mem_mode", FieldKind::kText, "accepted, no effect", false, nullptr},
    {"efficiency_overrides", FieldKind::kText,
     "ignored (SimuMax per-operator efficiencies; give them as hardware efficiencies)", false,
     nullptr},
    {"layout_transform_overhead_us", FieldKind::kNumber, "ignored", false, nullptr},
};

}  // namespace

std::span<const StrategyAlias> StrategyAliases() {
  return kAliases;
}

}  // namespace trainsim

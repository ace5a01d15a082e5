// The Strategy schema: one row per setting (trainsim/schema.h). Adding a Strategy field means
// adding a row here; the JSON reader and writer, the CLI flags, the Megatron-LM arguments and
// the docs tables follow.
#include <string>

#include "spec/field_text.h"
#include "spec/strategy_finetune_fields.h"
#include "spec/strategy_megatron_hooks.h"
#include "trainsim/megatron.h"
#include "trainsim/schema.h"

namespace trainsim {
namespace {

using detail::BoolText;
using detail::ParseBoolText;
using detail::ParseIntText;

template <auto M, long long Min>
Status SetInt(Strategy& s, std::string_view t) {
  return ParseIntText(t, Min, s.*M);
}
template <auto M>
std::string GetInt(const Strategy& s) {
  return std::to_string(s.*M);
}
// 0 (or -1) means "derived" / "all": written as null.
template <auto M>
std::string GetPositiveInt(const Strategy& s) {
  return s.*M > 0 ? std::to_string(s.*M) : std::string();
}
template <auto M>
Status SetBool(Strategy& s, std::string_view t) {
  return ParseBoolText(t, s.*M);
}
template <auto M>
std::string GetBool(const Strategy& s) {
  return BoolText(s.*M);
}
// Execution microseconds in [0, 1e6] (host issue, ZeRO-3 hooks).
template <auto M>
Status SetExecUs(Strategy& s, std::string_view t) {
  return detail::ParseNumberText(t, 0, 1e6, s.exec.*M);
}
template <auto M>
std::string GetExecUs(const Strategy& s) {
  return detail::NumberText(s.exec.*M);
}

template <auto M>
Status SetExecBool(Strategy& s, std::string_view t) {
  return detail::ParseBoolText(t, s.exec.*M);
}
template <auto M>
std::string GetExecBool(const Strategy& s) {
  return s.exec.*M ? "true" : "false";
}

// The enum parsers' messages start with their field name; the schema's callers add the key.
Status RuleOnly(const Status& st) {
  const std::string& m = st.message();
  const size_t colon = m.find(": ");
  if (st.ok() || colon == std::string::npos) return st;
  return Status::Invalid(m.substr(colon + 2));
}

Status SetDType(Strategy& s, std::string_view t) {
  auto d = ParseDType(t);
  if (!d.ok()) return RuleOnly(d.status());
  s.dtype = d.value();
  if (s.dtype == DType::kFp16) s.main_grad_fp32 = false;  // Megatron's fp16 default
  return Status::Ok();
}

Status SetRecomputeModules(Strategy& s, std::string_view t) {
  auto mask = ParseRecomputeModules(t);
  if (!mask.ok()) return RuleOnly(mask.status());
  s.recompute = Recompute::kSelective;
  s.recompute_modules = mask.value();
  return Status::Ok();
}

Status SetOffloadModules(Strategy& s, std::string_view t) {
  if (t == "none") {
    s.exec.offload_modules = 0;
    return Status::Ok();
  }
  auto mask = ParseOffloadModules(t);
  if (!mask.ok()) return RuleOnly(mask.status());
  s.exec.offload_modules = mask.value();
  return Status::Ok();
}

Status SetRecompute(Strategy& s, std::string_view t) {
  auto r = ParseRecompute(t);
  if (!r.ok()) return RuleOnly(r.status());
  s.recompute = r.value();
  return Status::Ok();
}

Status SetSchedule(Strategy& s, std::string_view t) {
  auto r = ParseSchedule(t);
  if (!r.ok()) return RuleOnly(r.status());
  s.schedule = r.value();
  return Status::Ok();
}

Status SetOrder(Strategy& s, std::string_view t) {
  auto r = ParseRankOrder(t);
  if (!r.ok()) return RuleOnly(r.status());
  s.order = r.value();
  return Status::Ok();
}

// The grammar only (the stage count needs pp, the layers the model: ValidateStrategy).
Status SetPipelineLayout(Strategy& s, std::string_view t) {
  if (!t.empty())
    if (auto l = ParsePipelineLayoutStages(t); !l.ok()) return RuleOnly(l.status());
  s.pipeline_layout = std::string(t);
  return Status::Ok();
}

Status SetEpOverlap(Strategy& s, std::string_view t) {
  if (Status st = detail::ParseNumberText(t, 0, 1, s.ep_comm_overlap); !st.ok())
    return Status::Invalid("must be a fraction in [0, 1], got '" + std::string(t) + "'");
  return Status::Ok();
}

// --moe-router-dtype: fp32 / fp64, or none (the parameter dtype: Megatron-LM's None).
Status SetRouterDtype(Strategy& s, std::string_view t) {
  // Megatron-LM's choices are fp32 and fp64 (none: the parameter dtype); "fp16" under bf16
  // parameters was read as none without a word.
  if (t == "none" || t == "None") {
    s.moe_router_bytes = 0;
  } else if (t == "fp32") {
    s.moe_router_bytes = 4;
  } else if (t == "fp64") {
    s.moe_router_bytes = 8;
  } else {
    return Status::Invalid("must be none, fp32 or fp64, got '" + std::string(t) + "'");
  }
  return Status::Ok();
}

std::string GetRouterDtype(const Strategy& s) {
  return s.moe_router_bytes == 8 ? "fp64" : s.moe_router_bytes == 4 ? "fp32" : "none";
}

// --moe-expert-capacity-factor: a positive factor; none (or 0) = no capacity, no dropping.
Status SetCapacityFactor(Strategy& s, std::string_view t) {
  if (t == "none" || t == "None") {
    s.moe_capacity_factor = 0;
    return Status::Ok();
  }
  // A factor below 1e-3 keeps less than a thousandth of the balanced load (a denormal one was
  // costed as dropping every token); 0 is none.
  double f = 0;
  if (Status st = detail::ParseNumberText(t, 0, 1e3, f); !st.ok() || (f > 0 && f < 1e-3))
    return Status::Invalid("must be a factor in [0.001, 1000] or none (0), got '" + std::string(t) +
                           "'");
  s.moe_capacity_factor = f;
  return Status::Ok();
}

Status SetAttentionKernel(Strategy& s, std::string_view t) {
  Result<AttentionImpl> a = ParseAttentionImpl(t);
  if (!a.ok()) return Status::Invalid("must be fused, fa2 or fa1, got '" + std::string(t) + "'");
  s.attention_kernel = *a;
  return Status::Ok();
}

Status SetCpCommType(Strategy& s, std::string_view t) {
  if (t != "p2p" && t != "a2a" && t != "all2all")
    return Status::Invalid("must be p2p or a2a, got '" + std::string(t) + "'");
  s.cp_a2a = t != "p2p";
  return Status::Ok();
}

using megatron_hooks::EmitAbove1;
namespace ff = detail::finetune_fields;

// Data parallelism exists (world_size divisible by tp*pp*cp and larger than it).
constexpr bool HasDp(const Strategy& s) {
  const long long par = 1LL * s.tp * s.pp * s.cp;
  return par >= 1 && s.world_size / par > 1;
}

// The table: data at namespace scope, constant-initialised.
constexpr StrategyField kFields[] = {
    // Workload: the sequence and batch shape.
    {.key = "seq_len",
     .kind = FieldKind::kInt,
     .flag = "--seq",
     .megatron = "--seq-length=",
     .rule = ">= 1",
     .example = "8192",
     .doc = "sequence length (tokens)",
     .set = SetInt<&Strategy::seq, 1>,
     .get = GetInt<&Strategy::seq>,
     .assumed = "trainsim's default sequence length, a common pre-training length"},
    {.key = "micro_batch_size",
     .kind = FieldKind::kInt,
     .flag = "--mbs",
     .megatron = "--micro-batch-size=",
     .rule = ">= 1",
     .example = "2",
     .doc = "sequences per micro-batch",
     .set = SetInt<&Strategy::mbs, 1>,
     .get = GetInt<&Strategy::mbs>,
     .assumed = "Megatron-LM's default (--micro-batch-size 1)"},
    {.key = "global_batch_size",
     .kind = FieldKind::kInt,
     .flag = "--gbs",
     .megatron = "--global-batch-size=",
     .rule = ">= 1; null: micro_batch_num·mbs·dp",
     .example = "64",
     .doc = "sequences per step",
     .set = SetInt<&Strategy::gbs, 1>,
     .get = GetPositiveInt<&Strategy::gbs>,
     .assumed = "8 micro-batches per DP rank, trainsim's default batch"},
    {.key = "micro_batch_num",
     .kind = FieldKind::kInt,
     .flag = "--micro-batch-num",
     .rule = ">= 1; null: gbs/(mbs·dp)",
     .example = "4",
     .doc = "micro-batches per DP rank per step",
     .set = SetInt<&Strategy::micro_batch_num, 1>,
     .get = GetPositiveInt<&Strategy::micro_batch_num>},
    // Layout: parallel sizes.
    {.key = "world_size",
     .kind = FieldKind::kInt,
     .flag = "--gpus",
     .rule = ">= 1",
     .example = "16",
     .doc = "GPUs",
     .set = SetInt<&Strategy::world_size, 1>,
     .get = GetInt<&Strategy::world_size>,
     .assumed = "trainsim's default: one 8-GPU node"},
    {.key = "tp_size",
     .kind = FieldKind::kInt,
     .flag = "--tp",
     .megatron = "--tensor-model-parallel-size=",
     .rule = ">= 1",
     .example = "2",
     .doc = "tensor-parallel size",
     .set = SetInt<&Strategy::tp, 1>,
     .get = GetInt<&Strategy::tp>},
    {.key = "pp_size",
     .kind = FieldKind::kInt,
     .flag = "--pp",
     .megatron = "--pipeline-model-parallel-size=",
     .rule = ">= 1",
     .example = "2",
     .doc = "pipeline-parallel size (stages)",
     .set = SetInt<&Strategy::pp, 1>,
     .get = GetInt<&Strategy::pp>},
    {.key = "interleaving_size",
     .kind = FieldKind::kInt,
     .flag = "--vpp",
     .megatron = "--virtual-pipeline-model-parallel-size= --num-virtual-stages-per-pipeline-rank=",
     .rule = ">= 1",
     .example = "2",
     .doc = "virtual pipeline chunks per stage (vpp); > 1 turns 1f1b into interleaved_1f1b",
     .set = SetInt<&Strategy::vpp, 1>,
     .get = GetInt<&Strategy::vpp>,
     .to_megatron = megatron_hooks::VppOut},
    {.key = "cp_size",
     .kind = FieldKind::kInt,
     .flag = "--cp",
     .megatron = "--context-parallel-size=",
     .rule = ">= 1",
     .example = "2",
     .doc = "context-parallel size",
     .set = SetInt<&Strategy::cp, 1>,
     .get = GetInt<&Strategy::cp>,
     .to_megatron = EmitAbove1<&Strategy::cp, megatron_hooks::kCpArg>},
    {.key = "ep_size",
     .kind = FieldKind::kInt,
     .flag = "--ep",
     .megatron = "--expert-model-parallel-size=",
     .rule = ">= 1",
     .example = "2",
     .doc = "expert-parallel size",
     .set = SetInt<&Strategy::ep, 1>,
     .get = GetInt<&Strategy::ep>,
     .to_megatron = EmitAbove1<&Strategy::ep, megatron_hooks::kEpArg>},
    {.key = "etp_size",
     .kind = FieldKind::kInt,
     .flag = "--etp",
     .megatron = "--expert-tensor-parallel-size=",
     .rule = ">= 1; null: tp_size",
     .example = "2",
     .doc = "expert tensor-parallel size",
     .set = SetInt<&Strategy::etp, 1>,
     .get = GetPositiveInt<&Strategy::etp>,
     .to_megatron = megatron_hooks::EtpOut},
    {.key = "enable_sequence_parallel",
     .kind = FieldKind::kBool,
     .flag = "--sp",
     .megatron = "--sequence-parallel",
     .rule = "true, false; off when tp_size is 1",
     .example = "false",
     .doc = "sequence parallelism",
     .set = SetBool<&Strategy::sp>,
     .get = GetBool<&Strategy::sp>,
     .assumed =
         "on with TP, as in the frameworks' performance recipes (Megatron-Core, NeMo, torchtitan)",
     .matters = [](const Strategy& s) { return s.tp > 1; }},
    // Memory policy.
    {.key = "fsdp",
     .kind = FieldKind::kBool,
     .flag = "--fsdp",
     .megatron = "--use-megatron-fsdp --use-torch-fsdp2 --use-custom-fsdp",
     .rule = "true, false",
     .example = "true",
     .doc = "FSDP parameter sharding; a zero_state below 2 becomes 3",
     .set = SetBool<&Strategy::fsdp>,
     .get = GetBool<&Strategy::fsdp>,
     .to_megatron = megatron_hooks::FsdpOut},
    {.key = "zero_state",
     .kind = FieldKind::kInt,
     .flag = "--zero",
     .megatron = "--use-distributed-optimizer --data-parallel-sharding-strategy=",
     .rule = "0-3",
     .example = "2",
     .doc = "ZeRO stage over the DP group (1 = Megatron's distributed optimizer)",
     .set = [](Strategy& s, std::string_view t) { return detail::ParseIntText(t, 0, 3, s.zero); },
     .get = GetInt<&Strategy::zero>,
     .from_megatron = megatron_hooks::ZeroIn,
     .to_megatron = megatron_hooks::ZeroOut,
     .assumed = "1, the distributed optimizer of the Megatron-Core and NeMo performance recipes",
     // With fsdp the stage follows from it (3, or the 2 given): not a default to list.
     .matters = [](const Strategy& s) { return HasDp(s) && !s.fsdp; }},
    {.key = "dtype",
     .kind = FieldKind::kText,
     .flag = "--dtype",
     .megatron = "--bf16:bf16 --fp16:fp16 --fp8-format=:fp8 --fp8-recipe= --fp4-format=:nvfp4",
     .rule = "bf16, fp16, fp32, tf32, fp8, mxfp8, nvfp4 (also bfloat16, float16, float32, e4m3, "
             "hybrid, fp4, mxfp4)",
     .example = "fp8",
     .doc = "GEMM precision; fp16 also turns use_fp32_accum_grad off unless it is given",
     .set = SetDType,
     .get = [](const Strategy& s) { return std::string(DTypeName(s.dtype)); },
     .from_megatron = megatron_hooks::DTypeIn,
     .to_megatron = megatron_hooks::DTypeOut,
     .assumed = "bf16 mixed precision, the recipes' default (Megatron-LM --bf16)"},
    {.key = "use_fp32_accum_grad",
     .kind = FieldKind::kBool,
     .flag = "--main-grad-fp32",
     .megatron = "--accumulate-allreduce-grads-in-fp32 --grad-reduce-in-bf16:false "
                 "--main-grads-dtype=",
     .rule = "true, false",
     .example = "false",
     .doc = "fp32 main gradients (4 B/param) instead of 2 B",
     .set = SetBool<&Strategy::main_grad_fp32>,
     .get = GetBool<&Strategy::main_grad_fp32>,
     .from_megatron = megatron_hooks::MainGradIn,
     .to_megatron = megatron_hooks::MainGradOut,
     .assumed = "Megatron-LM's default: fp32 main gradients with bf16, fp16 ones with fp16"},
    {.key = "offload_optimizer",
     .kind = FieldKind::kBool,
     .flag = "--offload-optimizer",
     .megatron = "--optimizer-cpu-offload",
     .rule = "true, false",
     .example = "true",
     .doc = "optimizer states in host memory, Adam step on the CPU",
     .set = SetBool<&Strategy::offload_optimizer>,
     .get = GetBool<&Strategy::offload_optimizer>},
    {.key = "optimizer_offload_fraction",
     .kind = FieldKind::kNumber,
     .flag = "--optimizer-offload-fraction",
     .megatron = "--optimizer-offload-fraction=",
     .rule = "a fraction in (0, 1]; with offload_optimizer",
     .example = "0.5",
     .doc = "with offload_optimizer: the share of the optimizer states in host memory, stepped on "
            "the CPU; the rest stays in HBM and steps on the GPU",
     .set =
         [](Strategy& s, std::string_view t) {
           if (Status st = detail::ParseNumberText(t, 0, 1, s.optimizer_offload_fraction);
               !st.ok() || !(s.optimizer_offload_fraction > 0))
             return Status::Invalid("must be a fraction in (0, 1], got '" + std::string(t) + "'");
           return Status::Ok();
         },
     .get = [](const Strategy& s) { return detail::NumberText(s.optimizer_offload_fraction); },
     // Only a partial offload is written (Megatron-LM's default is 1).
     .to_megatron =
         [](const Strategy& s, std::string& out) {
           if (s.offload_optimizer && s.optimizer_offload_fraction < 1)
             out += " --optimizer-offload-fraction " +
                    detail::NumberText(s.optimizer_offload_fraction);
         },
     .assumed = "1: every optimizer state offloaded, Megatron-LM's default",
     .matters = [](const Strategy& s) { return s.offload_optimizer; }},
    {.key = "offload_modules",
     .kind = FieldKind::kText,
     .flag = "--offload-modules",
     .megatron = "--offload-modules=*",
     .rule = "none, or comma-separated: attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm, "
             "expert_fc1, moe_act",
     .example = "core_attn,expert_fc1",
     .doc = "fine-grained activation offloading: these modules' saved tensors go to host memory "
            "in the forward and come back for the backward; copies beyond the layer's compute "
            "are exposed",
     .set = SetOffloadModules,
     .get =
         [](const Strategy& s) {
           return s.exec.offload_modules ? OffloadModulesName(s.exec.offload_modules)
                                         : std::string("none");
         },
     .to_megatron = megatron_hooks::OffloadModulesOut},
    // Recompute: modules before the policy, so that a given policy wins.
    {.key = "recompute_modules",
     .kind = FieldKind::kText,
     .flag = "--recompute-modules",
     .megatron = "--recompute-modules=*",
     .rule = "comma-separated: core_attn, layernorm, mla_up_proj, mlp, moe_act, moe, "
             "shared_experts; or op_sac alone (torchtitan's per-op policy)",
     .example = "core_attn,mlp",
     .doc = "modules of selective recompute; implies selective unless recompute is given",
     .set = SetRecomputeModules,
     .get = [](const Strategy& s) { return RecomputeModulesName(s.recompute_modules); },
     .to_megatron = megatron_hooks::RecomputeModulesOut},
    {.key = "recompute",
     .kind = FieldKind::kText,
     .flag = "--recompute",
     .megatron = "--recompute-granularity= --recompute-activations:selective "
                 "--checkpoint-activations:full",
     .rule = "none, selective, full",
     .example = "full",
     .doc = "activation recompute policy",
     .set = SetRecompute,
     .get = [](const Strategy& s) { return std::string(RecomputeName(s.recompute)); },
     .to_megatron = megatron_hooks::RecomputeOut,
     .assumed = "none, Megatron-LM's default; the report says whether the step fits (validate "
                "takes the lightest policy that fits)"},
    {.key = "recompute_layer_num",
     .kind = FieldKind::kInt,
     .flag = "--recompute-layers",
     .megatron = "--recompute-num-layers= --recompute-method= --activations-checkpoint-method= "
                 "--activations-checkpoint-num-layers= --checkpoint-num-layers=",
     .rule = ">= 0 (0: none); null: every layer",
     .example = "2",
     .doc = "layers per stage under full recompute",
     .set = SetInt<&Strategy::recompute_layers, 0>,
     .get =
         [](const Strategy& s) {
           return s.recompute_layers >= 0 ? std::to_string(s.recompute_layers) : std::string();
         },
     .from_megatron = megatron_hooks::RecomputeLayersIn,
     .to_megatron = megatron_hooks::RecomputeLayersOut},
    // Schedule and placement.
    {.key = "pipeline_schedule",
     .kind = FieldKind::kText,
     .flag = "--schedule",
     .rule = "1f1b, interleaved_1f1b, gpipe, zb_h1, dualpipe",
     .example = "gpipe",
     .doc = "pipeline schedule; zb_h1 and dualpipe need vpp 1",
     .set = SetSchedule,
     .get = [](const Strategy& s) { return std::string(ScheduleName(s.schedule)); },
     .assumed = "Megatron-LM's 1F1B, interleaved when vpp > 1",
     .matters = [](const Strategy& s) { return s.pp > 1; }},
    {.key = "order",
     .kind = FieldKind::kText,
     .flag = "--order",
     .megatron = "--use-tp-pp-dp-mapping:tp-cp-pp-dp",
     .rule = "tp-cp-dp-pp (also tp-cp-ep-dp-pp), tp-dp-cp-pp, tp-cp-pp-dp, tp-pp-cp-dp",
     .example = "tp-dp-cp-pp",
     .doc = "rank order, innermost first",
     .set = SetOrder,
     .get = [](const Strategy& s) { return std::string(RankOrderName(s.order)); }},
    {.key = "uneven_pipeline",
     .kind = FieldKind::kBool,
     .flag = "--uneven-pipeline",
     .megatron = "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split",
     .rule = "true, false",
     .example = "true",
     .doc = "layers not divisible by pp·vpp: embedding and loss count as layers (also when "
            "false: the split is the same)",
     .set = SetBool<&Strategy::uneven_pipeline>,
     .get = GetBool<&Strategy::uneven_pipeline>,
     .to_megatron = megatron_hooks::UnevenOut},
    {.key = "first_pipeline_num_layers",
     .kind = FieldKind::kInt,
     .flag = "--first-pipeline-layers",
     .megatron = "--decoder-first-pipeline-num-layers=",
     .rule = ">= 1; null: the framework's split",
     .example = "4",
     .doc = "transformer layers on the first pipeline stage; the middle stages share the rest "
            "evenly",
     .set = SetInt<&Strategy::first_stage_layers, 1>,
     .get = GetPositiveInt<&Strategy::first_stage_layers>},
    {.key = "last_pipeline_num_layers",
     .kind = FieldKind::kInt,
     .flag = "--last-pipeline-layers",
     .megatron = "--decoder-last-pipeline-num-layers=",
     .rule = ">= 1; null: the framework's split",
     .example = "4",
     .doc = "transformer layers on the last pipeline stage; the middle stages share the rest "
            "evenly",
     .set = SetInt<&Strategy::last_stage_layers, 1>,
     .get = GetPositiveInt<&Strategy::last_stage_layers>},
    {.key = "pipeline_model_parallel_layout",
     .kind = FieldKind::kText,
     .flag = "--pipeline-layout",
     .megatron = "--pipeline-model-parallel-layout=",
     .rule = "Megatron-LM's layout: E, t, m, L per stage, '|' between stages, (...)*n and x*n "
             "repeat; pp·vpp stages",
     .example = "Et|(tt|)*2tL",
     .doc = "the layers of every pipeline stage and virtual chunk (sets vpp)",
     .set = SetPipelineLayout,
     .get = [](const Strategy& s) { return s.pipeline_layout; },
     .to_megatron = megatron_hooks::LayoutOut},
    // Overlaps and kernels.
    {.key = "overlap_grad_reduce",
     .kind = FieldKind::kBool,
     .flag = "--overlap-grad-reduce",
     .megatron = "--overlap-grad-reduce",
     .rule = "true, false",
     .example = "false",
     .doc = "DP gradient reduce overlapped with backward",
     .set = SetBool<&Strategy::overlap_grad_reduce>,
     .get = GetBool<&Strategy::overlap_grad_reduce>,
     .assumed =
         "overlapped with the backward pass, as in the performance recipes (--overlap-grad-reduce)",
     .matters = HasDp},
    {.key = "overlap_param_gather",
     .kind = FieldKind::kBool,
     .flag = "--overlap-param-gather",
     .megatron = "--overlap-param-gather",
     .rule = "true, false",
     .example = "false",
     .doc = "ZeRO parameter all-gather overlapped with forward",
     .set = SetBool<&Strategy::overlap_param_gather>,
     .get = GetBool<&Strategy::overlap_param_gather>,
     .to_megatron = megatron_hooks::ParamGatherOut,
     .assumed =
         "overlapped with the forward pass, as in the performance recipes (--overlap-param-gather)",
     .matters = [](const Strategy& s) { return HasDp(s) && s.zero >= 1; }},
    {.key = "tp_comm_overlap",
     .kind = FieldKind::kBool,
     .flag = "--tp-comm-overlap",
     .megatron = "--tp-comm-overlap",
     .rule = "true, false",
     .example = "true",
     .doc = "TP collectives overlapped with GEMMs",
     .set = SetBool<&Strategy::tp_comm_overlap>,
     .get = GetBool<&Strategy::tp_comm_overlap>,
     // Megatron-LM refuses it without sequence parallelism (validate_args), which it turns off
     // at tensor-parallel size 1: not written then.
     .to_megatron =
         [](const Strategy& s, std::string& out) {
           if (s.tp_comm_overlap && s.sp && s.tp > 1) out += " --tp-comm-overlap";
         },
     .assumed = "off: TE userbuffer overlap is opt-in (--tp-comm-overlap); validate's framework "
                "profiles turn it on over NVLink",
     .matters = [](const Strategy& s) { return s.tp > 1; }},
    {.key = "ep_comm_overlap",
     .kind = FieldKind::kNumber,
     .flag = "--ep-overlap",
     // 0.3: the share the Megatron-Bridge recipes hide with these switches, fitted on the
     // public mbridge cases (data/frameworks.json, megatron-bridge profile).
     .megatron = "--overlap-moe-expert-parallel-comm:0.3 --moe-shared-expert-overlap:0.3",
     .rule = "0-1",
     .example = "0.25",
     .doc = "fraction of the EP all-to-all and ETP collectives hidden",
     .set = SetEpOverlap,
     .get = [](const Strategy& s) { return detail::NumberText(s.ep_comm_overlap); },
     .assumed = "0: the EP all-to-all is exposed (no --overlap-moe-expert-parallel-comm)",
     .matters = [](const Strategy& s) { return s.ep > 1; }},
    {.key = "moe_dedup_dispatch",
     .kind = FieldKind::kBool,
     .flag = "--moe-dedup-dispatch",
     .megatron = "--moe-token-dispatcher-type= --moe-enable-deepep:true",
     .rule = "true, false",
     .example = "true",
     .doc = "MoE dispatch sends a token once per destination node (DeepEP, flex dispatcher)",
     .set = SetBool<&Strategy::moe_dedup_dispatch>,
     .get = GetBool<&Strategy::moe_dedup_dispatch>,
     .from_megatron = megatron_hooks::DispatcherIn,
     .to_megatron = megatron_hooks::DispatcherOut,
     .assumed = "off: Megatron-LM's all-to-all dispatcher (no DeepEP)",
     .matters = [](const Strategy& s) { return s.ep > 1; }},
    // MoE experts and router (graph.cc, MoeMlp). Their defaults are listed as assumed for MoE
    // models by ApplyModelDefaults (front_end.cc), where the model is known.
    {.key = "moe_grouped_gemm",
     .kind = FieldKind::kBool,
     .flag = "--moe-grouped-gemm",
     .megatron = "--moe-grouped-gemm",
     .rule = "true, false",
     .example = "false",
     .doc = "MoE experts as grouped GEMMs (TEGroupedMLP); false: SequentialMLP, one GEMM set and "
            "launch per local expert",
     .set = SetBool<&Strategy::moe_grouped_gemm>,
     .get = GetBool<&Strategy::moe_grouped_gemm>,
     // Written with the model's MoE arguments (export_megatron.cc, MegatronArgsAndNotes).
     .to_megatron = [](const Strategy&, std::string&) {}},
    {.key = "moe_permute_fusion",
     .kind = FieldKind::kBool,
     .flag = "--moe-permute-fusion",
     .megatron = "--moe-permute-fusion",
     .rule = "true, false",
     .example = "false",
     .doc = "fused MoE permute/unpermute (TE); false: PyTorch sort, gather and scatter-add",
     .set = SetBool<&Strategy::moe_permute_fusion>,
     .get = GetBool<&Strategy::moe_permute_fusion>,
     // Written with the model's MoE arguments (export_megatron.cc, MegatronArgsAndNotes).
     .to_megatron = [](const Strategy&, std::string&) {}},
    {.key = "moe_router_dtype",
     .kind = FieldKind::kText,
     .flag = "--moe-router-dtype",
     .megatron = "--moe-router-dtype=",
     .rule = "none, fp32, fp64",
     .example = "fp64",
     .doc = "MoE router GEMM, scores and combine weights in fp32/fp64 (none: parameter dtype)",
     .set = SetRouterDtype,
     .get = GetRouterDtype,
     .to_megatron =
         [](const Strategy& s, std::string& out) {
           if (s.moe_router_bytes > 0) out += " --moe-router-dtype " + GetRouterDtype(s);
         }},
    {.key = "moe_capacity_factor",
     .kind = FieldKind::kNumber,
     .flag = "--moe-capacity-factor",
     .megatron = "--moe-expert-capacity-factor=",
     .rule = "[0.001, 1000], or none (0): no capacity",
     .example = "1.25",
     .doc = "MoE expert capacity as a multiple of the balanced load: below 1 drops tokens; with "
            "moe_pad_to_capacity every expert runs its full capacity",
     .set = SetCapacityFactor,
     .get = [](const Strategy& s) { return detail::NumberText(s.moe_capacity_factor); },
     .to_megatron =
         [](const Strategy& s, std::string& out) {
           if (s.moe_capacity_factor > 0)
             out += " --moe-expert-capacity-factor " + detail::NumberText(s.moe_capacity_factor);
         }},
    {.key = "moe_pad_to_capacity",
     .kind = FieldKind::kBool,
     .flag = "--moe-pad-to-capacity",
     .megatron = "--moe-pad-expert-input-to-capacity",
     .rule = "true, false; true needs moe_capacity_factor",
     .example = "true",
     .doc = "pad every expert's input to its capacity (the all-to-all and GEMMs carry it)",
     .set = SetBool<&Strategy::moe_pad_to_capacity>,
     .get = GetBool<&Strategy::moe_pad_to_capacity>},
    {.key = "moe_router_padding",
     .kind = FieldKind::kBool,
     .flag = "--moe-router-padding",
     .megatron = "--moe-router-padding-for-fp8 --moe-router-padding-for-quantization",
     .rule = "true, false",
     .example = "true",
     .doc = "FP8/FP4: the router pads each expert's rows to a multiple of 16 (32 MXFP8) instead "
            "of TE's Fp8Padding copies",
     .set = SetBool<&Strategy::moe_router_padding>,
     .get = GetBool<&Strategy::moe_router_padding>},
    {.key = "use_flash_sdp",
     .kind = FieldKind::kBool,
     .flag = "--flash-attention",
     .rule = "true, false",
     .example = "false",
     .doc = "flash attention; false: math attention (the scores are materialised)",
     .set = SetBool<&Strategy::flash_attention>,
     .get = GetBool<&Strategy::flash_attention>},
    {.key = "attention_kernel",
     .kind = FieldKind::kText,
     .flag = "--attention-kernel",
     .megatron = "--attention-backend= --use-flash-attn:fa2",
     .rule = "fused, fa2, fa1",
     .example = "fa2",
     .doc = "fused: TE/cuDNN; fa2: FlashAttention-2 (the attn_fa2_* efficiencies); fa1: "
            "FlashAttention 1 / Triton flash kernels (half FA2's speed)",
     .set = SetAttentionKernel,
     .get = [](const Strategy& s) { return std::string(AttentionImplName(s.attention_kernel)); },
     .from_megatron = megatron_hooks::AttentionIn,
     .to_megatron = megatron_hooks::AttentionOut,
     .assumed = "fused: TE/cuDNN attention, Megatron-LM's default backend"},
    {.key = "fused_cross_entropy",
     .kind = FieldKind::kBool,
     .flag = "--fused-cross-entropy",
     .megatron = "--cross-entropy-loss-fusion",
     .rule = "true, false",
     .example = "true",
     .doc = "TE fused cross-entropy (no fp32 logits copy)",
     .set = SetBool<&Strategy::fused_cross_entropy>,
     .get = GetBool<&Strategy::fused_cross_entropy>,
     .assumed = "off: Megatron-LM's default (the recipes add --cross-entropy-loss-fusion)"},
    {.key = "cp_comm_type",
     .kind = FieldKind::kText,
     .flag = "--cp-comm-type",
     .megatron = "--cp-comm-type=*",
     .rule = "p2p, a2a (also all2all)",
     .example = "a2a",
     .doc = "context parallel by ring p2p or all-to-all (Ulysses)",
     .set = SetCpCommType,
     .get = [](const Strategy& s) { return std::string(s.cp_a2a ? "a2a" : "p2p"); },
     .from_megatron = megatron_hooks::CpCommIn,
     .to_megatron = megatron_hooks::CpCommOut,
     .assumed = "ring p2p, Megatron-LM's default",
     .matters = [](const Strategy& s) { return s.cp > 1; }},
    // Megatron-LM memory settings (issue 10).
    {.key = "optimizer_state_bytes",
     .kind = FieldKind::kNumber,
     .flag = "--optimizer-state-bytes",
     .megatron = "--use-precision-aware-optimizer --main-params-dtype= --exp-avg-dtype= "
                 "--exp-avg-sq-dtype=",
     .rule = "> 0 (12: fp32 master weights, momentum and variance)",
     .example = "8",
     .doc = "optimizer state bytes per trainable parameter (Megatron-LM precision-aware "
            "optimizer: 4 or 2 for master weights + 4/2/1 each for the two moments)",
     .set =
         [](Strategy& s, std::string_view t) {
           return detail::ParseNumberText(t, 0.5, 64, s.optimizer_state_bytes);
         },
     .get = [](const Strategy& s) { return detail::NumberText(s.optimizer_state_bytes); },
     .from_megatron = megatron_hooks::PrecisionAwareIn,
     .to_megatron = megatron_hooks::PrecisionAwareOut},
    {.key = "fp8_param_gather",
     .kind = FieldKind::kBool,
     .flag = "--fp8-param-gather",
     .megatron = "--fp8-param-gather",
     .rule = "true, false; with an FP8 dtype",
     .example = "true",
     .doc = "parameters held in FP8 only (no 16-bit copy), gathered in FP8",
     .set = SetBool<&Strategy::fp8_param_gather>,
     .get = GetBool<&Strategy::fp8_param_gather>},
    {.key = "host_issue_us_per_kernel",
     .kind = FieldKind::kNumber,
     .flag = "--host-issue-us",
     .rule = "0-1e6 microseconds (0: never host-bound, e.g. under CUDA graphs)",
     .example = "12.5",
     .doc = "host time to launch one kernel of the cost graph; a pass is never shorter than its "
            "kernels x this",
     .set = SetExecUs<&Execution::host_issue_us_per_kernel>,
     .get = GetExecUs<&Execution::host_issue_us_per_kernel>,
     .assumed = "30: eager PyTorch on a bare-metal host, as Megatron-LM runs without CUDA graphs "
                "(data/frameworks.json, about)"},
    {.key = "zero3_fetch_us",
     .kind = FieldKind::kNumber,
     .flag = "--zero3-fetch-us",
     .rule = "0-1e6 microseconds (0: no per-module hook cost)",
     .example = "500",
     .doc = "ZeRO-3 only: host time of the framework's gather/release hooks per weight matrix "
            "and pass (DeepSpeed's module hooks; FSDP's are in the kernels' host issue)",
     .set = SetExecUs<&Execution::zero3_fetch_us>,
     .get = GetExecUs<&Execution::zero3_fetch_us>},
    {.key = "deepspeed_reduce_bucket_elems",
     .kind = FieldKind::kNumber,
     .flag = "--deepspeed-reduce-bucket",
     .rule = "0 or 1e3-1e11 elements (0: not a DeepSpeed ZeRO-1/2 engine)",
     .example = "5e+08",
     .doc = "DeepSpeed ZeRO-1/2 only: zero_optimization.reduce_bucket_size, the elements of each "
            "of the two 16-bit gradient buckets its backward holds; under ZeRO-2 the gradients "
            "are reduce-scattered in every micro-batch's backward, not once per step",
     .set =
         [](Strategy& s, std::string_view t) {
           double v = 0;
           if (Status st = detail::ParseNumberText(t, 0, 1e11, v); !st.ok()) return st;
           if (v > 0 && v < 1e3) return Status::Invalid("", "must be 0 or in [1e3, 1e11]");
           s.exec.zero_reduce_bucket_elems = v;
           return Status::Ok();
         },
     .get = [](const Strategy& s) { return detail::NumberText(s.exec.zero_reduce_bucket_elems); },
     // A strategy without buckets is no DeepSpeed engine: written as DeepSpeed, it holds them.
     .matters = [](const Strategy& s) { return s.exec.zero_reduce_bucket_elems > 0; }},
    {.key = "eager_modules",
     .kind = FieldKind::kBool,
     .flag = "--eager-modules",
     .rule = "true, false",
     .example = "true",
     .doc = "the model's element-wise chains (fp32 RMSNorm, rotary, SiLU x up) as eager PyTorch "
            "runs them, one kernel per operation (no torch.compile); false: fused kernels",
     .set = SetExecBool<&Execution::eager_modules>,
     .get = GetExecBool<&Execution::eager_modules>},
    {.key = "dist_opt_instances",
     .kind = FieldKind::kInt,
     .flag = "--dist-opt-instances",
     .megatron = "--num-distributed-optimizer-instances=",
     .rule = ">= 1, divides dp·cp and the expert-DP size",
     .example = "2",
     .doc = "HSDP replicas: ZeRO states sharded within dp·cp/N ranks, all-reduced across N",
     .set = SetInt<&Strategy::dist_opt_instances, 1>,
     .get = GetInt<&Strategy::dist_opt_instances>,
     .to_megatron = EmitAbove1<&Strategy::dist_opt_instances, megatron_hooks::kDistOptArg>},
    // DeepSpeed ZeRO++ (arXiv 2306.10209; DeepSpeed config zero_hpz_partition_size,
    // zero_quantized_weights, zero_quantized_gradients).
    {.key = "zero_hpz_size",
     .kind = FieldKind::kInt,
     .flag = "--zero-hpz-size",
     .rule = ">= 1; above 1 with ZeRO-3, divides the sharding group (dp*cp / dist_opt_instances)",
     .example = "8",
     .doc = "ZeRO++ hpZ: a secondary copy of the 16-bit weights sharded over groups of N ranks "
            "(a node); the backward all-gather runs within the group",
     .set = SetInt<&Strategy::zero_hpz_size, 1>,
     .get = GetInt<&Strategy::zero_hpz_size>},
    {.key = "zero_quant_weights",
     .kind = FieldKind::kBool,
     .flag = "--zero-quant-weights",
     .rule = "true, false; with ZeRO-3",
     .example = "true",
     .doc = "ZeRO++ qwZ: the forward parameter all-gather in int8 (1 B per parameter)",
     .set = SetBool<&Strategy::zero_quant_weights>,
     .get = GetBool<&Strategy::zero_quant_weights>},
    {.key = "zero_quant_grads",
     .kind = FieldKind::kBool,
     .flag = "--zero-quant-grads",
     .rule = "true, false; with ZeRO-3",
     .example = "true",
     .doc = "ZeRO++ qgZ: the gradient reduce-scatter as an int4 all-to-all (0.5 B per parameter)",
     .set = SetBool<&Strategy::zero_quant_grads>,
     .get = GetBool<&Strategy::zero_quant_grads>},
    // Fine-tuning and post-training (trainsim/finetune.h, docs/FINETUNE.md): one block.
    {.key = "stage",
     .kind = FieldKind::kText,
     .flag = "--stage",
     .rule = "pretrain, sft, dpo, ipo, simpo, orpo, kto, rm, ppo, grpo, dapo, rloo, remax",
     .example = "dpo",
     .doc = "training stage; the preference stages count gbs and mbs in (chosen, rejected) pairs",
     .set = ff::SetStage,
     .get = ff::GetStage},
    {.key = "method",
     .kind = FieldKind::kText,
     .flag = "--method",
     .rule = "full, freeze, lora, qlora, dora, pissa, ia3, adalora, vera, loha, lokr, oft, boft, "
             "prefix_tuning, prompt_tuning, p_tuning",
     .example = "lora",
     .doc = "fine-tuning method: which parameters train and the adapters' extra work",
     .set = ff::SetMethod,
     .get = ff::GetMethod},
    {.key = "lora_rank",
     .kind = FieldKind::kInt,
     .flag = "--lora-rank",
     .rule = ">= 1",
     .example = "64",
     .doc = "adapter rank r (LoRA family, VeRA; OFT: blocks per matrix)",
     .set = SetInt<&Strategy::lora_rank, 1>,
     .get = GetInt<&Strategy::lora_rank>},
    {.key = "lora_alpha",
     .kind = FieldKind::kNumber,
     .flag = "--lora-alpha",
     .rule = "> 0",
     .example = "32",
     .doc = "LoRA scaling numerator (recorded; no effect on time or memory)",
     .set = ff::SetLoraAlpha,
     .get = ff::GetLoraAlpha},
    {.key = "lora_dropout",
     .kind = FieldKind::kNumber,
     .flag = "--lora-dropout",
     .rule = "[0, 0.99]",
     .example = "0.05",
     .doc = "LoRA-family dropout on each adapter's input (PEFT lora_dropout; 0: none): a dropout "
            "kernel per adapted module, forward and backward, and its output and mask saved",
     .set = ff::SetLoraDropout,
     .get = ff::GetLoraDropout,
     .assumed = "0: PEFT LoraConfig's default (no dropout on the adapters' input)",
     .matters = ff::HasLoraDropoutField},
    {.key = "lora_targets",
     .kind = FieldKind::kText,
     .flag = "--lora-targets",
     .rule = "comma-separated: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj "
             "(and fused spellings: qkv, c_attn, c_proj, w1, w2, w3, mlp), or all-linear",
     .example = "q_proj,v_proj",
     .doc = "linear modules the adapters target",
     .set = ff::SetLoraTargets,
     .get = ff::GetLoraTargets},
    {.key = "freeze_layers",
     .kind = FieldKind::kInt,
     .flag = "--freeze-layers",
     .rule = ">= 0, or null = all but the last 2",
     .example = "20",
     .doc = "method freeze: transformer layers frozen, counted from the first",
     .set = ff::SetFreezeLayers,
     .get = ff::GetFreezeLayers},
    {.key = "train_embeddings",
     .kind = FieldKind::kBool,
     .flag = "--train-embeddings",
     .rule = "true, false",
     .example = "true",
     .doc = "PEFT methods: embedding and output layer trained in full (PEFT modules_to_save)",
     .set = SetBool<&Strategy::train_embeddings>,
     .get = GetBool<&Strategy::train_embeddings>},
    {.key = "virtual_tokens",
     .kind = FieldKind::kInt,
     .flag = "--virtual-tokens",
     .rule = ">= 1",
     .example = "200",
     .doc = "prefix / prompt / p-tuning: virtual tokens (PEFT num_virtual_tokens)",
     .set = SetInt<&Strategy::virtual_tokens, 1>,
     .get = GetInt<&Strategy::virtual_tokens>},
    {.key = "optimizer",
     .kind = FieldKind::kText,
     .flag = "--optimizer",
     .megatron = "--optimizer=",
     .rule = "adamw, adamw8bit, paged_adamw8bit, paged_adamw32bit, adafactor, sgd, lion, muon",
     .example = "adamw8bit",
     .doc = "optimizer: state bytes per parameter and the update's memory traffic",
     .set = ff::SetOptimizer,
     .get = ff::GetOptimizer,
     .from_megatron = megatron_hooks::OptimizerIn,
     .to_megatron = megatron_hooks::OptimizerOut},
    {.key = "master_weights",
     .kind = FieldKind::kBool,
     .flag = "--master-weights",
     .rule = "true, false",
     .example = "false",
     .doc = "fp32 master weights and optimizer states; false: pure 16-bit (torchtune)",
     .set = SetBool<&Strategy::master_weights>,
     .get = GetBool<&Strategy::master_weights>},
    {.key = "packing",
     .kind = FieldKind::kBool,
     .flag = "--packing",
     .rule = "true, false",
     .example = "false",
     .doc = "samples packed into rows of seq_len tokens; false: each padded to seq_len",
     .set = SetBool<&Strategy::packing>,
     .get = GetBool<&Strategy::packing>},
    {.key = "mean_seq",
     .kind = FieldKind::kInt,
     .flag = "--mean-seq",
     .rule = ">= 0, or null = seq_len",
     .example = "600",
     .doc = "mean tokens per sample; with packing a step computes gbs*mean_seq/seq_len rows",
     .set = ff::SetMeanSeq,
     .get = ff::GetMeanSeq},
    {.key = "max_seq",
     .kind = FieldKind::kInt,
     .flag = "--max-seq",
     .rule = ">= 0, or null = seq_len",
     .example = "8192",
     .doc = "longest sample of dynamically padded batches: the memory peak is taken there",
     .set = ff::SetMaxSeq,
     .get = ff::GetMaxSeq},
    {.key = "precompute_ref",
     .kind = FieldKind::kBool,
     .flag = "--precompute-ref",
     .rule = "true, false",
     .example = "true",
     .doc = "dpo/ipo/kto: reference log-probs computed before training (no reference forward)",
     .set = SetBool<&Strategy::precompute_ref>,
     .get = GetBool<&Strategy::precompute_ref>},
    // RL stages (src/rl, docs/FINETUNE.md "RL"): 0 / null = the stage's default, which the
    // report lists with its reason.
    {.key = "group_size",
     .kind = FieldKind::kInt,
     .flag = "--group-size",
     .rule = ">= 0, or null = the stage's (grpo/dapo 16, rloo 4, ppo/remax 1)",
     .example = "8",
     .doc = "RL: responses generated per prompt (gbs counts prompts)",
     .set = SetInt<&Strategy::group_size, 0>,
     .get = GetPositiveInt<&Strategy::group_size>},
    {.key = "prompt_len",
     .kind = FieldKind::kInt,
     .flag = "--prompt-len",
     .rule = ">= 0, or null = 256",
     .example = "512",
     .doc = "RL: mean prompt tokens",
     .set = SetInt<&Strategy::prompt_len, 0>,
     .get = GetPositiveInt<&Strategy::prompt_len>},
    {.key = "response_len",
     .kind = FieldKind::kInt,
     .flag = "--response-len",
     .rule = ">= 0, or null = from the cap",
     .example = "1500",
     .doc = "RL: mean generated response tokens",
     .set = SetInt<&Strategy::response_len, 0>,
     .get = GetPositiveInt<&Strategy::response_len>},
    {.key = "max_response_len",
     .kind = FieldKind::kInt,
     .flag = "--max-response-len",
     .rule = ">= 0, or null = seq_len - prompt_len",
     .example = "8192",
     .doc = "RL: response cap (the engine's max_tokens); the longest response sets the rollout",
     .set = SetInt<&Strategy::max_response_len, 0>,
     .get = GetPositiveInt<&Strategy::max_response_len>},
    {.key = "rl_minibatch",
     .kind = FieldKind::kInt,
     .flag = "--rl-minibatch",
     .rule = ">= 0, divides global_batch_size, or null = global_batch_size",
     .example = "32",
     .doc = "RL: prompts per optimizer update (ppo_mini_batch_size); gbs/rl_minibatch updates",
     .set = SetInt<&Strategy::rl_minibatch, 0>,
     .get = GetPositiveInt<&Strategy::rl_minibatch>},
    {.key = "rollout",
     .kind = FieldKind::kText,
     .flag = "--rollout",
     .rule = "colocated, separate",
     .example = "separate",
     .doc = "RL: generation time-shares the training GPUs, or runs on rollout_gpus of its own",
     .set = ff::SetRollout,
     .get = ff::GetRollout,
     .assumed = "colocated: one set of GPUs time-shared by the training and generation engines "
                "(verl hybrid engine, NeMo RL colocated mode)",
     .matters = ff::IsRl},
    {.key = "rollout_gpus",
     .kind = FieldKind::kInt,
     .flag = "--rollout-gpus",
     .rule = ">= 0, a multiple of rollout_tp x rollout_pp, or null = world_size",
     .example = "16",
     .doc = "RL separate rollout: generation GPUs besides the world_size training GPUs",
     .set = SetInt<&Strategy::rollout_gpus, 0>,
     .get = GetPositiveInt<&Strategy::rollout_gpus>},
    {.key = "rollout_tp",
     .kind = FieldKind::kInt,
     .flag = "--rollout-tp",
     .rule = ">= 0, divides the attention heads, or null = the smallest that fits",
     .example = "4",
     .doc = "RL: tensor parallel size of each generation engine",
     .set = SetInt<&Strategy::rollout_tp, 0>,
     .get = GetPositiveInt<&Strategy::rollout_tp>},
    {.key = "rollout_pp",
     .kind = FieldKind::kInt,
     .flag = "--rollout-pp",
     .rule = ">= 1",
     .example = "2",
     .doc = "RL: pipeline parallel size of each generation engine",
     .set = SetInt<&Strategy::rollout_pp, 1>,
     .get = GetInt<&Strategy::rollout_pp>},
    {.key = "async_rollout",
     .kind = FieldKind::kBool,
     .flag = "--async-rollout",
     .rule = "true, false",
     .example = "false",
     .doc = "RL separate rollout: step k+1 generates while step k trains (one-step off-policy)",
     .set = SetBool<&Strategy::async_rollout>,
     .get = GetBool<&Strategy::async_rollout>,
     .assumed = "separate pools overlap generation with training, one step off-policy (NeMo RL "
                "async GRPO, verl one_step_off / fully_async)",
     .matters = ff::IsSeparateRl},
    {.key = "rollout_max_age",
     .kind = FieldKind::kInt,
     .flag = "--rollout-max-age",
     .rule = "in [1, 1024]",
     .example = "8",
     .doc = "RL separate async rollout: steps generation may run ahead of training (NeMo RL "
            "max_trajectory_age_steps); >= 2 streams, the straggler no longer ends the step",
     .set = SetInt<&Strategy::rollout_max_age, 1>,
     .get = GetInt<&Strategy::rollout_max_age>,
     .matters = ff::IsSeparateRl},
    {.key = "rollout_mem_fraction",
     .kind = FieldKind::kNumber,
     .flag = "--rollout-mem-fraction",
     .rule = "(0, 1], or null = 0.6",
     .example = "0.5",
     .doc = "RL: HBM fraction of the generation engine (vLLM gpu_memory_utilization)",
     .set = ff::SetRolloutMemFraction,
     .get = ff::GetRolloutMemFraction},
    {.key = "rollout_eager",
     .kind = FieldKind::kBool,
     .flag = "--rollout-eager",
     .rule = "true, false",
     .example = "true",
     .doc = "RL: the generation engine runs eager (vLLM enforce_eager, no CUDA graphs): each "
            "decode kernel is issued from the host at host_issue_us_per_kernel",
     .set = SetBool<&Strategy::rollout_eager>,
     .get = GetBool<&Strategy::rollout_eager>,
     .matters = ff::IsRl},
    {.key = "kl_reference",
     .kind = FieldKind::kBool,
     .flag = "--kl-reference",
     .rule = "true, false, or null = the stage's (all but dapo)",
     .example = "false",
     .doc = "RL: a reference-policy forward scores every sample (KL penalty)",
     .set = ff::SetKlReference,
     .get = ff::GetKlReference},
    {.key = "rollout_logprobs",
     .kind = FieldKind::kBool,
     .flag = "--rollout-logprobs",
     .rule = "true, false, or null = false",
     .example = "true",
     .doc = "RL: the old policy's log-probs come from the generation engine (verl fully_async "
            "use_rollout_log_probs), no policy forward on the trainer",
     .set = ff::SetRolloutLogprobs,
     .get = ff::GetRolloutLogprobs},
    {.key = "reward_model",
     .kind = FieldKind::kBool,
     .flag = "--reward-model",
     .rule = "true, false, or null = the stage's (ppo, rloo, remax)",
     .example = "true",
     .doc = "RL: a learned reward model (policy-sized) scores every sample; false: rule-based",
     .set = ff::SetRewardModel,
     .get = ff::GetRewardModel},
};

}  // namespace

std::string_view FieldKindName(FieldKind k) {
  switch (k) {
    case FieldKind::kInt:
      return "int";
    case FieldKind::kBool:
      return "bool";
    case FieldKind::kNumber:
      return "number";
    case FieldKind::kText:
      return "string";
  }
  return "?";
}

std::span<const StrategyField> StrategySchema() {
  return kFields;
}

const StrategyField* FindStrategyField(std::string_view key) {
  for (const StrategyField& f : kFields)
    if (f.key == key) return &f;
  return nullptr;
}

}  // namespace trainsim

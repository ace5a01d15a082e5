// Megatron-LM arguments whose meaning depends on others (ReadMegatronArgs): resolved once every
// argument is read, so that the order of the arguments does not matter.
#include <map>
#include <string>

#include "spec/cuda_graphs.h"
#include "spec/field_text.h"
#include "spec/strategy_apply.h"
#include "trainsim/megatron.h"

namespace trainsim::detail {
namespace {

bool Has(const std::map<std::string, std::string>& seen, const char* f) {
  return seen.count(f) > 0;
}
std::string Get(const std::map<std::string, std::string>& seen, const char* f) {
  const auto it = seen.find(f);
  return it == seen.end() ? std::string() : it->second;
}

// Full recompute: --recompute-method uniform (or the 2021 spelling, or --checkpoint-activations
// alone) recomputes every layer; --activations-checkpoint-method alone turned it on.
// --recompute-activations (deprecated) sets the granularity to selective in Megatron-LM's
// validate_args, whatever --recompute-granularity says and whatever the order. Method and layer
// count act only with full granularity (Megatron-LM refuses a method with selective and ignores
// both without recompute).
void ResolveRecompute(const std::map<std::string, std::string>& seen, Strategy& s,
                      MegatronReading& out) {
  const std::string method = Has(seen, "--recompute-method")
                                 ? Get(seen, "--recompute-method")
                                 : Get(seen, "--activations-checkpoint-method");
  if (Has(seen, "--activations-checkpoint-method") && !Has(seen, "--recompute-granularity"))
    s.recompute = Recompute::kFull;
  if (Has(seen, "--recompute-activations")) {
    s.recompute = Recompute::kSelective;
    const std::string g = Get(seen, "--recompute-granularity");
    if (!g.empty() && g != "selective")
      out.ignored.push_back({"--recompute-granularity", g,
                             "overridden: Megatron-LM sets selective when "
                             "--recompute-activations is given"});
  }
  if (s.recompute == Recompute::kFull && method != "block") s.recompute_layers = -1;
  // Megatron-Core's TransformerConfig refuses full granularity without a method and a layer
  // count ("recompute_method must be \"block\" or \"uniform\"", "recompute_num_layers must
  // be between 1 and num_layers_per_pipeline_rank"); the 2021 --checkpoint-activations had
  // both defaults. Read as every layer recomputed, and said.
  const bool old_style =
      Has(seen, "--checkpoint-activations") || Has(seen, "--activations-checkpoint-method");
  if (s.recompute == Recompute::kFull && !old_style &&
      (method.empty() || (method == "block" && !Has(seen, "--recompute-num-layers"))))
    out.assumed.push_back(
        {"recompute_layer_num", "every layer",
         "--recompute-granularity full without " +
             std::string(method.empty() ? "--recompute-method" : "--recompute-num-layers") +
             " (Megatron-Core refuses it): read as every layer recomputed"});
  if (s.recompute != Recompute::kFull)
    for (const char* f : {"--recompute-method", "--recompute-num-layers"})
      if (Has(seen, f))
        out.ignored.push_back({f, Get(seen, f), "acts only with --recompute-granularity full"});
}

// Megatron-LM's validate_args refuses --fp16 with --bf16 (one training precision).
Status CheckPrecisionFlags(const std::map<std::string, std::string>& seen) {
  if (Has(seen, "--fp16") && Has(seen, "--bf16"))
    return Status::Invalid("--bf16", "conflicts with --fp16: Megatron-LM takes one of them");
  return Status::Ok();
}

// The precision: --fp8-format turns FP8 on (the recipe picks MXFP8), whatever the order of the
// arguments; a recipe alone does not (Megatron-LM needs the format).
void ResolveDType(const std::map<std::string, std::string>& seen, const Strategy& before,
                  Strategy& s) {
  if (Has(seen, "--fp4-format")) return;
  if (Has(seen, "--fp8-format")) {
    s.dtype = Get(seen, "--fp8-recipe") == "mxfp8" ? DType::kMxfp8 : DType::kFp8;
  } else if (Has(seen, "--fp8-recipe")) {
    s.dtype = Has(seen, "--fp16")   ? DType::kFp16
              : Has(seen, "--bf16") ? DType::kBf16
                                    : before.dtype;
  }
}

// Megatron-FSDP shards by --data-parallel-sharding-strategy (default no_shard); torch FSDP2
// shards everything; without FSDP the argument is not used (the distributed optimizer decides).
void ResolveSharding(const std::map<std::string, std::string>& seen, Strategy& s,
                     MegatronReading& out) {
  const bool mfsdp = Has(seen, "--use-megatron-fsdp") || Has(seen, "--use-custom-fsdp");
  const bool dist_opt = Has(seen, "--use-distributed-optimizer");
  const std::string level = Get(seen, "--data-parallel-sharding-strategy");
  const int zero = level == "optim"                ? 1
                   : level == "optim_grads"        ? 2
                   : level == "optim_grads_params" ? 3
                                                   : 0;
  if (Has(seen, "--use-torch-fsdp2")) {
    s.fsdp = true;
    s.zero = 3;
  } else if (mfsdp) {
    s.zero = std::max(zero, dist_opt && level.empty() ? 1 : 0);
    s.fsdp = s.zero >= 2;  // fsdp below ZeRO-2 would be normalised to ZeRO-3
  } else if (!level.empty()) {
    s.zero = dist_opt ? 1 : 0;
    out.ignored.push_back({"--data-parallel-sharding-strategy", level,
                           "applies to Megatron-FSDP only (--use-megatron-fsdp)"});
  }
}

// --exp-avg-dtype & co. act only with --use-precision-aware-optimizer.
void ResolvePrecisionAware(const std::map<std::string, std::string>& seen, const Strategy& before,
                           Strategy& s, MegatronReading& out) {
  if (Has(seen, "--use-precision-aware-optimizer")) return;
  for (const char* f : {"--main-params-dtype", "--exp-avg-dtype", "--exp-avg-sq-dtype"})
    if (Has(seen, f))
      out.ignored.push_back({f, Get(seen, f), "acts only with --use-precision-aware-optimizer"});
  s.optimizer_state_bytes = before.optimizer_state_bytes;
}

// --pipeline-model-parallel-layout excludes the other ways to split the pipeline: Megatron-LM's
// validate_args ("No more than one of the following arguments can be set at the same time")
// and TransformerConfig ("pipeline_model_parallel_layout cannot be set with other pipeline
// layout arguments").
Status CheckLayoutConflicts(const std::map<std::string, std::string>& seen) {
  if (!Has(seen, kPipelineLayoutFlag)) return Status::Ok();
  for (const char* f :
       {"--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank",
        "--virtual-pipeline-model-parallel-size", "--decoder-first-pipeline-num-layers",
        "--decoder-last-pipeline-num-layers", "--account-for-embedding-in-pipeline-split",
        "--account-for-loss-in-pipeline-split"})
    if (Has(seen, f))
      return Status::Invalid(kPipelineLayoutFlag, std::string("cannot be set with ") + f +
                                                      " (Megatron-LM takes one way to split "
                                                      "the pipeline)");
  return Status::Ok();
}

// CUDA graphs (megatron/training/arguments.py): --cuda-graph-impl none|local|transformer_engine
// (default none); the deprecated --enable-cuda-graph means local, --external-cuda-graph means
// transformer_engine. --cuda-graph-scope (newer --cuda-graph-modules) picks what is captured:
// absent, the whole transformer layer; full_iteration, the whole step (local only); attn, mlp,
// moe, moe_router, moe_preprocess, mamba, parts of a layer. Kernels replayed from a graph cost
// no host launch each, so the host issue floor (docs/MODEL.md, "Launch floor and host issue")
// is 0. Partial scopes are costed as full capture, and the graphs' static buffers are not
// counted in memory; both are said in `assumed`.
void ResolveCudaGraphs(const std::map<std::string, std::string>& seen, Strategy& s,
                       MegatronReading& out) {
  std::string impl = Get(seen, "--cuda-graph-impl");
  if (impl.empty() && Has(seen, "--enable-cuda-graph")) impl = "local";
  if (impl.empty() && Has(seen, "--external-cuda-graph")) impl = "transformer_engine";
  const char* scope_flag =
      Has(seen, "--cuda-graph-modules") ? "--cuda-graph-modules" : "--cuda-graph-scope";
  const std::string scope = Get(seen, scope_flag);
  if (impl.empty() || impl == "none") {
    if (!scope.empty())
      out.ignored.push_back({scope_flag, scope, "no effect without --cuda-graph-impl"});
    return;
  }
  const bool whole = scope.empty() || scope == "full" || scope == "full_iteration";
  out.assumed.push_back(
      {"host_issue_us_per_kernel", "0",
       ApplyCudaGraphs(s, "--cuda-graph-impl " + impl + (scope.empty() ? "" : ", scope " + scope),
                       whole)});
}

// CPU activation offloading (Megatron-Core TransformerConfig.cpu_offloading): the activations of
// cpu_offloading_num_layers layers (default 0: none) go to host memory during the forward and
// come back for the backward. __post_init__ requires 0 <= N < num_layers and refuses it with
// pipeline parallelism and with activation recompute. exec.offload_activations keeps about two
// layers' activations in HBM and offloads the rest (memory/memory.cc), which is N >= num_layers
// - 2; a smaller N (some layers keep their activations) is not representable and is listed.
Status ResolveCpuOffload(const std::map<std::string, std::string>& seen, Strategy& s,
                         MegatronReading& out) {
  const char* kFlag = "--cpu-offloading";
  const char* kLayers = "--cpu-offloading-num-layers";
  // validate_args: "if args.cpu_offloading_num_layers > 0: args.cpu_offloading = True"
  // (NVIDIA/Megatron-LM @ 000c4ac2): the layer count alone turns offloading on.
  long long given_layers = 0;
  const bool implied = !Has(seen, kFlag) && Has(seen, kLayers) &&
                       ParseIntText(Get(seen, kLayers), 0, 1LL << 30, given_layers).ok() &&
                       given_layers > 0;
  if (!Has(seen, kFlag) && !implied) return Status::Ok();
  const char* named = implied ? kLayers : kFlag;
  if (s.pp > 1)
    return Status::Invalid(named,
                           "Megatron-Core refuses CPU offloading with pipeline "
                           "parallelism (pipeline-model-parallel-size " +
                               std::to_string(s.pp) + ")");
  if (s.recompute != Recompute::kNone)
    return Status::Invalid(named, "Megatron-Core refuses CPU offloading with activation recompute");
  int n = 0, layers = 0;
  if (Has(seen, kLayers))
    if (Status st = ParseIntText(Get(seen, kLayers), 0, n); !st.ok())
      return Status::Invalid(kLayers, st.message());
  if (Has(seen, "--num-layers"))
    if (Status st = ParseIntText(Get(seen, "--num-layers"), 1, layers); !st.ok()) layers = 0;
  if (n == 0) {
    out.ignored.push_back({kFlag, "", "offloads no layer without --cpu-offloading-num-layers"});
  } else if (layers == 0) {
    out.ignored.push_back(
        {kLayers, std::to_string(n), "needs --num-layers to tell how many layers it offloads"});
  } else if (n >= layers) {
    return Status::Invalid(kLayers, std::to_string(n) + " must be < --num-layers " +
                                        std::to_string(layers) + " (Megatron-Core)");
  } else if (n < layers - 2) {
    out.ignored.push_back({kLayers, std::to_string(n),
                           "offloading " + std::to_string(n) + " of " + std::to_string(layers) +
                               " layers is not modelled: trainsim offloads all but about two"});
  } else {
    s.exec.offload_activations = true;
    out.assumed.push_back({"offload_activations", "true",
                           "--cpu-offloading-num-layers " + std::to_string(n) + " of " +
                               std::to_string(layers) +
                               ": activations of all but about two layers in host memory"});
  }
  return Status::Ok();
}

// Fine-grained activation offloading (Megatron-LM --fine-grained-activation-offloading with
// --offload-modules, docs/source/api-guide/fine_grained_activation_offloading.md): the module
// list acts only with the switch; the switch alone offloads nothing.
void ResolveFineGrainedOffload(const std::map<std::string, std::string>& seen,
                               const Strategy& before, Strategy& s, MegatronReading& out) {
  const char* kFlag = "--fine-grained-activation-offloading";
  const char* kModules = "--offload-modules";
  if (Has(seen, kModules) && !Has(seen, kFlag)) {
    s.exec.offload_modules = before.exec.offload_modules;
    out.ignored.push_back({kModules, Get(seen, kModules), std::string("acts only with ") + kFlag});
  } else if (Has(seen, kFlag) && !Has(seen, kModules)) {
    out.ignored.push_back({kFlag, "", "offloads no module without --offload-modules"});
  }
}

// Core attention: Megatron-LM's local transformer implementation (and the legacy models) run
// DotProductAttention, the unfused matmul-softmax-matmul with the scores materialised, unless
// --use-flash-attn; the default transformer_engine implementation runs TE's fused attention.
void ResolveAttention(const std::map<std::string, std::string>& seen, Strategy& s,
                      MegatronReading& out) {
  const bool local = Get(seen, "--transformer-impl") == "local" || Has(seen, "--use-legacy-models");
  if (!local || Has(seen, "--use-flash-attn")) return;
  s.flash_attention = false;
  out.assumed.push_back({"use_flash_sdp", "false",
                         "--transformer-impl local / --use-legacy-models without --use-flash-attn: "
                         "Megatron-LM's unfused core attention (the scores are materialised)"});
}

// Combinations Megatron-LM's validate_args refuses (megatron/training/arguments.py, NVIDIA/
// Megatron-LM @ 000c4ac2): the job would not start, so neither is it costed.
Status CheckRefusedCombinations(const std::map<std::string, std::string>& seen, const Strategy& s) {
  const bool sharded = Has(seen, "--use-distributed-optimizer") ||
                       Has(seen, "--use-megatron-fsdp") || Has(seen, "--use-custom-fsdp");
  if (Has(seen, "--overlap-param-gather") && !sharded)
    return Status::Invalid("--overlap-param-gather",
                           "needs --use-distributed-optimizer or --use-megatron-fsdp "
                           "(Megatron-LM: 'only supported with distributed optimizer or "
                           "megatron fsdp')");
  if (Has(seen, "--fp8-param-gather") && !sharded && !Has(seen, "--use-torch-fsdp2"))
    return Status::Invalid("--fp8-param-gather",
                           "needs --use-distributed-optimizer, --use-torch-fsdp2 or "
                           "--use-megatron-fsdp (Megatron-LM's rule)");
  // validate_args turns sequence parallelism off at tensor-parallel size 1, then asserts it.
  if (Has(seen, "--tp-comm-overlap") && !(s.tp > 1 && Has(seen, "--sequence-parallel")))
    return Status::Invalid("--tp-comm-overlap",
                           "needs --sequence-parallel with --tensor-model-parallel-size > 1 "
                           "(Megatron-LM: 'Tensor parallel communication/GEMM overlap can happen "
                           "only when sequence parallelism is enabled')");
  return Status::Ok();
}

// Arguments that act only with another (megatron/training/arguments.py, NVIDIA/Megatron-LM @
// 000c4ac2): --num-query-groups only with --group-query-attention
// (core_transformer_config_from_args sets num_query_groups None otherwise: every head its own
// K/V); --moe-shared-expert-overlap only with shared experts ('Only effective when
// moe-shared-expert-intermediate-size is set'), so it hides nothing of the dispatch.
void NoteInertArguments(const std::map<std::string, std::string>& seen, const Strategy& before,
                        Strategy& s, MegatronReading& out) {
  if (Has(seen, "--num-query-groups") && !Has(seen, "--group-query-attention"))
    out.ignored.push_back({"--num-query-groups", Get(seen, "--num-query-groups"),
                           "acts only with --group-query-attention: every attention head has "
                           "its own keys and values"});
  if (Has(seen, "--moe-shared-expert-overlap") &&
      !Has(seen, "--moe-shared-expert-intermediate-size")) {
    out.ignored.push_back({"--moe-shared-expert-overlap", "",
                           "acts only with shared experts "
                           "(--moe-shared-expert-intermediate-size)"});
    if (!Has(seen, "--overlap-moe-expert-parallel-comm"))
      s.ep_comm_overlap = before.ep_comm_overlap;
  }
  // The token dispatcher: Megatron-LM's default is allgather (the tokens gathered over the
  // EP x TP group, each rank keeping those of its experts); trainsim costs the all-to-all.
  const std::string dispatcher = Has(seen, "--moe-token-dispatcher-type")
                                     ? Get(seen, "--moe-token-dispatcher-type")
                                     : std::string("allgather");
  if (Has(seen, "--num-experts") && Get(seen, "--num-experts") != "0" && s.ep > 1 &&
      dispatcher == "allgather")
    out.ignored.push_back(
        {"--moe-token-dispatcher-type",
         Has(seen, "--moe-token-dispatcher-type") ? dispatcher : "allgather (Megatron's default)",
         "the all-gather dispatcher is costed as the all-to-all one (tokens sent to their "
         "experts only)"});
}

// --cp-comm-type takes one type for every layer or one per layer (nargs='+'): p2p, a2a,
// allgather, a2a+p2p. Mixed lists and the hierarchical type are costed as one kind.
void NoteCpCommType(const std::map<std::string, std::string>& seen, const Strategy& s,
                    MegatronReading& out) {
  const std::string cp = Get(seen, "--cp-comm-type");
  if (cp.find("a2a+p2p") != std::string::npos)
    out.ignored.push_back({"--cp-comm-type", cp,
                           "hierarchical context parallelism (a2a inside, p2p across) is "
                           "modelled as the p2p ring"});
  else if (cp.find(',') != std::string::npos && !s.cp_a2a && cp.find("a2a") != std::string::npos)
    out.ignored.push_back({"--cp-comm-type", cp,
                           "per-layer communication types are costed as the p2p ring for every "
                           "layer"});
}

}  // namespace

Status ResolveMegatronArgs(const std::map<std::string, std::string>& seen, const Strategy& before,
                           Strategy& s, MegatronReading& out) {
  if (Status st = CheckPrecisionFlags(seen); !st.ok()) return st;
  if (Status st = CheckLayoutConflicts(seen); !st.ok()) return st;
  if (Status st = CheckRefusedCombinations(seen, s); !st.ok()) return st;
  ResolveRecompute(seen, s, out);
  out.split_embedding = Has(seen, "--account-for-embedding-in-pipeline-split");
  out.split_loss = Has(seen, "--account-for-loss-in-pipeline-split");
  if ((out.split_embedding || out.split_loss) && s.pp > 1 &&
      !Has(seen, "--decoder-first-pipeline-num-layers") &&
      !Has(seen, "--decoder-last-pipeline-num-layers"))
    out.assumed.push_back(
        {"pipeline_model_parallel_layout", "Megatron-LM's split",
         std::string("--account-for-") + (out.split_embedding ? "embedding" : "loss") +
             (out.split_embedding && out.split_loss ? "/loss" : "") +
             "-in-pipeline-split: (num_layers + " +
             std::to_string(out.split_embedding + out.split_loss) +
             ") / (pp x vpp) layers per chunk, the embedding / loss taking one in the first / "
             "last; written as the layout"});
  ResolveDType(seen, before, s);
  ResolveSharding(seen, s, out);
  ResolvePrecisionAware(seen, before, s, out);
  ResolveCudaGraphs(seen, s, out);
  if (Status st = ResolveCpuOffload(seen, s, out); !st.ok()) return st;
  ResolveFineGrainedOffload(seen, before, s, out);
  ResolveAttention(seen, s, out);
  // bf16 implies fp32 accumulation; --fp16 clears it, whatever the order of the arguments.
  if (Has(seen, "--accumulate-allreduce-grads-in-fp32")) s.main_grad_fp32 = true;
  if (Has(seen, "--grad-reduce-in-bf16")) s.main_grad_fp32 = false;
  NoteCpCommType(seen, s, out);
  NoteInertArguments(seen, before, s, out);
  // Without --global-batch-size Megatron-LM takes one micro-batch per DP rank
  // (megatron/training/arguments.py: global_batch_size = micro_batch_size * data_parallel_size).
  if (Has(seen, "--global-batch-size")) {
    ApplyBatchSource(s, true, false);
  } else {
    s.gbs = 0;
    s.micro_batch_num = 1;
  }
  return Status::Ok();
}

}  // namespace trainsim::detail

// torchtitan training TOML (--torchtitan-config), read with toml++.
//
// Source: pytorch/torchtitan torchtitan/config/job_config.py (Parallelism, Training,
// ActivationCheckpoint, Float8, Compile, Model dataclasses and their defaults:
// data_parallel_replicate_degree 1, data_parallel_shard_degree -1 = the GPUs left over,
// tensor/pipeline/context/expert degrees 1, pipeline_parallel_schedule "1F1B",
// pipeline_parallel_microbatch_size 1, local_batch_size 8, global_batch_size -1 = local x dp
// (larger: gradient accumulation), seq_len 2048, mixed_precision_param "bfloat16",
// activation_checkpoint.mode "selective" with selective_ac_option "2") and its
// torchtitan/models/*/__init__.py flavor tables. Older releases spelled local_batch_size
// `batch_size` and kept the parallel degrees under [training]; both are read.
#include <toml++/toml.h>

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "trainsim/formats.h"
#include "trainsim/limits.h"
#include "trainsim/model.h"
#include "trainsim/presets.h"

namespace trainsim {
namespace {

// torchtitan (name, flavor) -> trainsim model preset, for flavors with the published shapes
// (models/llama3: Llama 3.1 8B/70B/405B; models/qwen3; models/deepseek_v3 671B = DeepSeek-V3).
struct Flavor {
  const char* name;
  const char* flavor;
  const char* preset;
};
constexpr Flavor kFlavors[] = {
    {"llama3", "8B", "llama3.1-8b"},        {"llama3", "70B", "llama3.1-70b"},
    {"llama3", "405B", "llama3.1-405b"},    {"qwen3", "8B", "qwen3-8b"},
    {"qwen3", "30B-A3B", "qwen3-30b-a3b"},  {"qwen3", "235B-A22B", "qwen3-235b-a22b"},
    {"deepseek_v3", "671B", "deepseek-v3"},
};

// Sections and keys that do not change one step's time or memory.
const std::set<std::string> kHarmlessSections = {
    "job",        "profiling",       "metrics",           "checkpoint",   "comm", "lr_scheduler",
    "validation", "fault_tolerance", "memory_estimation", "experimental", "debug"};
const std::set<std::string> kRead = {
    "parallelism.data_parallel_replicate_degree",
    "parallelism.data_parallel_shard_degree",
    "parallelism.tensor_parallel_degree",
    "parallelism.pipeline_parallel_degree",
    "parallelism.pipeline_parallel_schedule",
    "parallelism.pipeline_parallel_microbatch_size",
    "parallelism.pipeline_parallel_microbatches",
    "parallelism.pipeline_parallel_layers_per_stage",
    "parallelism.context_parallel_degree",
    "parallelism.expert_parallel_degree",
    "parallelism.expert_tensor_parallel_degree",
    "parallelism.enable_async_tensor_parallel",
    "parallelism.disable_loss_parallel",
    "parallelism.enable_compiled_autograd",
    "parallelism.fsdp_reshard_after_forward",
    "parallelism.expert_parallel_comm_backend",
    "training.local_batch_size",
    "training.batch_size",
    "training.global_batch_size",
    "training.seq_len",
    "training.mixed_precision_param",
    "training.mixed_precision_reduce",
    "training.dtype",
    "training.max_norm",
    "training.steps",
    "training.warmup_steps",
    "training.dataset",
    "training.dataset_path",
    "training.seed",
    "training.deterministic",
    "training.gc_freq",
    "training.data_parallel_replicate_degree",
    "training.data_parallel_shard_degree",
    "training.tensor_parallel_degree",
    "training.pipeline_parallel_degree",
    "training.context_parallel_degree",
    "training.enable_float8_linear",
    "activation_checkpoint.mode",
    "activation_checkpoint.selective_ac_option",
    "activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns",
    "activation_checkpoint.memory_budget",
    "activation_checkpoint.early_stop",
    "activation_checkpoint.preserve_rng_state",
    "model.name",
    "model.flavor",
    "model.tokenizer_path",
    "model.hf_assets_path",
    "model.converters",
    "model.print_after_conversion",
    "model.norm_type",
    "float8.enable_float8_linear",
    "float8.recipe_name",
    "float8.filter_fqns",
    "float8.emulate",
    "float8.enable_fsdp_float8_all_gather",
    "quantize.linear.float8.enable_fsdp_float8_all_gather",
    "quantize.dense.float8.enable_fsdp_float8_all_gather",
    "quantize.linear.float8.recipe_name",
    "quantize.dense.float8.recipe_name",
    "float8.precompute_float8_dynamic_scale_for_fsdp",
    "mx.recipe_name",
    "mx.filter_fqns",
    "optimizer.name",
    "optimizer.lr",
    "optimizer.eps",
    "optimizer.beta1",
    "optimizer.beta2",
    "optimizer.weight_decay",
    "optimizer.implementation",
    "optimizer.early_step_in_backward"};

struct Ctx {
  const toml::table& t;
  const std::string& origin;
  FrameworkConfig& out;
  Status status = Status::Ok();

  void Fail(const std::string& key, const std::string& rule) {
    if (status.ok()) status = Status::Invalid(key, rule).WithContext(origin);
  }
  // [section] key, or the older [training] / [experimental] spelling of a [parallelism] key.
  const toml::node* Find(const char* section, const char* key) const {
    if (const toml::node* n = t.at_path(std::string(section) + "." + key).node()) return n;
    if (std::string(section) != "parallelism") return nullptr;
    if (const toml::node* n = t.at_path(std::string("training.") + key).node()) return n;
    // 2024 releases kept pipeline and context parallelism under [experimental].
    return t.at_path(std::string("experimental.") + key).node();
  }
  std::optional<long long> Int(const char* section, const char* key) {
    const toml::node* n = Find(section, key);
    if (!n) return std::nullopt;
    // Integer nodes only: value<int64_t>() would also convert a float such as 81e92, which
    // overflows (undefined behaviour; found by the torchtitan fuzz target).
    if (auto v = n->value_exact<int64_t>()) return *v;
    Fail(std::string(section) + "." + key, "must be an integer");
    return std::nullopt;
  }
  std::optional<bool> Bool(const char* section, const char* key) {
    const toml::node* n = Find(section, key);
    if (!n) return std::nullopt;
    if (auto v = n->value<bool>()) return *v;
    Fail(std::string(section) + "." + key, "must be true or false");
    return std::nullopt;
  }
  std::optional<std::string> Str(const char* section, const char* key) {
    const toml::node* n = Find(section, key);
    if (!n) return std::nullopt;
    if (auto v = n->value<std::string>()) return *v;
    Fail(std::string(section) + "." + key, "must be a string");
    return std::nullopt;
  }
  void Set(const char* key, long long v) { out.settings[key] = std::to_string(v); }
};

// ceil(a / b) for a >= 0 and b >= 1, without a + b - 1, which overflows for a b near 2^63 (ASan +
// UBSan, fuzz test: selective_ac_option and pipeline_parallel_degree of 2^63 - 1).
long long CeilDiv(long long a, long long b) {
  return a / b + (a % b != 0);
}

// False (and c.status set) when the key is not an integer >= 1.
bool Positive(Ctx& c, const char* section, const char* key, long long& v, long long def) {
  v = c.Int(section, key).value_or(def);
  if (c.status.ok() && v < 1)
    c.Fail(std::string(section) + "." + key, "must be >= 1, got " + std::to_string(v));
  return c.status.ok();
}

// The GPU count of degrees that are each >= 1, multiplied in order; false (and c.status set,
// naming the degree that crossed it) past limits::kMaxWorldSize, so no product overflows.
bool GpuProduct(Ctx& c, std::initializer_list<std::pair<const char*, long long>> degrees,
                long long& out) {
  out = 1;
  for (const auto& [key, d] : degrees) {
    if (d > limits::kMaxWorldSize / out) {
      c.Fail(std::string("parallelism.") + key, "the parallel degrees ask for more than " +
                                                    std::to_string(limits::kMaxWorldSize) +
                                                    " GPUs (world_size limit)");
      return false;
    }
    out *= d;
  }
  return true;
}

// Data parallelism: FSDP over data_parallel_shard_degree, DDP over the replicate degree; both
// above 1 is HSDP (torchtitan parallel_dims: mesh dims dp_replicate x dp_shard, FSDP2
// fully_shard over the 2-D mesh): parameters, gradients and optimizer states sharded within
// the dp_shard x cp ranks of a replica, gradients all-reduced across the replicas. trainsim's
// layout for it is zero 3 with dist_opt_instances = the replicate degree.
void ReadDataParallel(Ctx& c, long long model_parallel) {
  const long long rep = c.Int("parallelism", "data_parallel_replicate_degree").value_or(1);
  const long long shard = c.Int("parallelism", "data_parallel_shard_degree").value_or(-1);
  if (!c.status.ok()) return;
  if (rep < 1) return c.Fail("parallelism.data_parallel_replicate_degree", "must be >= 1");
  if (shard == 0 || shard < -1)
    return c.Fail("parallelism.data_parallel_shard_degree", "must be -1 (the rest) or >= 1");
  long long world = 0;  // model_parallel (tp·pp·cp) is already <= kMaxWorldSize
  if (!GpuProduct(c,
                  {{"tensor_parallel_degree", model_parallel},
                   {"data_parallel_replicate_degree", rep},
                   {"data_parallel_shard_degree", shard > 0 ? shard : 1}},
                  world))
    return;
  if (rep > 1 && shard == 1) {  // DDP: replicated parameters, gradients all-reduced
    c.out.settings["fsdp"] = "false";
    c.Set("zero_state", 0);
    c.Set("world_size", world);
    return;
  }
  if (rep > 1) c.Set("dist_opt_instances", rep);           // HSDP
  c.out.settings["fsdp"] = shard == 1 ? "false" : "true";  // FSDP2 fully_shard
  if (shard == 1) c.Set("zero_state", 0);
  if (shard > 0) {
    c.Set("world_size", world);
  } else {
    c.out.assumed.push_back({"world_size", "--world-size",
                             "data_parallel_shard_degree -1 takes the GPUs torchrun starts, "
                             "which the TOML does not state"});
  }
}

// parallelism.fsdp_reshard_after_forward (torchtitan parallelize.py apply_fsdp): "always"
// reshards every block after its forward (FSDP, ZeRO-3); "never" keeps the gathered parameters
// until the backward (ZeRO-2's memory: FSDP1's SHARD_GRAD_OP, as the Accelerate reader maps
// FSDP2's reshard false); "default" reshards unless pipeline parallelism is on (then never, to
// avoid an all-gather per micro-batch). With PP, torch.distributed.pipelining's stage also
// turns FSDP's requires_gradient_sync on only for the last backward of the step, so gradients
// accumulate unsharded (in the fp32 reduce dtype: FSDPParam.unsharded_accumulated_grad) and are
// reduce-scattered once: gathered weights, unsharded gradients, sharded optimizer states and
// one all-gather and one reduce-scatter per step are ZeRO-1's. The last block's skipped
// reshard is not modelled.
void ReadReshard(Ctx& c, long long pp) {
  const char* key = "parallelism.fsdp_reshard_after_forward";
  const std::string policy = c.Str("parallelism", "fsdp_reshard_after_forward").value_or("default");
  if (policy != "default" && policy != "always" && policy != "never")
    return c.Fail(key, "must be default, always or never, got '" + policy + "'");
  const auto fsdp = c.out.settings.find("fsdp");
  if (!c.status.ok() || fsdp == c.out.settings.end() || fsdp->second != "true") return;
  if (pp > 1 && policy != "always") {
    c.out.settings["fsdp"] = "false";
    c.Set("zero_state", 1);
    c.out.assumed.push_back({key, policy,
                             "with pipeline parallelism torchtitan keeps the gathered "
                             "parameters from forward to backward and the gradients unsharded "
                             "until the last micro-batch: costed as ZeRO-1"});
  } else if (policy == "never") {
    c.out.settings["fsdp"] = "false";
    c.Set("zero_state", 2);
  }
}

void ReadSchedule(Ctx& c, long long pp) {
  const std::string sched = c.Str("parallelism", "pipeline_parallel_schedule").value_or("1F1B");
  if (pp <= 1) return;
  const char* key = "parallelism.pipeline_parallel_schedule";
  if (sched == "1F1B") {
    c.out.settings["pipeline_schedule"] = "1f1b";
  } else if (sched == "GPipe") {
    c.out.settings["pipeline_schedule"] = "gpipe";
  } else if (sched == "Interleaved1F1B" || sched == "LoopedBFS") {
    c.out.settings["pipeline_schedule"] = "interleaved_1f1b";
    // torchtitan's multi-stage schedules default to 2 stages per rank when
    // pipeline_parallel_layers_per_stage is not given (pipeline_module_split).
    if (!c.out.settings.count("interleaving_size")) c.Set("interleaving_size", 2);
  } else if (sched == "DualPipeV") {
    c.out.settings["pipeline_schedule"] = "dualpipe";
  } else {
    c.Fail(key, "schedule '" + sched +
                    "' is not represented (1F1B, GPipe, Interleaved1F1B, LoopedBFS, DualPipeV)");
  }
}

void ReadParallelism(Ctx& c) {
  long long tp = 1, pp = 1, cp = 1, ep = 1;
  for (auto [key, v] :
       {std::pair{"tensor_parallel_degree", &tp}, std::pair{"pipeline_parallel_degree", &pp},
        std::pair{"context_parallel_degree", &cp}, std::pair{"expert_parallel_degree", &ep}})
    if (!Positive(c, "parallelism", key, *v, 1)) return;
  c.Set("tp_size", tp);
  c.Set("pp_size", pp);
  c.Set("cp_size", cp);
  c.Set("ep_size", ep);
  if (auto etp = c.Int("parallelism", "expert_tensor_parallel_degree")) c.Set("etp_size", *etp);
  // expert_parallel_comm_backend "standard" (all-to-all), "deepep" (NVLink8), "hybridep"
  // (NVL72), torchtitan/distributed/deepep: DeepEP dispatches each token once per node and
  // fans out over NVLink, trainsim's moe_dedup_dispatch.
  const std::string ep_backend =
      c.Str("parallelism", "expert_parallel_comm_backend").value_or("standard");
  if (ep_backend == "deepep" || ep_backend == "hybridep") {
    c.out.settings["moe_dedup_dispatch"] = "true";
  } else if (ep_backend != "standard") {
    c.out.ignored.push_back({"parallelism.expert_parallel_comm_backend", ep_backend,
                             "costed as the standard all-to-all"});
  }
  c.out.settings["enable_sequence_parallel"] = "true";  // torchtitan's TP plan shards norms
  if (c.Bool("parallelism", "enable_async_tensor_parallel").value_or(false))
    c.out.settings["tp_comm_overlap"] = "true";
  long long model_parallel = 0;
  if (!GpuProduct(c,
                  {{"tensor_parallel_degree", tp},
                   {"pipeline_parallel_degree", pp},
                   {"context_parallel_degree", cp}},
                  model_parallel))
    return;
  ReadDataParallel(c, model_parallel);
  ReadReshard(c, pp);
  if (auto lps = c.Int("parallelism", "pipeline_parallel_layers_per_stage"); lps && *lps < 1)
    c.Fail("parallelism.pipeline_parallel_layers_per_stage", "must be >= 1");
  ReadSchedule(c, pp);
}

// training.mixed_precision_reduce: FSDP2's MixedPrecisionPolicy reduce_dtype, the dtype of
// the gradient reduce-scatter (job_config.py: "float32" default, "bfloat16" in later releases;
// it "only takes effect when data_parallel_shard_degree > 1"). bfloat16 halves the reduce bytes,
// read as Megatron-LM's --grad-reduce-in-bf16 is (use_fp32_accum_grad false). FSDP2 casts the
// reduced shard back to the fp32 sharded parameter's dtype, a 1/dp-sized difference in memory
// that this reading leaves out.
void ReadReduceDtype(Ctx& c) {
  const std::string reduce = c.Str("training", "mixed_precision_reduce").value_or("float32");
  if (reduce != "float32" && reduce != "bfloat16")
    return c.Fail("training.mixed_precision_reduce",
                  "must be float32 or bfloat16, got '" + reduce + "'");
  if (reduce == "float32") return;
  const long long shard = c.Int("parallelism", "data_parallel_shard_degree").value_or(-1);
  const long long cp = c.Int("parallelism", "context_parallel_degree").value_or(1);
  if (shard == 1 && cp == 1) {
    c.out.ignored.push_back({"training.mixed_precision_reduce", reduce,
                             "takes effect only under FSDP (data_parallel_shard_degree > 1)"});
    return;
  }
  c.out.settings["use_fp32_accum_grad"] = "false";
}

void ReadTraining(Ctx& c) {
  long long local = 8, seq = 2048;  // job_config.py defaults
  const char* local_key =
      c.Find("training", "local_batch_size") ? "local_batch_size" : "batch_size";
  if (!Positive(c, "training", local_key, local, 8)) return;
  if (!Positive(c, "training", "seq_len", seq, 2048)) return;
  c.Set("seq_len", seq);
  long long pp = 1, pp_mbs = 1;
  if (!Positive(c, "parallelism", "pipeline_parallel_degree", pp, 1) ||
      !Positive(c, "parallelism", "pipeline_parallel_microbatch_size", pp_mbs, 1))
    return;
  // Releases before 2025 named the micro-batch count instead ([experimental] or [parallelism]
  // pipeline_parallel_microbatches; build_pipeline_schedule: null = pp x local stages). Given,
  // it sets the micro-batch size; absent, today's pipeline_parallel_microbatch_size rules.
  if (c.Find("parallelism", "pipeline_parallel_microbatches")) {
    long long n = 1;
    if (!Positive(c, "parallelism", "pipeline_parallel_microbatches", n, 1)) return;
    if (local % n != 0)
      return c.Fail("parallelism.pipeline_parallel_microbatches",
                    "must divide training.local_batch_size (" + std::to_string(local) + ")");
    pp_mbs = local / n;
  } else if (pp > 1 && !c.Find("parallelism", "pipeline_parallel_microbatch_size") &&
             c.t.at_path("experimental.pipeline_parallel_degree").node()) {
    // A 2024-layout file ([experimental] pipeline_parallel_degree) runs that code's default:
    // as many micro-batches as pipeline stages in all (pp x stages per rank).
    const auto v = c.out.settings.find("interleaving_size");
    const long long n = pp * (v == c.out.settings.end() ? 1 : std::stoll(v->second));
    if (local % n == 0) {
      pp_mbs = local / n;
      c.out.assumed.push_back({"micro_batch_size", std::to_string(pp_mbs),
                               "[experimental] pipeline_parallel_microbatches null: 2024 "
                               "torchtitan split the local batch into pp x stages-per-rank = " +
                                   std::to_string(n) + " micro-batches"});
    }
  }
  // Without PP the local batch is one forward/backward; with PP it is split into micro-batches.
  const long long mbs = pp > 1 ? pp_mbs : local;
  if (local % mbs != 0)
    return c.Fail("parallelism.pipeline_parallel_microbatch_size",
                  "must divide training.local_batch_size (" + std::to_string(local) + ")");
  c.Set("micro_batch_size", mbs);
  const long long global = c.Int("training", "global_batch_size").value_or(-1);
  if (global > 0) {
    c.Set("global_batch_size", global);  // gradient accumulation = global / (local x dp)
  } else {
    c.Set("micro_batch_num", local / mbs);
  }
  const std::string param = c.Str("training", "mixed_precision_param").value_or("bfloat16");
  if (param == "bfloat16") {
    c.out.settings["dtype"] = "bf16";
  } else if (param == "float32") {
    c.out.settings["dtype"] = "fp32";
  } else {
    c.Fail("training.mixed_precision_param", "must be bfloat16 or float32, got '" + param + "'");
  }
  // training.dtype "bfloat16": torchtitan keeps parameters, gradients and optimizer states in
  // bf16 with no fp32 copy (torchtitan/config/job_config.py, Training.dtype: "all parameters,
  // gradients, and optimizer states in bfloat16, without an extra copy of fp32 weights"): 2 B
  // of weights, 2 B of gradients and 2 x 2 B of Adam moments per parameter.
  const std::string pure = c.Str("training", "dtype").value_or("float32");
  if (pure == "bfloat16") {
    c.out.settings["optimizer_state_bytes"] = "4";
    c.out.settings["use_fp32_accum_grad"] = "false";
  } else if (pure != "float32") {
    c.Fail("training.dtype", "must be float32 or bfloat16, got '" + pure + "'");
  }
  ReadReduceDtype(c);
  if (c.Bool("training", "enable_cpu_offload").value_or(false))
    c.Fail("training.enable_cpu_offload",
           "FSDP CPU offload of parameters is not represented (trainsim offloads optimizer "
           "states only)");
}

bool HasConverter(Ctx& c, const std::string& name) {
  const toml::node* n = c.t.at_path("model.converters").node();
  if (!n || !n->is_array()) return false;
  for (const toml::node& e : *n->as_array())
    if (auto s = e.value<std::string>(); s && *s == name) return true;
  return false;
}

// The float8 table's options (torchtitan components/quantization/float8.py, Float8Converter):
// recipe_name (tensorwise when absent; rowwise, rowwise_with_gw_hp) and
// enable_fsdp_float8_all_gather, which FSDP2 honours only with dp_shard > 1 and torchtitan
// asserts against any recipe_name. The float8 all-gather sends 1 B per parameter and leaves no
// 16-bit copy of the gathered weights: read as fp8_param_gather.
void ReadFloat8Options(Ctx& c) {
  const char* table = "float8";
  for (const char* t : {"quantize.linear.float8", "quantize.dense.float8"})
    if (HasConverter(c, t)) table = t;
  const std::string prefix = std::string(table) + ".";
  const auto recipe = c.Str(table, "recipe_name");
  const bool gather = c.Bool(table, "enable_fsdp_float8_all_gather").value_or(false);
  if (recipe && gather)
    return c.Fail(prefix + "enable_fsdp_float8_all_gather",
                  "cannot be true with " + prefix + "recipe_name (torchtitan asserts against it)");
  if (recipe && *recipe != "tensorwise")
    c.out.ignored.push_back({prefix + "recipe_name", *recipe,
                             "costed as tensorwise FP8 (the hardware profile's FP8 GEMM speed-up); "
                             "row-wise scaling and the bf16 weight-gradient GEMMs of "
                             "rowwise_with_gw_hp are slower"});
  if (!gather) return;
  const long long shard = c.Int("parallelism", "data_parallel_shard_degree").value_or(-1);
  if (shard == 1) {
    c.out.ignored.push_back({prefix + "enable_fsdp_float8_all_gather", "true",
                             "takes effect only under FSDP (data_parallel_shard_degree > 1)"});
    return;
  }
  c.out.settings["fp8_param_gather"] = "true";
}

// [optimizer] name (torchtitan components/optimizer.py build_optimizers: "Adam" or "AdamW",
// default AdamW) and early_step_in_backward (each parameter's step in its post-accumulate-grad
// hook, freeing its gradient early); [parallelism] disable_loss_parallel (with TP the logits are
// gathered for the loss instead of staying vocab-sharded). Listed when they change what runs.
void ReadOptimizerAndLoss(Ctx& c) {
  const std::string name = c.Str("optimizer", "name").value_or("AdamW");
  if (name != "Adam" && name != "AdamW")
    c.out.ignored.push_back({"optimizer.name", name, "costed as AdamW (torchtitan's default)"});
  if (c.Bool("optimizer", "early_step_in_backward").value_or(false))
    c.out.ignored.push_back({"optimizer.early_step_in_backward", "true",
                             "the optimizer step inside the backward (gradients freed per "
                             "parameter) is not modelled: costed as a step after the backward"});
  const long long tp = c.Int("parallelism", "tensor_parallel_degree").value_or(1);
  if (tp > 1 && c.Bool("parallelism", "disable_loss_parallel").value_or(false))
    c.out.ignored.push_back({"parallelism.disable_loss_parallel", "true",
                             "the loss costed vocab-parallel (logits sharded over TP), not on "
                             "gathered logits"});
}

void ReadLowPrecision(Ctx& c) {
  // Newer torchtitan splits the converters into quantize.dense.* and quantize.moe.* (the MoE
  // experts' grouped GEMMs); trainsim's dtype is model-wide, so the dense one sets it.
  const bool fp8 = HasConverter(c, "float8") || HasConverter(c, "quantize.linear.float8") ||
                   HasConverter(c, "quantize.dense.float8") ||
                   c.Bool("float8", "enable_float8_linear").value_or(false) ||
                   c.Bool("training", "enable_float8_linear").value_or(false);
  const bool mx = HasConverter(c, "mx") || HasConverter(c, "quantize.linear.mx") ||
                  HasConverter(c, "quantize.dense.mx");
  for (const char* moe : {"quantize.moe.float8", "quantize.moe.mx"})
    if (HasConverter(c, moe) && !fp8 && !mx)
      c.out.ignored.push_back({"model.converters", moe,
                               "low precision for the MoE experts alone is not represented "
                               "(trainsim's dtype is model-wide): costed in bf16"});
  if (mx) {
    const std::string recipe = c.Str("mx", "recipe_name").value_or("mxfp8");
    if (recipe.rfind("mxfp8", 0) != 0)
      return c.Fail("mx.recipe_name", "only mxfp8 recipes are represented, got '" + recipe + "'");
    c.out.settings["dtype"] = "mxfp8";
  } else if (fp8 && c.Bool("float8", "emulate").value_or(false)) {
    c.out.ignored.push_back({"float8.emulate", "true",
                             "emulated float8 runs its GEMMs in high precision (torchtitan's "
                             "test mode): costed in bf16"});
  } else if (fp8) {
    c.out.settings["dtype"] = "fp8";
    ReadFloat8Options(c);
  }
}

// mode none / full / selective: selective_ac_option "op" (per-op SAC: matmul outputs saved
// except every second one, the rest recomputed: recompute_modules op_sac) or an integer N
// (every N-th transformer block fully checkpointed).
void ReadCheckpointing(Ctx& c, int layers_per_stage) {
  const std::string mode = c.Str("activation_checkpoint", "mode").value_or("selective");
  const std::string opt = c.Str("activation_checkpoint", "selective_ac_option").value_or("2");
  const char* key = "activation_checkpoint.mode";
  if (mode == "none") {
    c.out.settings["recompute"] = "none";
  } else if (mode == "full") {
    c.out.settings["recompute"] = "full";
  } else if (mode == "selective" && opt == "op") {
    c.out.settings["recompute"] = "selective";
    c.out.settings["recompute_modules"] = "op_sac";
  } else if (mode == "selective") {
    long long every = 0;
    try {
      every = std::stoll(opt);
    } catch (const std::exception&) {
    }
    if (every < 1)
      return c.Fail("activation_checkpoint.selective_ac_option",
                    "must be 'op' or a positive integer, got '" + opt + "'");
    if (layers_per_stage <= 0)
      return c.Fail("activation_checkpoint.selective_ac_option",
                    "needs the model's layer count ([model] name and flavor, or --model)");
    // torchtitan _apply_layer_sac (torchtitan/distributed/activation_checkpoint.py): a counter
    // incremented per block, the block wrapped when `count % ac_freq == 0`: blocks N, 2N, ...,
    // floor(layers / N) of them (none when N exceeds the stage's layers).
    const long long wrapped = layers_per_stage / every;
    c.out.settings["recompute"] = wrapped > 0 ? "full" : "none";
    if (wrapped > 0) c.Set("recompute_layer_num", wrapped);
  } else if (mode == "memory_budget") {
    // torchtitan's compiler-chosen recompute for activation_checkpoint.memory_budget (a fraction
    // of the activations kept, default 0.5; torch._functorch activation_memory_budget): costed
    // as per-op SAC, the policy nearest a half budget.
    c.out.settings["recompute"] = "selective";
    c.out.settings["recompute_modules"] = "op_sac";
    c.out.ignored.push_back({key, mode,
                             "the compiler's min-cut recompute under a memory budget is not "
                             "modelled: costed as per-op selective recompute (op_sac)"});
  } else {
    c.Fail(key, "must be none, full or selective (or memory_budget), got '" + mode + "'");
  }
}

// torchtitan's attention backend is part of the flavor (models/llama3/__init__.py, commit
// 00f555e1: attn_backend "sdpa" for 8B / 70B / 405B, "flex" for 8B_flex, 70B_flex_flash,
// 70B_flex_triton and debugmodel_flex_attn, "varlen" for 8B_varlen), not a TOML key. The
// suffix is split off so the shape still maps to its preset.
struct AttentionSuffix {
  const char* suffix;
  const char* backend;
};
constexpr AttentionSuffix kAttentionSuffixes[] = {
    {"_flex_attn", "flex"}, {"_flex_flash", "flex"},    {"_flex_triton", "flex"},
    {"_flex", "flex"},      {"_varlen_attn", "varlen"}, {"_varlen", "varlen"},
};

// The flavor without its attention suffix, and the backend: "sdpa" unless a suffix says.
std::pair<std::string, std::string> SplitAttention(const std::string& flavor) {
  for (const AttentionSuffix& a : kAttentionSuffixes) {
    const std::string suffix(a.suffix);
    if (flavor.size() > suffix.size() && flavor.ends_with(suffix))
      return {flavor.substr(0, flavor.size() - suffix.size()), a.backend};
  }
  return {flavor, "sdpa"};
}

// The attention kernel of the flavor's backend. sdpa: torchtitan calls PyTorch SDPA, which on
// Ampere / Hopper in bf16 dispatches its FlashAttention-2 backend first (PyTorch's default
// priority flash, efficient, math, cudnn; torchtitan PR #1196 put cuDNN first on sm100 only).
// flex: FlexAttention's Triton kernels, measured 5-10 % slower than SDPA's flash kernel on H100
// (co-me-tokens/CoMe issue #5), costed as FA2. varlen: torch.nn.attention.varlen, FA2 kernels.
void ReadAttention(Ctx& c, const std::string& backend, const std::string& flavor) {
  c.out.settings["attention_kernel"] = "fa2";
  const std::string field = flavor.empty() ? "attention_kernel" : "model.flavor";
  if (backend == "flex") {
    c.out.ignored.push_back(
        {field, flavor,
         "FlexAttention (Triton kernels) has no trainsim kernel: costed as "
         "FlashAttention-2 (attention_kernel fa2), which it trails by ~5-10 %"});
    return;
  }
  c.out.assumed.push_back(
      {"attention_kernel", "fa2",
       backend == "varlen"
           ? "torchtitan's varlen attention (torch.nn.attention.varlen) runs FlashAttention-2 "
             "kernels"
           : "torchtitan's models call PyTorch SDPA, which dispatches FlashAttention-2 on "
             "Ampere / Hopper in bf16; newer torchtitan (models/attention.py "
             "ScaledDotProductAttentionWrapper) puts cuDNN first: give --attention-kernel fused "
             "for it"});
}

void ReadModel(Ctx& c, bool model_given) {
  auto name = c.Str("model", "name");
  auto flavor = c.Str("model", "flavor");
  const auto [base, backend] = SplitAttention(flavor.value_or(""));
  ReadAttention(c, backend, backend == "sdpa" ? "" : flavor.value_or(""));
  if (!name) return;
  for (const Flavor& f : kFlavors)
    if (*name == f.name && base == f.flavor) {
      c.out.model = f.preset;
      return;
    }
  if (model_given) {  // the user's --model is simulated; the TOML's model is not checked
    c.out.ignored.push_back(
        {"model.flavor", *name + " " + flavor.value_or(""),
         "no trainsim preset for this torchtitan flavor; --model is simulated"});
    return;
  }
  std::string known;
  for (const Flavor& f : kFlavors)
    known += (known.empty() ? "" : ", ") + std::string(f.name) + " " + f.flavor;
  c.Fail("model.flavor", "torchtitan model '" + *name + "' flavor '" + flavor.value_or("") +
                             "' has no trainsim preset (known: " + known +
                             "); give --model with a preset or a config.json");
}

std::string ValueText(const toml::node& value) {
  if (const toml::array* a = value.as_array()) {  // ["model", "loss"] -> model,loss
    std::string out;
    for (const toml::node& e : *a) {
      if (!out.empty()) out += ',';
      out += ValueText(e);
    }
    return out;
  }
  if (auto v = value.value<std::string>()) return *v;
  if (auto b = value.value<bool>()) return *b ? "true" : "false";
  if (auto i = value.value_exact<int64_t>()) return std::to_string(*i);
  if (auto d = value.value_exact<double>()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", *d);
    return buf;
  }
  return "";
}

// Tables that configure a feature the file leaves off ([compile] without enable, the float8 /
// mx settings without their converter) change nothing and are not listed.
bool Inactive(Ctx& c, const std::string& table) {
  const bool fp8 = c.out.settings.count("dtype") && c.out.settings.at("dtype") == "fp8";
  const bool mx = c.out.settings.count("dtype") && c.out.settings.at("dtype") == "mxfp8";
  if (table == "compile") return !c.Bool("compile", "enable").value_or(false);
  if (table == "float8" || (table.starts_with("quantize.") && table.ends_with(".float8")))
    return !fp8 && !HasConverter(c, table);
  if (table == "mx" || (table.starts_with("quantize.") && table.ends_with(".mx")))
    return !mx && !HasConverter(c, table);
  return false;
}

// The keys of `tbl` (named `prefix`) not read, nested tables by their dotted names.
void ListTable(Ctx& c, const toml::table& tbl, const std::string& prefix) {
  if (Inactive(c, prefix)) return;
  for (const auto& [key, value] : tbl) {
    const std::string full = prefix + "." + std::string(key.str());
    if (const toml::table* sub = value.as_table()) {
      ListTable(c, *sub, full);
      continue;
    }
    // A switch left off changes nothing; compile.enable is listed with its reason elsewhere.
    if (kRead.count(full) || value.value<bool>() == std::optional<bool>(false) ||
        full == "compile.enable" || full == "training.compile")
      continue;
    c.out.ignored.push_back({full, ValueText(value), "not modelled by trainsim"});
  }
}

void ListIgnored(Ctx& c) {
  for (const auto& [section, node] : c.t) {
    const std::string s(section.str());
    if (kHarmlessSections.count(s)) continue;
    if (const toml::table* tbl = node.as_table()) {
      ListTable(c, *tbl, s);
    } else {
      c.out.ignored.push_back({s, "", "not a torchtitan section trainsim reads"});
    }
  }
}

// torchtitan maps each section onto one config dataclass and each key onto one of its fields:
// an array of tables ([[training]], or [[training.x]] inside a section) is refused there, so it
// is refused here, naming the dotted key, rather than listed as a section or key not read.
Status RefuseArraysOfTables(const toml::table& tbl, const std::string& prefix) {
  for (const auto& [key, node] : tbl) {
    const std::string full = prefix + std::string(key.str());
    if (node.is_array_of_tables())
      return Status::Invalid(full,
                             "an array of tables ([[" + full + "]]): a torchtitan " +
                                 (prefix.empty() ? "section is one table ([" + full + "])"
                                                 : "key is one value or table ([" + full + "])"));
    if (const toml::table* sub = node.as_table())
      if (Status st = RefuseArraysOfTables(*sub, full + "."); !st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace

Result<FrameworkConfig> ParseTorchtitanToml(std::string_view text, std::string_view origin_sv,
                                            int model_layers, bool model_given) {
  const std::string origin(origin_sv);
  toml::table t;
  try {
    t = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    return Status::Invalid("", "TOML syntax error at line " +
                                   std::to_string(e.source().begin.line) + ": " +
                                   std::string(e.description()))
        .WithContext(origin);
  }
  if (Status st = RefuseArraysOfTables(t, ""); !st.ok()) return st.WithContext(origin);
  FrameworkConfig out;
  Ctx c{t, origin, out};
  ReadModel(c, model_given);
  ReadParallelism(c);
  ReadTraining(c);
  ReadLowPrecision(c);
  ReadOptimizerAndLoss(c);
  if (!out.model.empty())
    if (auto m = LoadModelPreset(out.model); m.ok()) model_layers = m->layers;
  const long long pp = c.Int("parallelism", "pipeline_parallel_degree").value_or(1);
  const int per_stage = pp >= 1 ? static_cast<int>(CeilDiv(model_layers, pp)) : 0;
  ReadCheckpointing(c, per_stage);
  // [compile] enable, or the older [training] compile (both default false). Compiled blocks run
  // trainsim's fused norm / rotary / SiLU kernels; without compile the model's element-wise
  // chains run eagerly (eager_modules).
  bool compiled = false;
  for (const char* section : {"compile", "training"})
    if (c.Bool(section, section == std::string("compile") ? "enable" : "compile").value_or(false)) {
      compiled = true;
      out.ignored.push_back(
          {section == std::string("compile") ? "compile.enable" : "training.compile", "true",
           "costed as fused norm, rotary and SiLU kernels; torch.compile's other fusions are not "
           "modelled"});
    }
  if (!compiled) {
    out.settings["eager_modules"] = "true";
    out.assumed.push_back({"eager_modules", "true",
                           "[compile] enable is false (torchtitan's default): the model's fp32 "
                           "RMSNorm, complex rotary and SiLU x w3 run as eager kernel chains"});
  }
  if (!c.status.ok()) return c.status;
  ListIgnored(c);
  return out;
}

}  // namespace trainsim

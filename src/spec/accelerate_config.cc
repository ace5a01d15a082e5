// Hugging Face Accelerate config YAML (--accelerate-config), read with yaml-cpp.
//
// Sources (huggingface/accelerate):
// - src/accelerate/commands/config/cluster.py (the questions `accelerate config` asks and the
//   keys it writes): distributed_type, num_processes ("How many GPU(s) should be used for
//   distributed training?": every process of every machine), num_machines, mixed_precision
//   no|fp16|bf16|fp8, fsdp_config.* (fsdp_sharding_strategy picked from FSDP_SHARDING_STRATEGY,
//   fsdp_offload_params, fsdp_backward_prefetch, fsdp_forward_prefetch,
//   fsdp_activation_checkpointing, ...), deepspeed_config.* (zero_stage, default 2;
//   offload_optimizer_device / offload_param_device none|cpu|nvme; gradient_accumulation_steps,
//   default 1; deepspeed_config_file), megatron_lm_config.megatron_lm_* (tp_degree, pp_degree,
//   num_micro_batches, sequence_parallelism, recompute_activations, use_distributed_optimizer).
// - src/accelerate/commands/launch.py: multi-node launches start num_processes // num_machines
//   processes per machine (torchrun --nproc_per_node).
// - src/accelerate/utils/dataclasses.py, FullyShardedDataParallelPlugin (v1.15 docs): fsdp_version
//   defaults to 1; sharding_strategy is deprecated in favour of reshard_after_forward, which is a
//   sharding-strategy name for FSDP1 and a bool for FSDP2 (default FULL_SHARD / true);
//   cpu_offload, activation_checkpointing, backward_prefetch, forward_prefetch default off.
//   Older releases wrote the strategy as torch's ShardingStrategy number: FULL_SHARD 1,
//   SHARD_GRAD_OP 2, NO_SHARD 3, HYBRID_SHARD 4, _HYBRID_SHARD_ZERO2 5.
// - docs/source/concept_guides/fsdp1_vs_fsdp2.md: fsdp_reshard_after_forward true is FSDP1's
//   FULL_SHARD, false is SHARD_GRAD_OP; FSDP2 drops fsdp_backward_prefetch (always BACKWARD_PRE).
// - PyTorch torch/distributed/fsdp/api.py, ShardingStrategy: HYBRID_SHARD applies FULL_SHARD
//   within a node and replicates across nodes; _HYBRID_SHARD_ZERO2 applies SHARD_GRAD_OP within
//   a node. The FSDP2 table (torchtitan docs/fsdp.md): a 2-D mesh with reshard_after_forward
//   true is HYBRID_SHARD.
// - ParallelismConfig (Accelerate >= 1.10, launch.py prepare_multi_gpu_env):
//   parallelism_config_dp_replicate_size, _dp_shard_size, _tp_size, _cp_size, default 1 each;
//   their product is the number of processes.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>

#include "spec/trainer_keys.h"
#include "spec/yaml_mapping.h"

namespace trainsim {
namespace {

using detail::ApplyShardingStrategy;
using detail::TrainerKeys;

// Keys that do not change one step's time or memory (launch plumbing, checkpoint format,
// wrapping details, loading).
const std::set<std::string> kHarmless = {
    "compute_environment",
    "debug",
    "machine_rank",
    "main_process_ip",
    "main_process_port",
    "main_training_function",
    "rdzv_backend",
    "rdzv_conf",
    "same_network",
    "tpu_env",
    "tpu_use_cluster",
    "tpu_use_sudo",
    "tpu_name",
    "tpu_zone",
    "tpu_vm",
    "commands",
    "command_file",
    "gpu_ids",
    "enable_cpu_affinity",
    "downcast_bf16",
    "num_cpu_threads_per_process",
    "max_restarts",
    "monitor_interval",
    "use_parallelism_config",
    "fsdp_config.fsdp_auto_wrap_policy",
    "fsdp_config.fsdp_transformer_layer_cls_to_wrap",
    "fsdp_config.fsdp_min_num_params",
    "fsdp_config.fsdp_state_dict_type",
    "fsdp_config.fsdp_cpu_ram_efficient_loading",
    "fsdp_config.fsdp_sync_module_states",
    "fsdp_config.fsdp_use_orig_params",
    "deepspeed_config.gradient_clipping",
    "deepspeed_config.zero3_init_flag",
    "deepspeed_config.zero3_save_16bit_model",
    "deepspeed_config.offload_optimizer_nvme_path",
    "deepspeed_config.offload_param_nvme_path",
    "deepspeed_config.deepspeed_multinode_launcher",
    "deepspeed_config.deepspeed_hostfile",
    "deepspeed_config.deepspeed_exclusion_filter",
    "deepspeed_config.deepspeed_inclusion_filter",
    "deepspeed_config.deepspeed_moe_layer_cls_names",
    "megatron_lm_config.megatron_lm_gradient_clipping",
    "parallelism_config.parallelism_config_cp_comm_strategy",
};

// The YAML as key -> text: top-level keys, and "section.key" for the keys of a mapping
// (fsdp_config, deepspeed_config, ...). Lists are joined with ","; null values are absent.
Result<std::map<std::string, std::string>> Flatten(std::string_view text,
                                                   const std::string& origin) {
  auto loaded = detail::LoadYamlMapping(text, origin, "an Accelerate config");
  if (!loaded.ok()) return loaded.status();
  const YAML::Node& root = loaded.value();
  std::map<std::string, std::string> out;
  auto put = [&](const std::string& key, const YAML::Node& v) -> Status {
    if (v.IsNull()) return Status::Ok();
    if (v.IsScalar()) {
      out[key] = v.Scalar();
      return Status::Ok();
    }
    if (!v.IsSequence()) return Status::Invalid(key, "must be a value or a list of values");
    std::string joined;
    for (const auto& item : v) {
      if (!item.IsScalar()) return Status::Invalid(key, "must be a value or a list of values");
      joined += (joined.empty() ? "" : ",") + item.Scalar();
    }
    out[key] = joined;
    return Status::Ok();
  };
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) return Status::Invalid("", "keys must be names").WithContext(origin);
    const std::string key = kv.first.Scalar();
    if (kv.second.IsMap()) {
      for (const auto& sub : kv.second) {
        if (!sub.first.IsScalar())
          return Status::Invalid(key, "keys must be names").WithContext(origin);
        if (Status st = put(key + "." + sub.first.Scalar(), sub.second); !st.ok())
          return st.WithContext(origin);
      }
    } else if (Status st = put(key, kv.second); !st.ok()) {
      return st.WithContext(origin);
    }
  }
  return out;
}

std::string Upper(std::string t) {
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::toupper(c); });
  return t;
}

// mixed_precision: Accelerate's autocast keeps fp32 parameters (the master copy) and fp32
// gradients; "no" trains in fp32; fp8 runs the linear layers through TE / torchao / MS-AMP.
void ReadPrecision(TrainerKeys& k) {
  auto mp = k.Str("mixed_precision");
  const std::string m = mp.value_or("no");
  if (!mp) k.Assume("mixed_precision", "no", "Accelerate's default: fp32 training");
  if (m != "no" && m != "fp16" && m != "bf16" && m != "fp8")
    return k.Fail("mixed_precision", "must be no, fp16, bf16 or fp8, got '" + m + "'");
  k.Set("dtype", m == "no" ? "fp32" : m);
  k.Set("master_weights", "true");
  k.Set("use_fp32_accum_grad", "true");
  if (m == "fp8")
    k.Assume("mixed_precision", "fp8",
             "costed with the hardware preset's FP8 recipe (fp8_config backend not modelled)");
}

// FSDP1 sharding strategy names, and the numbers older Accelerate releases wrote.
std::string StrategyName(const std::string& v) {
  static const std::map<std::string, std::string> kNumbers = {{"1", "FULL_SHARD"},
                                                              {"2", "SHARD_GRAD_OP"},
                                                              {"3", "NO_SHARD"},
                                                              {"4", "HYBRID_SHARD"},
                                                              {"5", "HYBRID_SHARD_ZERO2"}};
  const auto it = kNumbers.find(v);
  if (it != kNumbers.end()) return it->second;
  // A bool (the FSDP2 spelling in an FSDP1 file): true reshards (FULL_SHARD), false keeps the
  // gathered parameters until the backward (SHARD_GRAD_OP).
  const std::string u = Upper(v);
  if (u == "TRUE") return "FULL_SHARD";
  if (u == "FALSE") return "SHARD_GRAD_OP";
  return u == "_HYBRID_SHARD_ZERO2" ? "HYBRID_SHARD_ZERO2" : u;
}

// fsdp_version 1: fsdp_sharding_strategy (or fsdp_reshard_after_forward holding a strategy
// name); fsdp_version 2: fsdp_reshard_after_forward true / false.
void ReadFsdpSharding(TrainerKeys& k, int version, int machines) {
  const std::string kStrat = "fsdp_config.fsdp_sharding_strategy";
  const std::string kReshard = "fsdp_config.fsdp_reshard_after_forward";
  if (version == 2) {
    if (k.Has(kStrat))
      return k.Fail(kStrat,
                    "FSDP2 takes fsdp_reshard_after_forward (true / false): convert the file "
                    "with `accelerate to-fsdp2`");
    auto reshard = k.Bool(kReshard);
    if (!k.status().ok()) return;
    if (!reshard) k.Assume(kReshard, "true", "Accelerate's FSDP2 default (FULL_SHARD)");
    return ApplyShardingStrategy(k, kReshard,
                                 reshard.value_or(true) ? "FULL_SHARD" : "SHARD_GRAD_OP", 1);
  }
  auto strat = k.Str(kStrat);
  auto reshard = k.Str(kReshard);
  if (strat && reshard && StrategyName(*strat) != StrategyName(*reshard))
    return k.Fail(kReshard,
                  "contradicts fsdp_sharding_strategy ('" + *reshard + "' vs '" + *strat + "')");
  if (!strat && !reshard) k.Assume(kStrat, "FULL_SHARD", "Accelerate's default sharding strategy");
  const std::string key = strat ? kStrat : kReshard;
  ApplyShardingStrategy(k, key, StrategyName(strat.value_or(reshard.value_or("FULL_SHARD"))),
                        machines);
}

void ReadFsdp(TrainerKeys& k, int machines) {
  auto version = k.Int("fsdp_config.fsdp_version", 1);
  if (version && *version != 1 && *version != 2)
    return k.Fail("fsdp_config.fsdp_version", "must be 1 or 2, got " + std::to_string(*version));
  if (!version) k.Assume("fsdp_config.fsdp_version", "1", "Accelerate's default (FSDP1)");
  const int v = version.value_or(1);
  ReadFsdpSharding(k, v, machines);
  if (k.Bool("fsdp_config.fsdp_offload_params").value_or(false))
    return k.Fail("fsdp_config.fsdp_offload_params",
                  "parameter offload to the host is not represented (trainsim offloads "
                  "optimizer states only)");
  auto ac = k.Bool("fsdp_config.fsdp_activation_checkpointing");
  k.Set("recompute", ac.value_or(false) ? "full" : "none");
  if (!ac)
    k.Assume("fsdp_config.fsdp_activation_checkpointing", "false",
             "Accelerate's default: no recompute; a script's own gradient checkpointing "
             "(TrainingArguments gradient_checkpointing, TRL's default) is not in this file: "
             "give --recompute full");
  // Prefetching: trainsim hides the all-gathers behind the layers' compute (all but one
  // layer's share), which is what BACKWARD_PRE and FSDP2 do.
  auto bwd = k.Str("fsdp_config.fsdp_backward_prefetch");
  if (bwd && v == 2) {
    k.out().ignored.push_back({"fsdp_config.fsdp_backward_prefetch", *bwd,
                               "FSDP2 always prefetches as BACKWARD_PRE (Accelerate drops it)"});
  } else if (bwd && Upper(*bwd) != "BACKWARD_PRE") {
    k.out().ignored.push_back(
        {"fsdp_config.fsdp_backward_prefetch", *bwd,
         "costed as BACKWARD_PRE: the backward all-gathers are prefetched behind compute"});
  }
  if (k.Bool("fsdp_config.fsdp_forward_prefetch").value_or(false))
    k.out().ignored.push_back({"fsdp_config.fsdp_forward_prefetch", "true",
                               "explicit forward prefetch is not modelled (the forward "
                               "all-gathers overlap compute either way)"});
  k.Ignore("fsdp_config.fsdp_activation_checkpointing_offload",
           "offloading checkpointed activations is not modelled");
}

}  // namespace

namespace detail {
void ReadAccelerateDeepSpeed(TrainerKeys& k);
void ReadAccelerateMegatron(TrainerKeys& k);
void ReadAccelerateParallelism(TrainerKeys& k, int processes, bool fsdp);
void ReadAccelerateDynamo(TrainerKeys& k, bool eager_script);
void FinishAccelerate(TrainerKeys& k, const std::set<std::string>& harmless,
                      const std::string& type);
}  // namespace detail

Result<FrameworkConfig> ParseAccelerateConfig(std::string_view text, std::string_view origin_sv) {
  const std::string origin(origin_sv);
  auto values = Flatten(text, origin);
  if (!values.ok()) return values.status();
  FrameworkConfig out;
  TrainerKeys k(std::move(values).value(), origin, out);
  auto type_v = k.Str("distributed_type");
  const std::string type = Upper(type_v.value_or("NO"));
  if (!type_v) k.Assume("distributed_type", "NO", "Accelerate's default: one process");
  auto procs = k.Int("num_processes", 1);
  auto machines = k.Int("num_machines", 1);
  if (!k.status().ok()) return k.status();
  const int n = type == "NO" ? 1 : procs.value_or(1), m = machines.value_or(1);
  if (!procs && type != "NO") k.Assume("num_processes", "1", "Accelerate's default");
  if (n % m != 0)
    k.Fail("num_processes", "must be divisible by num_machines (" + std::to_string(m) +
                                "): every machine starts num_processes / num_machines");
  k.Set("world_size", std::to_string(n));
  if (k.Bool("use_cpu").value_or(false))
    k.Fail("use_cpu", "CPU training is not simulated (trainsim models GPUs)");
  ReadPrecision(k);
  // Plain DDP unless the type says otherwise.
  k.Set("fsdp", "false");
  k.Set("zero_state", "0");
  if (type == "FSDP") {
    ReadFsdp(k, m);
  } else if (type == "DEEPSPEED") {
    detail::ReadAccelerateDeepSpeed(k);
  } else if (type == "MEGATRON_LM") {
    detail::ReadAccelerateMegatron(k);
  } else if (type != "MULTI_GPU" && type != "NO") {
    k.Fail("distributed_type",
           "'" + type + "' is not simulated (read: NO, MULTI_GPU, FSDP, DEEPSPEED, MEGATRON_LM)");
  }
  // The config does not say what the script's model runs; Accelerate's FSDP / DeepSpeed / DDP
  // launches are mostly Hugging Face Transformers models, whose default "sdpa" attention is
  // PyTorch SDPA: FlashAttention-2 on Ampere / Hopper in bf16 (as the LLaMA-Factory reader).
  if (type != "MEGATRON_LM") {
    k.Set("attention_kernel", "fa2");
    k.Assume("attention_kernel", "fa2",
             "not in the config: a Transformers model's SDPA attention (FlashAttention-2); give "
             "--attention-kernel for another");
  }
  detail::ReadAccelerateParallelism(k, n, type == "FSDP");
  detail::ReadAccelerateDynamo(k, type != "MEGATRON_LM");
  detail::FinishAccelerate(k, kHarmless, type);
  if (!k.status().ok()) return k.status();
  return out;
}

}  // namespace trainsim

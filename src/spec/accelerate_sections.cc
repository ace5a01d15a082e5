// The sections of an Accelerate config YAML besides FSDP (spec/accelerate_config.cc): DeepSpeed,
// Megatron-LM, ParallelismConfig, TorchDynamo, and the keys left over.
//
// Sources (huggingface/accelerate): commands/config/cluster.py (deepspeed_config: zero_stage
// default 2, offload devices none|cpu|nvme, gradient_accumulation_steps default 1,
// deepspeed_config_file; megatron_lm_config.megatron_lm_*; dynamo_config.dynamo_backend /
// dynamo_mode); utils/dataclasses.py DeepSpeedPlugin (builds a DeepSpeed config from these keys:
// zero_optimization.stage / offload_optimizer.device / offload_param.device,
// gradient_accumulation_steps; with deepspeed_config_file the file decides) and MegatronLMPlugin
// (tp_degree, pp_degree, num_micro_batches, sequence_parallelism, recompute_activations:
// selective recompute, use_distributed_optimizer); launch.py (ParallelismConfig sizes).
// PyTorch torch.compile: mode "reduce-overhead" (and "max-autotune") replays CUDA graphs;
// backend "cudagraphs" captures CUDA graphs without Inductor.
#include <algorithm>
#include <cctype>
#include <string>

#include "spec/cuda_graphs.h"
#include "spec/trainer_keys.h"

namespace trainsim::detail {

void ReadAccelerateDeepSpeed(TrainerKeys& k) {
  const std::string p = "deepspeed_config.";
  if (auto file = k.Str(p + "deepspeed_config_file"); file && !file->empty()) {
    k.out().deepspeed_file = *file;
    for (const char* key : {"zero_stage", "offload_optimizer_device", "offload_param_device",
                            "gradient_accumulation_steps"})
      k.Ignore(p + key, "deepspeed_config_file is given: the DeepSpeed file decides");
    return;
  }
  auto stage = k.Int(p + "zero_stage", 0);
  if (stage && *stage > 3)
    return k.Fail(p + "zero_stage", "must be 0, 1, 2 or 3, got " + std::to_string(*stage));
  if (!stage) k.Assume(p + "zero_stage", "2", "Accelerate's default ZeRO stage");
  auto device = [&](const std::string& key) {
    auto v = k.Str(p + key);
    if (v && *v != "none" && *v != "cpu" && *v != "nvme")
      k.Fail(p + key, "must be none, cpu or nvme, got '" + *v + "'");
    return v.value_or("none");
  };
  const std::string opt = device("offload_optimizer_device");
  const std::string param = device("offload_param_device");
  if (param != "none")
    return k.Fail(p + "offload_param_device",
                  "parameter offload to " + param +
                      " is not represented (trainsim offloads optimizer states only)");
  auto gas = k.Int(p + "gradient_accumulation_steps", 1);
  if (!k.status().ok()) return;
  // The DeepSpeed config DeepSpeedPlugin writes, read as a DeepSpeed file (precision stays the
  // one mixed_precision gave: Accelerate fills DeepSpeed's bf16 / fp16 from it).
  const std::string json =
      "{\"gradient_accumulation_steps\": " + std::to_string(gas.value_or(1)) +
      ", \"zero_optimization\": {\"stage\": " + std::to_string(stage.value_or(2)) +
      ", \"offload_optimizer\": {\"device\": \"" + opt + "\"}}}";
  auto ds = ParseDeepSpeedConfig(json, "deepspeed_config");
  if (!ds.ok()) return k.Fail(p + "zero_stage", ds.status().message());
  const std::string dtype = k.out().settings["dtype"];
  for (auto& [key, value] : ds.value().settings) k.Set(key, value);
  k.Set("dtype", dtype);
  // ZeRO keeps and reduces the gradients in the 16-bit training dtype (ParseDeepSpeedConfig).
  if (stage.value_or(2) >= 1 && (dtype == "bf16" || dtype == "fp16"))
    k.Set("use_fp32_accum_grad", "false");
  for (const Assumption& a : ds.value().assumed)
    if (a.field != "zero_optimization.stage") k.Assume(a.field, a.value, a.why);
  if (!gas) k.Assume(p + "gradient_accumulation_steps", "1", "Accelerate's default");
}

void ReadAccelerateMegatron(TrainerKeys& k) {
  const std::string p = "megatron_lm_config.megatron_lm_";
  auto tp = k.Int(p + "tp_degree", 1);
  auto pp = k.Int(p + "pp_degree", 1);
  auto mb = k.Int(p + "num_micro_batches", 1);
  if (tp) k.Set("tp_size", std::to_string(*tp));
  if (pp) k.Set("pp_size", std::to_string(*pp));
  if (mb) k.Set("micro_batch_num", std::to_string(*mb));
  // Megatron-LM's defaults where the file is silent (MegatronLMPlugin leaves them None).
  k.Set("enable_sequence_parallel",
        k.Bool(p + "sequence_parallelism").value_or(false) ? "true" : "false");
  k.Set("recompute", k.Bool(p + "recompute_activations").value_or(false) ? "selective" : "none");
  k.Set("zero_state", k.Bool(p + "use_distributed_optimizer").value_or(false) ? "1" : "0");
  k.Set("overlap_grad_reduce", "false");
  k.Set("overlap_param_gather", "false");
  k.Ignore(p + "num_layers_per_virtual_pipeline_stage",
           "interleaving by layers per chunk needs the model: give --vpp");
}

// ParallelismConfig: dp_replicate x dp_shard x tp x cp processes. With FSDP, dp_shard > 1 and
// dp_replicate > 1 is HSDP (sharded within dp_shard x cp ranks, all-reduced across replicas:
// dist_opt_instances = dp_replicate); dp_shard 1 is DDP.
void ReadAccelerateParallelism(TrainerKeys& k, int processes, bool fsdp) {
  const std::string p = "parallelism_config.parallelism_config_";
  if (!k.Has(p + "dp_replicate_size") && !k.Has(p + "dp_shard_size") && !k.Has(p + "tp_size") &&
      !k.Has(p + "cp_size"))
    return;
  const int rep = k.Int(p + "dp_replicate_size", 1).value_or(1);
  const int shard = k.Int(p + "dp_shard_size", 1).value_or(1);
  const int tp = k.Int(p + "tp_size", 1).value_or(1);
  const int cp = k.Int(p + "cp_size", 1).value_or(1);
  if (!k.status().ok()) return;
  const long long total = 1LL * rep * shard * tp * cp;
  if (total != processes)
    return k.Fail(p + "dp_shard_size", "dp_replicate x dp_shard x tp x cp (" +
                                           std::to_string(total) + ") must equal num_processes (" +
                                           std::to_string(processes) + ")");
  if (shard > 1 && !fsdp)
    return k.Fail(p + "dp_shard_size",
                  "> 1 needs distributed_type FSDP (Accelerate shards "
                  "with FSDP2)");
  k.Set("tp_size", std::to_string(tp));
  k.Set("cp_size", std::to_string(cp));
  if (shard == 1) {  // replicas only: DDP
    k.Set("fsdp", "false");
    k.Set("zero_state", "0");
    k.Set("dist_opt_instances", "1");
  } else {
    k.Set("dist_opt_instances", std::to_string(rep));
  }
}

void ReadAccelerateDynamo(TrainerKeys& k, bool eager_script) {
  const std::string p = "dynamo_config.";
  auto backend = k.Str(p + "dynamo_backend");
  auto mode = k.Str(p + "dynamo_mode");
  for (const char* key :
       {"dynamo_use_fullgraph", "dynamo_use_dynamic", "dynamo_use_regional_compilation"})
    k.Str(p + key);
  std::string b = backend.value_or("NO");
  std::transform(b.begin(), b.end(), b.begin(), [](unsigned char c) { return std::toupper(c); });
  if (b == "NO") {
    // A Transformers script runs eager; Megatron-LM keeps its own launch costing.
    if (eager_script) ApplyPytorchLaunch(k, PytorchLaunch::kEager, p + "dynamo_backend", "NO");
    return;
  }
  const std::string m = mode.value_or("default");
  if (CompileCapturesGraphs(b, m))
    return ApplyPytorchLaunch(k, PytorchLaunch::kCudaGraphs, p + "dynamo_mode",
                              b == "CUDAGRAPHS" ? "cudagraphs" : m);
  ApplyPytorchLaunch(k, PytorchLaunch::kCompiled, p + "dynamo_backend", backend.value_or(""));
}

// The keys not read: harmless ones in one `assumed` entry, a section the distributed type does
// not use, and unknown keys in `ignored`.
void FinishAccelerate(TrainerKeys& k, const std::set<std::string>& harmless,
                      const std::string& type) {
  if (!k.status().ok()) return;
  const std::string used_section = type == "FSDP"          ? "fsdp_config"
                                   : type == "DEEPSPEED"   ? "deepspeed_config"
                                   : type == "MEGATRON_LM" ? "megatron_lm_config"
                                                           : "";
  std::string listed;
  for (const std::string& key : k.Unread()) {
    auto v = k.Str(key);
    if (harmless.count(key)) {
      listed += (listed.empty() ? "" : ", ") + key;
      continue;
    }
    const size_t dot = key.find('.');
    const std::string section = dot == std::string::npos ? "" : key.substr(0, dot);
    std::string why = "unknown Accelerate config key: not read";
    if (!section.empty() && section == used_section)
      why = "not modelled";
    else if (section == "fsdp_config" || section == "deepspeed_config" ||
             section == "megatron_lm_config")
      why = "not used: distributed_type is " + type;
    else if (section == "fp8_config")
      why = "the FP8 recipe is the hardware preset's";
    k.out().ignored.push_back({key, v.value_or(""), why});
  }
  if (!listed.empty())
    k.Assume("(not simulated)", listed,
             "launch, checkpoint-format, wrapping and loading keys: they do not change one "
             "step's time or memory");
}

}  // namespace trainsim::detail

// Training-framework configuration files read as a strategy: a DeepSpeed config JSON (the file
// HF Trainer and LLaMA-Factory point to) and a torchtitan training TOML. Also what a SimuMax file
// carried that trainsim did not simulate. docs/INPUTS.md lists every key read.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/report.h"
#include "trainsim/status.h"
#include "trainsim/strategy.h"

namespace trainsim {

// What a framework file says about the strategy, as canonical settings for
// ApplyStrategySettings (trainsim/schema.h), applied before the command line's own flags.
struct FrameworkConfig {
  std::map<std::string, std::string> settings;  // canonical strategy key -> canonical text
  std::string model;                            // a model preset id the file names; "" = none
  std::vector<Assumption> assumed;  // values the file leaves to its framework ("auto", defaults)
  std::vector<Assumption> ignored;  // keys read but not simulated (field = key, value, why)
  // A global batch the file states besides the micro-batch and the accumulation steps
  // (DeepSpeed train_batch_size); checked against the final strategy by CheckFrameworkBatch.
  int stated_global_batch = 0;
  std::string stated_global_batch_key;
  // A DeepSpeed config the file names by path (LLaMA-Factory / HF Trainer `deepspeed`). The
  // library never reads it (a request must not open files); the CLI may, with
  // ParseDeepSpeedConfig, and merges it under the file's own settings (MergeDeepSpeedConfig).
  std::string deepspeed_file;
  // The model the file names (LLaMA-Factory model_name_or_path: a hub id or a folder); the
  // caller resolves it (--model wins).
  std::string model_path;
  // TRL GRPO counts completions: per_device_train_batch_size x gradient_accumulation_steps x dp
  // completions per optimizer step, group_size of them per prompt. Set (> 0) to the completions
  // per DP rank per step; ResolveFrameworkBatch turns them into trainsim's prompts.
  int completions_per_rank = 0;
  // GRPOConfig's generation batch when it spans several optimizer updates: steps_per_generation
  // (micro-batches per rank per generation; default gradient_accumulation_steps) or
  // generation_batch_size (completions over every process). 0 = one generation per update.
  int micro_completions_per_rank = 0;  // per_device_train_batch_size
  int steps_per_generation = 0;
  long long generation_batch_size = 0;
  // FSDP hybrid sharding (HYBRID_SHARD / HYBRID_SHARD_ZERO2) asked by a file that does not count
  // the nodes (HF TrainingArguments `fsdp`): the key and the strategy name; "" = none.
  // ResolveFrameworkLayout shards within a node and replicates across the nodes.
  std::string hybrid_shard_key, hybrid_shard_name;
};

// DeepSpeed config JSON: zero_optimization (stage, offload_optimizer, offload_param,
// overlap_comm), train_micro_batch_size_per_gpu, gradient_accumulation_steps, train_batch_size,
// bf16 / fp16. "auto" values (filled by HF Trainer from TrainingArguments) are unknown: listed
// in `assumed`, not set. Contradictions and what trainsim cannot represent are errors naming
// the key.
Result<FrameworkConfig> ParseDeepSpeedConfig(std::string_view text, std::string_view origin);

// torchtitan training TOML: [parallelism], [training], [activation_checkpoint], [float8] /
// [quantize], [model] name + flavor (mapped to a preset; unknown flavors refused), [compile].
// `model_layers`: the layer count of the model simulated when the TOML names none (selective
// checkpointing every N-th block needs it); 0 = unknown. `model_given`: the user named the model
// (--model), so a flavor without a preset is listed as ignored instead of refused.
Result<FrameworkConfig> ParseTorchtitanToml(std::string_view text, std::string_view origin,
                                            int model_layers = 0, bool model_given = false);

// LLaMA-Factory training YAML (`llamafactory-cli train FILE`): stage, finetuning_type, the LoRA /
// freeze / quantisation keys, the batch, cutoff_len, packing, precision, optim and gradient
// checkpointing (docs/INPUTS.md, "LLaMA-Factory YAML"). `model_layers`: the layer count of the
// model simulated (freeze_trainable_layers counts the trained layers from the last); 0 =
// unknown. A key trainsim cannot honour is refused by name or listed in `assumed` / `ignored`;
// an unknown key is an error naming it.
Result<FrameworkConfig> ParseLlamaFactoryYaml(std::string_view text, std::string_view origin,
                                              int model_layers = 0);

// A JSON of Hugging Face TrainingArguments / TRL SFTConfig / DPOConfig / GRPOConfig keys
// (docs/INPUTS.md, "TRL / HF TrainingArguments JSON"). The stage is inferred from the keys
// (num_generations: grpo; beta, loss_type, precompute_ref_log_probs, max_prompt_length: dpo;
// else sft) and listed in `assumed`; --stage overrides it. Same rules for keys as above.
Result<FrameworkConfig> ParseTrlArgsJson(std::string_view text, std::string_view origin);

// Hugging Face Accelerate config YAML (`accelerate config` / `accelerate launch --config_file`):
// distributed_type FSDP / DEEPSPEED / MULTI_GPU / MEGATRON_LM / NO, num_processes (all machines),
// num_machines, mixed_precision, fsdp_config, deepspeed_config, megatron_lm_config,
// parallelism_config, dynamo_config (docs/INPUTS.md, "Accelerate config"). A DeepSpeed file it
// names (deepspeed_config.deepspeed_config_file) is left in deepspeed_file for the caller.
// Keys not simulated are listed in `ignored`; what cannot be represented is refused by name.
Result<FrameworkConfig> ParseAccelerateConfig(std::string_view text, std::string_view origin);

// Adds what a DeepSpeed config says (ParseDeepSpeedConfig) to `c` under the settings `c`
// already has (the training file's batch wins over DeepSpeed's "auto"), with its notes.
void MergeDeepSpeedConfig(const FrameworkConfig& ds, FrameworkConfig& c);

// A training file (LLaMA-Factory YAML, TRL / TrainingArguments) run under `accelerate launch
// --config_file` (ParseAccelerateConfig): HF Trainer takes the process count from the launcher,
// its FSDP / DeepSpeed plugin unless the training file names its own `fsdp` / `deepspeed`, and
// its mixed_precision unless the file sets bf16 / fp16 (transformers TrainingArguments
// __post_init__ overwrites ACCELERATE_MIXED_PRECISION then); every other setting is the training
// file's. Recompute is on when either checkpoints (FSDP's activation_checkpointing or the
// Trainer's gradient_checkpointing). The launcher's notes for settings the file decided drop.
void MergeAccelerateUnderTrainer(const FrameworkConfig& launcher, FrameworkConfig& trainer);

// TRL GRPO's completions (completions_per_rank) as trainsim prompts: gbs = completions x dp /
// group_size, one optimizer update per step; a generation batch of k optimizer steps
// (steps_per_generation k x gradient_accumulation_steps, or generation_batch_size k x the
// global batch) is gbs = k x that, rl_minibatch = that: k updates per RL step. `gbs_given`: the
// command line gave the batch, which wins. Error naming per_device_train_batch_size when the group
// does not divide it.
Status ResolveFrameworkBatch(const FrameworkConfig& c, Strategy& s, bool gbs_given);

// FSDP hybrid sharding of a file that leaves the node count to the launcher (hybrid_shard_key):
// PyTorch's HYBRID_SHARD shards within a node of `gpus_per_node` GPUs and replicates across the
// nodes, so dist_opt_instances = the nodes the DP group spans; one node, or a hardware preset
// without gpus_per_node, shards over the whole group (noted in c.assumed). `given`: the command
// line gave dist_opt_instances, which wins. Error naming the key when the DP group is not whole
// nodes.
Status ResolveFrameworkLayout(FrameworkConfig& c, Strategy& s, int gpus_per_node, bool given);

// A framework file sent as text (REST "framework_config", Python `framework_config=`): its
// format (deepspeed, torchtitan, llamafactory, trl, accelerate), contents, and the contents of
// the DeepSpeed config a LLaMA-Factory / TRL / Accelerate file names; never paths.
struct FrameworkText {
  std::string format, text, deepspeed_text;
};
// Reads `in` as the CLI reads the file (`origin` prefixes the fields in errors, e.g.
// "framework_config"); `model_layers` and `model_given` as for the parsers above. A named
// DeepSpeed file whose contents were not sent is listed in `assumed` (ZeRO from the strategy).
Result<FrameworkConfig> ReadFrameworkText(const FrameworkText& in, std::string_view origin,
                                          int model_layers = 0, bool model_given = true);

// The stated global batch against the final strategy: DeepSpeed's rule train_batch_size =
// micro-batch x accumulation steps x dp. Ok when the file states none.
Status CheckFrameworkBatch(const FrameworkConfig& c, const Strategy& s);

// The keys of a strategy JSON that are accepted and not simulated (SimuMax keys whose alias is
// "ignored ..."), with their values; for the report's ignored list. Empty on bad JSON.
std::vector<Assumption> IgnoredStrategyJsonKeys(std::string_view text);

// What a SimuMax system file given as hardware had no counterpart for (spec/simumax_system.cc);
// empty for trainsim's own hardware files.
std::vector<Assumption> HardwareFileAssumptions(std::string_view text, std::string_view origin);

}  // namespace trainsim

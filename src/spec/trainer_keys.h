// Flat key -> value files of the Hugging Face training stack (a LLaMA-Factory YAML, a TRL /
// TrainingArguments JSON) read into a FrameworkConfig: typed getters whose errors name the key,
// the keys each reader consumed, and the HF TrainingArguments keys both files share
// (spec/llamafactory_config.cc, spec/trl_args.cc).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/formats.h"

namespace trainsim::detail {

class TrainerKeys {
 public:
  // `values`: key -> value as text (booleans "true"/"false", lists joined with ",").
  TrainerKeys(std::map<std::string, std::string> values, std::string origin, FrameworkConfig& out)
      : values_(std::move(values)), origin_(std::move(origin)), out_(out) {}

  bool Has(const std::string& key) const { return values_.count(key) > 0; }
  // The value, marking the key read; nullopt when absent.
  std::optional<std::string> Str(const std::string& key);
  std::optional<bool> Bool(const std::string& key);  // true/false/yes/no/on/off/1/0
  std::optional<int> Int(const std::string& key, long long min);
  std::optional<double> Number(const std::string& key, double min, double max);
  void Fail(const std::string& key, const std::string& rule);
  void Set(const std::string& canonical, const std::string& text) {
    out_.settings[canonical] = text;
  }
  void Assume(const std::string& key, const std::string& value, const std::string& why) {
    out_.assumed.push_back({key, value, why});
  }
  void Ignore(const std::string& key, const std::string& why);  // marks read, lists as ignored
  FrameworkConfig& out() { return out_; }
  // Keys not read: those in `harmless` are listed together in one `assumed` entry (they do not
  // change a step's time or memory); any other is an error naming it (`what`: the file kind).
  Status Finish(const std::set<std::string>& harmless, const std::string& what);
  const Status& status() const { return status_; }
  // The keys not read yet, in order.
  std::vector<std::string> Unread() const {
    std::vector<std::string> out;
    for (const auto& [key, value] : values_)
      if (!read_.count(key)) out.push_back(key);
    return out;
  }

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> read_;
  std::string origin_;
  FrameworkConfig& out_;
  Status status_;
};

// HF TrainingArguments keys both readers take the same way: per_device_train_batch_size,
// gradient_accumulation_steps (HF defaults 8 and 1, listed as assumed when absent), bf16 / fp16
// (with `pure_bf16`: no fp32 master weights), optim, gradient_checkpointing (only when
// `gc_default` is nullopt or the key is given), fsdp, deepspeed (a path: noted in
// deepspeed_file; an object: read with ParseDeepSpeedConfig), torch_compile.
void ReadTrainerBatch(TrainerKeys& k);
// `bf16_default`: the value of an absent bf16 (TRL's configs: true unless fp16 is set).
void ReadTrainerPrecision(TrainerKeys& k, bool pure_bf16, bool bf16_default = false);
void ReadTrainerOptim(TrainerKeys& k);
void ReadTrainerParallel(TrainerKeys& k, const std::string& deepspeed_object_json);

// An FSDP1 ShardingStrategy name (FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD,
// HYBRID_SHARD_ZERO2) as trainsim settings, for `key`: the Accelerate and HF Trainer readers
// share it. `machines`: the node count when the file states it (Accelerate num_machines); 0 when
// the launcher sets it (HF TrainingArguments), and the hybrid strategies are then resolved per
// node by ResolveFrameworkLayout.
void ApplyShardingStrategy(TrainerKeys& k, const std::string& key, const std::string& name,
                           int machines);

// How a PyTorch training script launches its kernels, as host issue per cost-graph kernel
// (docs/MODEL.md, "Launch floor and host issue"): eager (kEagerHostIssueUs, assumed), compiled
// by torch.compile without CUDA graphs (kCompiledHostIssueUs; Inductor's fusion is not modelled,
// listed under `key`) or replayed from CUDA graphs (0). `key` = `value` names the setting.
enum class PytorchLaunch { kEager, kCompiled, kCudaGraphs };
void ApplyPytorchLaunch(TrainerKeys& k, PytorchLaunch launch, const std::string& key,
                        const std::string& value);

// TRL's ModelConfig keys (model_name_or_path, attn_implementation, use_peft and the LoRA
// / bitsandbytes keys), which TRL config files hold beside the trainer's
// (spec/trl_model_config.cc). `load`: the dtype ReadTrlPrecision resolved.
void ReadTrlModelConfig(TrainerKeys& k, const std::string& load);

// The precision of a TRL run: the dtype the weights are loaded in (ModelConfig dtype, older
// torch_dtype, or model_init_kwargs' dtype, read as "model_init_kwargs.dtype") with the
// trainer's bf16 / fp16. A 16-bit load trains without fp32 master weights; float32 (or none)
// is AMP as ReadTrainerPrecision reads it. Returns the load dtype ("float32", "bfloat16",
// "float16"; "auto" taken as bfloat16).
std::string ReadTrlPrecision(TrainerKeys& k);

// The keys of HF TrainingArguments that do not change one step's time or memory (logging,
// saving, the learning-rate schedule, evaluation, hub and data-loader settings).
const std::set<std::string>& HarmlessTrainerKeys();

}  // namespace trainsim::detail

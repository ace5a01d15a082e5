// Shared reading of the Hugging Face training stack's flat key files (spec/trainer_keys.h).
//
// Sources: transformers src/transformers/training_args.py (TrainingArguments: per_device_train_
// batch_size default 8, gradient_accumulation_steps 1, bf16 / fp16 false, gradient_checkpointing
// false, optim default "adamw_torch" (OptimizerNames; "adamw_torch_fused" in the newest
// releases: the same AdamW with fp32 states), fsdp "" or "full_shard" / "shard_grad_op" /
// "hybrid_shard" / "offload" / "auto_wrap" words, deepspeed a path or a dict, torch_compile);
// the batch rule: the global batch is per_device_train_batch_size x gradient_accumulation_steps
// x the data-parallel processes (Trainer's total_train_batch_size).
#include "spec/trainer_keys.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <sstream>

#include "spec/cuda_graphs.h"
#include "spec/field_text.h"
#include "trainsim/execution.h"
#include "trainsim/finetune.h"

namespace trainsim::detail {

std::optional<std::string> TrainerKeys::Str(const std::string& key) {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  read_.insert(key);
  return it->second;
}

std::optional<bool> TrainerKeys::Bool(const std::string& key) {
  auto v = Str(key);
  if (!v) return std::nullopt;
  std::string t = *v;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t == "true" || t == "yes" || t == "on" || t == "1") return true;
  if (t == "false" || t == "no" || t == "off" || t == "0") return false;
  Fail(key, "must be true or false, got '" + *v + "'");
  return std::nullopt;
}

std::optional<int> TrainerKeys::Int(const std::string& key, long long min) {
  auto v = Str(key);
  if (!v) return std::nullopt;
  int out = 0;
  if (Status st = ParseIntText(*v, min, out); !st.ok()) {
    Fail(key, "must be an integer >= " + std::to_string(min) + ", got '" + *v + "'");
    return std::nullopt;
  }
  return out;
}

std::optional<double> TrainerKeys::Number(const std::string& key, double min, double max) {
  auto v = Str(key);
  if (!v) return std::nullopt;
  double out = 0;
  if (Status st = ParseNumberText(*v, min, max, out); !st.ok()) {
    Fail(key, "must be a number in [" + NumberText(min) + ", " + NumberText(max) + "], got '" + *v +
                  "'");
    return std::nullopt;
  }
  return out;
}

void TrainerKeys::Fail(const std::string& key, const std::string& rule) {
  if (status_.ok()) status_ = Status::Invalid(key, rule).WithContext(origin_);
}

void TrainerKeys::Ignore(const std::string& key, const std::string& why) {
  auto v = Str(key);
  if (v) out_.ignored.push_back({key, *v, why});
}

Status TrainerKeys::Finish(const std::set<std::string>& harmless, const std::string& what) {
  if (!status_.ok()) return status_;
  std::string listed;
  for (const auto& [key, value] : values_) {
    if (read_.count(key)) continue;
    if (!harmless.count(key) && !HarmlessTrainerKeys().count(key))
      return Status::Invalid(key, "unknown " + what + " key (docs/INPUTS.md lists those read)")
          .WithContext(origin_);
    listed += (listed.empty() ? "" : ", ") + key;
  }
  if (!listed.empty())
    out_.assumed.push_back({"(not simulated)", listed,
                            "logging, saving, data, schedule and evaluation keys: they "
                            "do not change one step's time or memory"});
  return Status::Ok();
}

void ReadTrainerBatch(TrainerKeys& k) {
  auto mbs = k.Int("per_device_train_batch_size", 1);
  auto gas = k.Int("gradient_accumulation_steps", 1);
  k.Set("micro_batch_size", std::to_string(mbs.value_or(8)));
  k.Set("micro_batch_num", std::to_string(gas.value_or(1)));
  if (!mbs) k.Assume("per_device_train_batch_size", "8", "HF TrainingArguments' default");
  if (!gas) k.Assume("gradient_accumulation_steps", "1", "HF TrainingArguments' default");
}

void ReadTrainerPrecision(TrainerKeys& k, bool pure_bf16, bool bf16_default) {
  const bool fp = k.Bool("fp16").value_or(false);
  const bool bf = k.Bool("bf16").value_or(bf16_default && !fp);
  // tf32 lets fp32 matmuls use the TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32);
  // under bf16/fp16 autocast the GEMMs are 16-bit anyway. Unset keeps PyTorch's default (off).
  const bool tf32 = k.Bool("tf32").value_or(false);
  if (bf && fp) return k.Fail("fp16", "bf16 and fp16 are both true");
  if (pure_bf16 && fp) return k.Fail("pure_bf16", "contradicts fp16 true");
  // AMP keeps the trained parameters and the optimizer states in fp32 (the master copy);
  // LLaMA-Factory's pure_bf16 trains the bf16 weights directly.
  k.Set("dtype", pure_bf16 || bf ? "bf16" : fp ? "fp16" : tf32 ? "tf32" : "fp32");
  k.Set("master_weights", pure_bf16 ? "false" : "true");
  // Gradients of fp32 trained parameters are fp32 (AMP); bf16 ones with pure bf16. Transformers
  // computes the loss from materialised logits (no fused cross-entropy).
  k.Set("use_fp32_accum_grad", pure_bf16 ? "false" : "true");
  k.Set("fused_cross_entropy", "false");
  if (!pure_bf16 && !bf && !fp)
    k.Assume("bf16", "false",
             tf32 ? "neither bf16 nor fp16: HF Trainer trains in fp32, tf32 true: its GEMMs on "
                    "the TF32 tensor cores"
                  : "neither bf16 nor fp16: HF Trainer trains in fp32");
}

// HF optim names -> trainsim optimizers.
void ReadTrainerOptim(TrainerKeys& k) {
  static const std::map<std::string, std::string> kNames = {
      {"adamw_torch", "adamw"},
      {"adamw_torch_fused", "adamw"},
      {"adamw_hf", "adamw"},
      {"adamw_apex_fused", "adamw"},
      {"adamw_torch_xla", "adamw"},
      {"adamw_bnb_8bit", "adamw8bit"},
      {"adamw_8bit", "adamw8bit"},
      {"paged_adamw_8bit", "paged_adamw8bit"},
      {"paged_adamw_32bit", "paged_adamw32bit"},
      {"adafactor", "adafactor"},
      {"sgd", "sgd"},
      {"lion_32bit", "lion"},
  };
  auto v = k.Str("optim");
  if (!v) {
    k.Set("optimizer", "adamw");
    k.Assume("optim", "adamw_torch", "HF TrainingArguments' default (AdamW, fp32 states)");
    return;
  }
  auto it = kNames.find(*v);
  if (it == kNames.end()) {
    std::string known;
    for (const auto& [name, ours] : kNames) known += (known.empty() ? "" : ", ") + name;
    return k.Fail("optim", "'" + *v + "' is not simulated (read: " + known + ")");
  }
  k.Set("optimizer", it->second);
}

namespace {

// TrainingArguments.fsdp: space-separated FSDPOption words (full_shard, shard_grad_op, no_shard,
// hybrid_shard, hybrid_shard_zero2, offload, auto_wrap); a sharding word names the FSDP1
// ShardingStrategy (the last one wins: TrainingArguments sets the strategy once per word), and
// FULL_SHARD is Accelerate's default when none does. `true` is full_shard. The hybrid ones
// shard within a node, replicated across the nodes the launcher starts (ResolveFrameworkLayout).
void ReadFsdp(TrainerKeys& k) {
  auto v = k.Str("fsdp");
  if (!v || v->empty() || *v == "false") return;
  std::string words = *v == "true" ? std::string("full_shard") : *v;
  std::replace(words.begin(), words.end(), ',', ' ');  // a YAML / JSON list of words
  std::istringstream in(words);
  std::string word, name = "FULL_SHARD";
  while (in >> word) {
    if (word == "full_shard" || word == "shard_grad_op" || word == "no_shard" ||
        word == "hybrid_shard" || word == "hybrid_shard_zero2") {
      name = word;
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return std::toupper(c); });
    } else if (word == "offload") {
      return k.Fail("fsdp", "offload moves the parameters to the host, which is not represented");
    } else if (word != "auto_wrap") {
      return k.Fail("fsdp", "unknown word '" + word + "'");
    }
  }
  ApplyShardingStrategy(k, "fsdp", name, 0);
}

// TrainingArguments torch_compile, torch_compile_backend (default "inductor"),
// torch_compile_mode: either of the latter turns compilation on (training_args.py
// __post_init__); without them the Trainer runs eager.
void ReadTorchCompile(TrainerKeys& k) {
  auto on = k.Bool("torch_compile");
  auto backend = k.Str("torch_compile_backend");
  auto mode = k.Str("torch_compile_mode");
  if (!on.value_or(false) && !backend && !mode)
    return ApplyPytorchLaunch(k, PytorchLaunch::kEager, "torch_compile", "false");
  std::string b = backend.value_or("inductor");
  std::transform(b.begin(), b.end(), b.begin(), [](unsigned char c) { return std::toupper(c); });
  const bool graphs = CompileCapturesGraphs(b, mode.value_or("default"));
  ApplyPytorchLaunch(k, graphs ? PytorchLaunch::kCudaGraphs : PytorchLaunch::kCompiled,
                     mode      ? "torch_compile_mode"
                     : backend ? "torch_compile_backend"
                               : "torch_compile",
                     mode.value_or(backend.value_or("true")));
}

// TrainingArguments.fsdp_config: a dict (or a JSON file's path) whose keys may carry an
// "fsdp_" prefix (training_args.py strips it). activation_checkpointing checkpoints every
// transformer layer (Accelerate's FSDP plugin); the wrapping, prefetch and loading keys are
// listed as ignored.
void ReadFsdpConfig(TrainerKeys& k) {
  auto text = k.Str("fsdp_config");
  if (!text) return;
  const auto parsed = nlohmann::json::parse(*text, nullptr, false);
  if (!parsed.is_object()) {
    k.out().ignored.push_back({"fsdp_config", *text, "an FSDP config file is not read"});
    return;
  }
  std::string rest;
  for (const auto& [raw, v] : parsed.items()) {
    const std::string key = raw.starts_with("fsdp_") ? raw.substr(5) : raw;
    if (key == "activation_checkpointing" && v.is_boolean()) {
      if (v.get<bool>()) k.Set("recompute", "full");
      continue;
    }
    if (!rest.empty()) rest += ", ";
    rest += raw;
  }
  if (!rest.empty())
    k.out().ignored.push_back(
        {"fsdp_config", rest, "FSDP wrapping, prefetch and loading details are not modelled"});
}

}  // namespace

void ReadTrainerParallel(TrainerKeys& k, const std::string& deepspeed_object_json) {
  // Plain HF Trainer without DeepSpeed or FSDP is DistributedDataParallel: nothing sharded.
  k.Set("zero_state", "0");
  ReadFsdp(k);
  if (!deepspeed_object_json.empty()) {
    k.Str("deepspeed");
    auto ds = ParseDeepSpeedConfig(deepspeed_object_json, "deepspeed");
    if (!ds.ok()) return k.Fail("deepspeed", ds.status().message());
    MergeDeepSpeedConfig(ds.value(), k.out());
  } else if (auto path = k.Str("deepspeed"); path && !path->empty()) {
    k.out().deepspeed_file = *path;
    k.Assume("deepspeed", *path,
             "the DeepSpeed file is not read here: ZeRO stage and offload from the strategy "
             "(the CLI reads it)");
  }
  ReadTorchCompile(k);
  ReadFsdpConfig(k);
}

void ApplyPytorchLaunch(TrainerKeys& k, PytorchLaunch launch, const std::string& key,
                        const std::string& value) {
  switch (launch) {
    case PytorchLaunch::kEager:
      k.Set("host_issue_us_per_kernel", NumberText(kEagerHostIssueUs));
      k.Assume("host_issue_us_per_kernel", NumberText(kEagerHostIssueUs),
               "eager PyTorch (" + key + " " + value +
                   "): the host issues every kernel from Python (measured, data/frameworks.json "
                   "about)");
      return;
    case PytorchLaunch::kCompiled:
      k.Set("host_issue_us_per_kernel", NumberText(kCompiledHostIssueUs));
      k.Assume("host_issue_us_per_kernel", NumberText(kCompiledHostIssueUs),
               "torch.compile without CUDA graphs (" + key + " " + value + "), as measured");
      k.out().ignored.push_back(
          {key, value, "Inductor's fusion is not modelled (the eager kernels are costed)"});
      return;
    case PytorchLaunch::kCudaGraphs:
      k.Set("host_issue_us_per_kernel", "0");
      k.Assume(key, value,
               "CUDA graphs: no per-kernel host launch cost (host_issue_us_per_kernel 0); the "
               "graphs' memory pool and Inductor's fusion are not modelled");
      return;
  }
}

const std::set<std::string>& HarmlessTrainerKeys() {
  static const std::set<std::string> kKeys = {"output_dir",
                                              "overwrite_output_dir",
                                              "do_train",
                                              "do_eval",
                                              "do_predict",
                                              "eval_strategy",
                                              "evaluation_strategy",
                                              "eval_steps",
                                              "per_device_eval_batch_size",
                                              "eval_accumulation_steps",
                                              "eval_delay",
                                              "prediction_loss_only",
                                              "learning_rate",
                                              "weight_decay",
                                              "adam_beta1",
                                              "adam_beta2",
                                              "adam_epsilon",
                                              "max_grad_norm",
                                              "num_train_epochs",
                                              "max_steps",
                                              "lr_scheduler_type",
                                              "lr_scheduler_kwargs",
                                              "warmup_ratio",
                                              "warmup_steps",
                                              "log_level",
                                              "logging_dir",
                                              "logging_strategy",
                                              "logging_first_step",
                                              "logging_steps",
                                              "logging_nan_inf_filter",
                                              "save_strategy",
                                              "save_steps",
                                              "save_total_limit",
                                              "save_safetensors",
                                              "save_only_model",
                                              "seed",
                                              "data_seed",
                                              "local_rank",
                                              "ddp_backend",
                                              "ddp_timeout",
                                              "ddp_find_unused_parameters",
                                              "ddp_bucket_cap_mb",
                                              "dataloader_drop_last",
                                              "dataloader_num_workers",
                                              "dataloader_pin_memory",
                                              "dataloader_persistent_workers",
                                              "dataloader_prefetch_factor",
                                              "run_name",
                                              "disable_tqdm",
                                              "remove_unused_columns",
                                              "label_names",
                                              "load_best_model_at_end",
                                              "metric_for_best_model",
                                              "greater_is_better",
                                              "report_to",
                                              "push_to_hub",
                                              "hub_model_id",
                                              "hub_strategy",
                                              "hub_token",
                                              "hub_private_repo",
                                              "resume_from_checkpoint",
                                              "gradient_checkpointing_kwargs",
                                              "include_num_input_tokens_seen",
                                              "include_tokens_per_second",
                                              "bf16_full_eval",
                                              "fp16_full_eval",
                                              "group_by_length",
                                              "length_column_name",
                                              "optim_args",
                                              "full_determinism",
                                              "use_cpu",
                                              "auto_find_batch_size",
                                              "ignore_data_skip",
                                              "accelerator_config",
                                              "average_tokens_across_devices"};
  return kKeys;
}

}  // namespace trainsim::detail

namespace trainsim {

void MergeDeepSpeedConfig(const FrameworkConfig& ds, FrameworkConfig& c) {
  for (const auto& [key, value] : ds.settings)
    if (key != "micro_batch_size" && key != "micro_batch_num" && key != "global_batch_size")
      c.settings[key] = value;
    else
      c.settings.emplace(key, value);
  // "auto" precision: ZeRO keeps and reduces the gradients in the trainer's 16-bit dtype
  // (ParseDeepSpeedConfig, ReadGradientDtype).
  const auto zero = ds.settings.find("zero_state");
  const auto dt = c.settings.find("dtype");
  if (!ds.settings.count("use_fp32_accum_grad") && zero != ds.settings.end() &&
      zero->second != "0" && dt != c.settings.end() &&
      (dt->second == "bf16" || dt->second == "fp16"))
    c.settings["use_fp32_accum_grad"] = "false";
  auto it = std::remove_if(c.assumed.begin(), c.assumed.end(),
                           [](const Assumption& a) { return a.field == "deepspeed"; });
  c.assumed.erase(it, c.assumed.end());
  // "auto" is what HF Trainer fills from TrainingArguments: the training file (read).
  for (const Assumption& a : ds.assumed)
    if (a.value != "auto") c.assumed.push_back(a);
  c.ignored.insert(c.ignored.end(), ds.ignored.begin(), ds.ignored.end());
  if (ds.stated_global_batch > 0 && c.stated_global_batch == 0) {
    c.stated_global_batch = ds.stated_global_batch;
    c.stated_global_batch_key = "deepspeed " + ds.stated_global_batch_key;
  }
}

namespace {

// The settings a launcher's FSDP / DeepSpeed plugin decides (spec/accelerate_config.cc,
// accelerate_sections.cc, ParseDeepSpeedConfig).
bool IsLayoutKey(const std::string& key) {
  static const std::set<std::string> kKeys = {"fsdp",
                                              "zero_state",
                                              "dist_opt_instances",
                                              "offload_optimizer",
                                              "optimizer_offload_fraction",
                                              "overlap_grad_reduce",
                                              "overlap_param_gather",
                                              "zero3_fetch_us",
                                              "deepspeed_reduce_bucket_elems",
                                              "zero_hpz_size",
                                              "zero_quant_weights",
                                              "zero_quant_grads",
                                              "tp_size",
                                              "pp_size",
                                              "cp_size",
                                              "enable_sequence_parallel"};
  return kKeys.count(key) > 0;
}

bool TrainerNamesLayout(const FrameworkConfig& t) {
  const auto z = t.settings.find("zero_state");
  const auto f = t.settings.find("fsdp");
  return !t.deepspeed_file.empty() || !t.hybrid_shard_key.empty() ||
         (z != t.settings.end() && z->second != "0") ||
         (f != t.settings.end() && f->second == "true");
}

}  // namespace

void MergeAccelerateUnderTrainer(const FrameworkConfig& launcher, FrameworkConfig& trainer) {
  const bool own_layout = TrainerNamesLayout(trainer);
  // Neither bf16 nor fp16 in the training file: the readers note "bf16" false (TRL's default
  // true is the file's own: TrainingArguments sets it over the launcher's).
  bool own_precision = true;
  for (const Assumption& a : trainer.assumed)
    if (a.field == "bf16" && a.value == "false") own_precision = false;
  std::set<std::string> decided = {"attention_kernel", "host_issue_us_per_kernel"};
  auto& t = trainer.settings;
  for (const auto& [key, value] : launcher.settings) {
    if (key == "world_size" || (IsLayoutKey(key) && !own_layout)) {
      t[key] = value;
    } else if ((key == "dtype" || key == "master_weights" || key == "use_fp32_accum_grad") &&
               !own_precision) {
      t[key] = value;
    } else if (key == "recompute") {
      if (value != "none" && t["recompute"] == "none") t[key] = value;
    } else {
      t.emplace(key, value);
    }
  }
  // DeepSpeed keeps and reduces the gradients in the 16-bit training dtype (MergeDeepSpeedConfig).
  const auto zero = launcher.settings.find("zero_state");
  if (!own_layout && zero != launcher.settings.end() && zero->second != "0" &&
      launcher.settings.count("fsdp") && launcher.settings.at("fsdp") != "true" &&
      (t["dtype"] == "bf16" || t["dtype"] == "fp16"))
    t["use_fp32_accum_grad"] = "false";
  // A 16-bit load trained in place (TRL dtype bfloat16, LLaMA-Factory pure_bf16) under the
  // launcher's DeepSpeed or FSDP: DeepSpeed's bf16 / fp16 optimizer keeps fp32 master partitions
  // and Accelerate upcasts an FSDP model to fp32 under mixed precision (as ReadTrlPrecision reads
  // a file's own deepspeed / fsdp).
  const auto fsdp = launcher.settings.find("fsdp");
  const bool by_fsdp = fsdp != launcher.settings.end() && fsdp->second == "true";
  const bool sharded =
      !own_layout && (by_fsdp || (zero != launcher.settings.end() && zero->second != "0"));
  if (sharded && t["master_weights"] == "false" && (t["dtype"] == "bf16" || t["dtype"] == "fp16")) {
    t["master_weights"] = "true";
    t["use_fp32_accum_grad"] = by_fsdp ? "true" : "false";
    trainer.assumed.erase(std::remove_if(trainer.assumed.begin(), trainer.assumed.end(),
                                         [](const Assumption& a) {
                                           return a.why.starts_with("16-bit weights train");
                                         }),
                          trainer.assumed.end());
    trainer.assumed.push_back(
        {"master_weights", "true",
         by_fsdp ? "the launcher's FSDP under mixed precision upcasts the 16-bit model to fp32 "
                   "(AMP: fp32 master weights and gradients)"
                 : "the launcher's DeepSpeed keeps fp32 master partitions of the 16-bit model"});
  }
  if (own_precision) decided.insert("mixed_precision");
  if (own_layout) decided.insert("deepspeed_config.zero_stage");
  decided.insert("fsdp_config.fsdp_activation_checkpointing");
  if (!own_precision)  // the launcher's mixed_precision decides, noted by the launcher
    trainer.assumed.erase(std::remove_if(trainer.assumed.begin(), trainer.assumed.end(),
                                         [](const Assumption& a) { return a.field == "bf16"; }),
                          trainer.assumed.end());
  for (const Assumption& a : launcher.assumed)
    if (!decided.count(a.field)) trainer.assumed.push_back(a);
  trainer.ignored.insert(trainer.ignored.end(), launcher.ignored.begin(), launcher.ignored.end());
  if (!own_layout) {
    trainer.hybrid_shard_key = launcher.hybrid_shard_key;
    trainer.hybrid_shard_name = launcher.hybrid_shard_name;
  }
  if (trainer.stated_global_batch == 0 && launcher.stated_global_batch > 0) {
    trainer.stated_global_batch = launcher.stated_global_batch;
    trainer.stated_global_batch_key = launcher.stated_global_batch_key;
  }
}

}  // namespace trainsim

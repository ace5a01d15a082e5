// A TRL / Hugging Face TrainingArguments JSON (--trl-args): SFTConfig, DPOConfig, GRPOConfig.
//
// Sources (huggingface/trl, trl/trainer/): base_config.py — _BaseConfig, the parent of every
// trainer's config, overrides TrainingArguments: gradient_checkpointing true, bf16 = not fp16
// when unset; sft_config.py — max_length 1024 (older releases:
// max_seq_length), packing false, padding_free false; dpo_config.py — beta 0.1, loss_type
// "sigmoid" (also "ipo", "hinge", "robust", ...; a list mixes losses), max_length 1024,
// max_prompt_length 512, precompute_ref_log_probs false, reference_free false (no reference
// model: a uniform one); grpo_config.py — num_generations 8, max_prompt_length 512,
// max_completion_length 256, beta (0.0 in recent releases: no reference model is loaded; 0.04
// before), use_vllm, vllm_mode "server" | "colocate", vllm_gpu_memory_utilization,
// vllm_tensor_parallel_size, and the batch rule: per_device_train_batch_size x
// gradient_accumulation_steps x processes counts completions, num_generations per prompt.
// GRPOConfig's defaults read here (grpo_config.py, 2026): beta 0.0 ("the reference model is not
// loaded"; huggingface/trl#4040, the maintainer: "GRPOConfig.beta defaults to 0.0"), vllm_mode
// "server" (a `trl vllm-serve` process on GPUs of its own, launched apart: its
// tensor_parallel_size and data_parallel_size default to 1, trl/scripts/vllm_serve.py), and in
// "colocate" vllm_gpu_memory_utilization 0.3 and vllm_tensor_parallel_size 1 (both apply to
// colocate only); older releases put the engine on a GPU of its own with vllm_device ("auto":
// the next free GPU). GRPOTrainer generates, scores and trains in turn (no asynchronous
// rollout). kto_config.py: desirable_weight / undesirable_weight 1.0, loss_type "kto" |
// "apo_zero_unpaired" (no KL batch). base_config.py use_liger_kernel (older SFTConfig:
// use_liger): Liger's fused linear cross-entropy in SFT, TRL's chunked per-token log-probs in
// DPO / GRPO / KTO: the logits are never held whole. `trl sft|dpo|grpo --config FILE` takes a
// YAML file of the same keys (trl/scripts/utils.py TrlParser; its `env` mapping sets
// environment variables) with ScriptArguments' dataset keys beside them.
#include <string>

#include "spec/json_fields.h"
#include "spec/trainer_keys.h"
#include "spec/yaml_mapping.h"
#include "trainsim/limits.h"

namespace trainsim {
namespace {

using detail::TrainerKeys;
using nlohmann::json;

const std::set<std::string> kHarmless = {
    "dataset_text_field", "dataset_num_proc", "dataset_kwargs", "dataset_batch_size",
    "completion_only_loss", "assistant_only_loss", "beta", "label_smoothing", "rpo_alpha",
    "truncation_mode", "padding_value", "generate_during_eval", "model_init_kwargs",
    "ref_model_init_kwargs", "disable_dropout", "temperature", "top_p", "top_k", "min_p",
    "repetition_penalty", "epsilon", "epsilon_high", "scale_rewards", "reward_weights",
    "mask_truncated_completions", "log_completions", "num_completions_to_print", "sync_ref_model",
    "ref_model_mixup_alpha", "ref_model_sync_steps", "eos_token", "pad_token", "chat_template_path",
    "shuffle_dataset", "importance_sampling_level", "delta", "top_entropy_quantile",
    "wandb_log_unique_prompts", "f_divergence_type", "f_alpha_divergence_coef", "use_weighting",
    "ld_alpha", "discopop_tau", "loss_weights", "generation_kwargs", "use_transformers_paged",
    "cache_implementation", "vllm_server_host", "vllm_server_port", "vllm_server_base_url",
    "vllm_server_timeout", "vllm_guided_decoding_regex", "max_prompt_length",
    "max_completion_length", "loss_type", "desirable_weight", "undesirable_weight",
    "pad_to_multiple_of", "eval_packing", "num_generations_eval", "ds3_gather_for_generation",
    "vllm_group_port", "vllm_model_impl", "vllm_structured_outputs_regex", "chat_template_kwargs",
    "vllm_max_model_length", "vllm_max_model_len", "vllm_enable_prefix_caching", "vllm_dtype",
    // TrlParser's env mapping; ScriptArguments (trl/scripts/
    // utils.py) and DatasetMixtureConfig
    "env", "dataset_name", "dataset_config", "dataset_train_split", "dataset_test_split",
    "dataset_streaming", "datasets", "streaming", "test_split_size",
    "gradient_checkpointing_use_reentrant", "ignore_bias_buffers",
    // open-r1's script arguments (its recipes/ YAMLs)
    "dataset_configs", "dataset_prompt_column", "chat_template", "system_prompt", "reward_funcs",
    "callbacks", "benchmarks", "wandb_entity", "wandb_project"};

// model_init_kwargs (an object, or its JSON text as TRL's CLI takes it): the trainer's
// from_pretrained arguments, whose dtype (or torch_dtype) is the load dtype, read as
// "model_init_kwargs.dtype" (detail::ReadTrlPrecision).
// JSON text is read by the file's own rules (nesting depth, duplicate keys: one of them
// would be dropped without a word).
Status InitKwargsDtype(const json& v, const std::string& origin,
                       std::map<std::string, std::string>& out) {
  json obj = v;
  if (v.is_string()) {
    auto parsed = detail::ParseJsonText(v.get<std::string>(), "model_init_kwargs");
    if (!parsed.ok()) return parsed.status().WithContext(origin);
    obj = std::move(parsed).value();
  }
  if (!obj.is_object()) return Status::Ok();
  for (const char* key : {"dtype", "torch_dtype"})
    if (auto it = obj.find(key); it != obj.end() && it->is_string()) {
      out["model_init_kwargs.dtype"] = it->get<std::string>();
      break;
    }
  return Status::Ok();
}

// The JSON object as key -> text; `deepspeed` as an object is returned apart.
Result<std::map<std::string, std::string>> Flatten(const json& j, const std::string& origin,
                                                   std::string& deepspeed) {
  std::map<std::string, std::string> out;
  for (const auto& [key, v] : j.items()) {
    // null is the field's None: its default for most keys, but SFTConfig / DPOConfig
    // max_length None is "no truncation" (default 1024), kept apart.
    if (v.is_null() && key == "max_length") out[key] = "(null)";
    if (v.is_null()) continue;
    if (key == "model_init_kwargs")
      if (Status st = InitKwargsDtype(v, origin, out); !st.ok()) return st;
    if (key == "deepspeed" && v.is_object()) {
      deepspeed = v.dump();
      out[key] = "(object)";
    } else if (key == "datasets" || key == "env") {
      out[key] = "(object)";  // DatasetMixtureConfig's list of datasets, TrlParser's env mapping
    } else if (v.is_string()) {
      out[key] = v.get<std::string>();
    } else if (v.is_boolean() || v.is_number()) {
      out[key] = v.dump();
    } else if (v.is_array()) {
      std::string joined;
      const char* sep = key == "fsdp" ? " " : ",";  // TrainingArguments.fsdp: words
      for (const auto& item : v) {
        if (item.is_object() || item.is_array())
          return Status::Invalid(key, "must be a value or a list of values").WithContext(origin);
        if (!joined.empty()) joined += sep;
        joined += item.is_string() ? item.get<std::string>() : item.dump();
      }
      out[key] = joined;
    } else {
      out[key] = v.dump();  // objects of harmless keys (gradient_checkpointing_kwargs, ...)
    }
  }
  return out;
}

// loss_type is a key of several trainers: SFTConfig's nll / dft / chunked_nll (sft_config.py),
// GRPOConfig's grpo / bnpo / dr_grpo / dapo / cispo (grpo_config.py), KTOConfig's kto /
// apo_zero_unpaired (kto_config.py); DPOConfig's others.
std::string StageOfLoss(const std::string& loss) {
  for (const char* sft : {"nll", "dft", "chunked_nll"})
    if (loss == sft) return "sft";
  for (const char* grpo : {"grpo", "bnpo", "dr_grpo", "dapo", "cispo"})
    if (loss == grpo) return "grpo";
  if (loss == "kto" || loss == "apo_zero_unpaired") return "kto";
  return "dpo";
}

// The stage the keys describe; --stage overrides it. max_completion_length is a GRPOConfig key
// and also a DPOConfig / KTOConfig one (default None: the completion's cap), and GRPOConfig has
// no max_length: with max_length or a DPO-only key beside it the file is a preference one.
std::string InferStage(TrainerKeys& k, std::string& why) {
  for (const char* key : {"num_generations", "use_vllm", "vllm_mode", "vllm_device",
                          "generation_batch_size", "steps_per_generation", "num_iterations"})
    if (k.Has(key)) {
      why = key;
      return "grpo";
    }
  for (const char* key : {"desirable_weight", "undesirable_weight"})
    if (k.Has(key)) {
      why = key;
      return "kto";
    }
  if (k.Has("loss_type")) {
    const std::string loss = k.Str("loss_type").value_or("");
    why = "loss_type " + loss;
    if (StageOfLoss(loss) != "dpo") return StageOfLoss(loss);
  }
  bool preference = k.Has("max_length") || k.Has("max_seq_length");
  for (const char* key :
       {"precompute_ref_log_probs", "reference_free", "rpo_alpha", "label_smoothing", "loss_type"})
    preference = preference || k.Has(key);
  if (k.Has("max_completion_length") && !preference) {
    why = "max_completion_length without max_length";
    return "grpo";
  }
  for (const char* key : {"loss_type", "precompute_ref_log_probs", "reference_free",
                          "max_prompt_length", "max_completion_length", "beta", "rpo_alpha"})
    if (k.Has(key)) {
      why = key;
      return "dpo";
    }
  why = "no preference or RL key";
  return "sft";
}

void ReadPreference(TrainerKeys& k, std::string& stage) {
  // SFTConfig loss_type chunked_nll: the lm_head runs on the non-ignored tokens in chunks, so the
  // logits are never held whole (sft_config.py): read as a fused cross-entropy.
  if (auto loss = k.Str("loss_type"); loss && *loss == "chunked_nll" && stage == "sft") {
    k.Set("fused_cross_entropy", "true");
    k.Assume("loss_type", *loss,
             "chunked lm_head and cross-entropy: costed as a fused cross-entropy (no fp32 "
             "logits copy)");
  }
  if (auto loss = k.Str("loss_type"); loss && *loss == "apo_zero_unpaired" && stage == "kto")
    k.Assume("loss_type", *loss,
             "costed as KTO with its KL batch (TRL computes no KL term for this loss: its "
             "policy and reference forwards of the KL batch are counted although not run)");
  if (auto loss = k.Str("loss_type"); loss && stage == "dpo") {
    if (*loss == "ipo") {
      stage = "ipo";
    } else if (*loss != "sigmoid") {
      k.Assume("loss_type", *loss, "costed as DPO (policy and reference passes)");
    }
  }
  if (k.Bool("precompute_ref_log_probs").value_or(false)) k.Set("precompute_ref", "true");
  if (k.Bool("reference_free").value_or(false)) {
    k.Set("precompute_ref", "true");
    k.Assume("reference_free", "true", "no reference forward (costed as precompute_ref)");
  }
}

// use_vllm, vllm_mode (default "server"), the older vllm_device, and the colocated engine's
// vllm_gpu_memory_utilization / vllm_tensor_parallel_size. GRPOTrainer waits for its
// completions: the rollout is synchronous in every mode.
void ReadGrpoVllm(TrainerKeys& k) {
  k.Set("async_rollout", "false");
  const bool vllm = k.Bool("use_vllm").value_or(false);
  auto mode = k.Str("vllm_mode");
  auto device = k.Str("vllm_device");
  if (mode && *mode != "colocate" && *mode != "server")
    return k.Fail("vllm_mode", "must be colocate or server, got '" + *mode + "'");
  auto mem = k.Number("vllm_gpu_memory_utilization", 0.01, 1);
  auto tp = k.Int("vllm_tensor_parallel_size", 1);
  k.Ignore("vllm_enable_sleep_mode",
           "the colocated engine's sleep during the optimizer step is not modelled apart");
  if (!vllm) {
    k.Assume("use_vllm", "false",
             "model.generate on the training GPUs, costed as a colocated vLLM engine (HF "
             "generate is slower than modelled)");
    k.Set("rollout", "colocated");
    if (mode) k.Ignore("vllm_mode", "use_vllm is false");
    return;
  }
  const bool colocate = mode && *mode == "colocate";
  if (!colocate) {
    k.Set("rollout", "separate");
    k.Set("rollout_gpus", "1");
    k.Set("rollout_tp", "1");
    if (device && !mode)
      k.Assume("vllm_device", *device,
               "generation on a vLLM engine of its own GPU (rollout_gpus 1, the trainer's "
               "processes beside it); the trainer waits for it (no async rollout)");
    else
      k.Assume("vllm_mode", mode.value_or("server"),
               std::string(mode ? "" : "GRPOConfig's default: ") +
                   "generation on a `trl vllm-serve` engine of its own GPUs, started apart: "
                   "its defaults, 1 GPU (tensor_parallel_size 1, data_parallel_size 1), give "
                   "--rollout-gpus / --rollout-tp for yours; the trainer waits for it (no "
                   "async rollout)");
    // The vllm_device releases sized that engine with vllm_gpu_memory_utilization (0.9); the
    // server takes its own --gpu_memory_utilization and --tensor_parallel_size.
    if (mem && !mode && device) k.Set("rollout_mem_fraction", std::to_string(*mem));
    if (mem && (mode || !device))
      k.Ignore("vllm_gpu_memory_utilization", "applies to vllm_mode colocate only");
    if (tp) k.Ignore("vllm_tensor_parallel_size", "applies to vllm_mode colocate only");
    return;
  }
  k.Set("rollout", "colocated");
  k.Set("rollout_mem_fraction", std::to_string(mem.value_or(0.3)));
  k.Set("rollout_tp", std::to_string(tp.value_or(1)));
  if (!mem)
    k.Assume("vllm_gpu_memory_utilization", "0.3", "GRPOConfig's default for vllm_mode colocate");
  if (!tp)
    k.Assume("vllm_tensor_parallel_size", "1", "GRPOConfig's default for vllm_mode colocate");
}

// steps_per_generation / generation_batch_size (mutually exclusive, grpo_config.py): one
// generation batch feeds steps_per_generation micro-batches per rank. A whole number k of
// optimizer steps (k x gradient_accumulation_steps) is k updates per RL step
// (ResolveFrameworkBatch); fewer micro-batches than an update generate several times per update,
// which is costed as one generation of the update's completions (listed in ignored).
void ReadGenerationBatch(TrainerKeys& k) {
  auto steps = k.Int("steps_per_generation", 1);
  auto total = k.Int("generation_batch_size", 1);
  if (steps && total)
    return k.Fail("generation_batch_size", "contradicts steps_per_generation (TRL sets one)");
  const int gas = std::stoi(k.out().settings["micro_batch_num"]);
  if (steps && *steps % gas != 0) {
    k.out().ignored.push_back(
        {"steps_per_generation", std::to_string(*steps),
         "not a multiple of gradient_accumulation_steps: costed as one generation of each "
         "optimizer step's completions"});
  } else if (steps) {
    k.out().steps_per_generation = *steps;
    k.Assume("steps_per_generation", std::to_string(*steps),
             "a generation batch trained in " + std::to_string(*steps / gas) +
                 " optimizer updates (rl_minibatch: one update's prompts)");
  }
  if (total) {
    k.out().generation_batch_size = *total;
    k.Assume("generation_batch_size", std::to_string(*total),
             "completions generated together, trained in generation_batch_size / "
             "(per_device_train_batch_size x gradient_accumulation_steps x dp) updates");
  }
}

void ReadGrpo(TrainerKeys& k) {
  const int g = k.Int("num_generations", 1).value_or(8);
  if (!k.Has("num_generations")) k.Assume("num_generations", "8", "TRL GRPOConfig's default");
  const int prompt = k.Int("max_prompt_length", 1).value_or(512);
  const int completion = k.Int("max_completion_length", 1).value_or(256);
  if (!k.Has("max_prompt_length")) k.Assume("max_prompt_length", "512", "TRL GRPOConfig's default");
  if (!k.Has("max_completion_length"))
    k.Assume("max_completion_length", "256", "TRL GRPOConfig's default");
  // In 64 bits: two lengths near 2^31 each wrap an int (and a negative seq_len named no key).
  const long long seq = 1LL * prompt + completion;
  if (seq > limits::kMaxSeqLen)
    return k.Fail("max_completion_length",
                  "max_prompt_length + max_completion_length (" + std::to_string(seq) +
                      ") must be <= " + std::to_string(limits::kMaxSeqLen) + " tokens");
  k.Set("group_size", std::to_string(g));
  k.Set("prompt_len", std::to_string(prompt));
  k.Set("max_response_len", std::to_string(completion));
  k.Set("seq_len", std::to_string(seq));
  k.Assume("max_prompt_length", std::to_string(prompt), "prompts taken as this long (mean)");
  if (auto beta = k.Number("beta", 0, 1e9)) {
    k.Set("kl_reference", *beta > 0 ? "true" : "false");
  } else if (k.Has("vllm_device")) {  // a release of vllm_device's time: beta 0.04
    k.Set("kl_reference", "true");
    k.Assume("beta", "0.04",
             "the default of the GRPOConfig releases that read vllm_device: a reference model "
             "and its forward");
  } else {
    k.Set("kl_reference", "false");
    k.Assume("beta", "0.0",
             "GRPOConfig's default: no reference model is loaded (older releases defaulted to "
             "0.04, a reference forward: give beta)");
  }
  ReadGrpoVllm(k);
  k.Ignore("num_iterations", "several updates per generation are not modelled (one update)");
  ReadGenerationBatch(k);
  // per_device_train_batch_size x gradient_accumulation_steps in 64 bits (two large counts wrapped
  // an int, to 0 at 65536 x 65536, and the batch then read as "not given").
  const long long mbs = std::stoll(k.out().settings["micro_batch_size"]);
  const long long gas = std::stoll(k.out().settings["micro_batch_num"]);
  if (mbs * gas > limits::kMaxGlobalBatch)
    return k.Fail(
        "gradient_accumulation_steps",
        "x per_device_train_batch_size (" + std::to_string(mbs * gas) +
            " completions per rank) must be <= " + std::to_string(limits::kMaxGlobalBatch));
  k.out().completions_per_rank = static_cast<int>(mbs * gas);
  k.out().micro_completions_per_rank = static_cast<int>(mbs);
}

// max_length / max_seq_length, packing, padding_free (SFT and DPO).
void ReadLength(TrainerKeys& k) {
  if (k.Str("max_length") == "(null)") {
    k.Assume("max_length", "null",
             "no truncation: the sequences are the data's own length, which the file does not "
             "say (give --seq)");
    const bool packed = k.Bool("packing").value_or(false) || k.Bool("padding_free").value_or(false);
    k.Set("packing", packed ? "true" : "false");
    k.Str("packing_strategy");
    return;
  }
  auto len = k.Int("max_length", 1);
  auto old = k.Int("max_seq_length", 1);
  if (len && old && *len != *old)
    return k.Fail("max_seq_length", "contradicts max_length (" + std::to_string(*len) + ")");
  const int seq = len ? *len : old.value_or(1024);
  if (!len && !old) k.Assume("max_length", "1024", "TRL's default");
  k.Set("seq_len", std::to_string(seq));
  const bool packing = k.Bool("packing").value_or(false);
  const bool padding_free = k.Bool("padding_free").value_or(false);
  k.Set("packing", packing || padding_free ? "true" : "false");
  if (padding_free && !packing)
    k.Assume("padding_free", "true", "no padding: costed as packed rows of max_length");
  // SFTConfig packing_strategy: "bfd" (default: whole sequences best-fit into rows of
  // max_length, padding-free) or "wrapped" (the token stream cut into rows of max_length).
  if (auto how = k.Str("packing_strategy"); how && packing)
    k.Assume("packing_strategy", *how,
             "packed rows of max_length, attention costed as causal over the row");
  if (!packing && !padding_free)
    k.Assume("max_length", std::to_string(seq),
             "every sample costed at max_length (give --mean-seq or --seq for the data)");
}

// use_liger_kernel (older SFTConfig: use_liger): the loss without whole logits (fused linear
// cross-entropy in SFT, chunked log-probs in DPO / GRPO / KTO), read as a fused cross-entropy;
// Liger's RMSNorm / RoPE / SwiGLU kernels are not modelled.
void ReadLiger(TrainerKeys& k) {
  for (const char* key : {"use_liger_kernel", "use_liger"}) {
    if (!k.Bool(key).value_or(false)) continue;
    k.Set("fused_cross_entropy", "true");
    k.out().ignored.push_back({key, "true",
                               "the loss is read (fused_cross_entropy: no whole logits); "
                               "Liger's RMSNorm, RoPE and SwiGLU kernels are not modelled"});
    return;
  }
}

// The file as a JSON object: JSON when it opens with "{", else the YAML that
// `trl <command> --config FILE` takes.
Result<json> LoadTrlFile(std::string_view text, const std::string& origin) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] == '{' || text[first] == '[')
    return detail::ParseJsonText(text, origin);
  auto yaml = detail::LoadYamlMapping(text, origin, "a TRL config file");
  if (!yaml.ok()) return yaml.status();
  auto j = detail::YamlToJson(yaml.value(), "");
  if (!j.ok()) return j.status().WithContext(origin);
  return j;
}

}  // namespace

Result<FrameworkConfig> ParseTrlArgsJson(std::string_view text, std::string_view origin_sv) {
  const std::string origin(origin_sv);
  auto parsed = LoadTrlFile(text, origin);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->is_object())
    return Status::Invalid("", "TRL / TrainingArguments keys must be a JSON object")
        .WithContext(origin);
  std::string deepspeed;
  auto values = Flatten(parsed.value(), origin, deepspeed);
  if (!values.ok()) return values.status();
  FrameworkConfig out;
  TrainerKeys k(std::move(values).value(), origin, out);
  std::string why;
  std::string stage = InferStage(k, why);
  ReadTrainerBatch(k);
  const std::string load = detail::ReadTrlPrecision(k);
  ReadTrainerOptim(k);
  // TRL's configs default gradient_checkpointing to true (trl/trainer/base_config.py
  // _BaseConfig; HF TrainingArguments' default is false).
  auto gc = k.Bool("gradient_checkpointing");
  k.Set("recompute", gc.value_or(true) ? "full" : "none");
  if (!gc)
    k.Assume("gradient_checkpointing", "true",
             "TRL's default (HF TrainingArguments' is false: give it for a plain Trainer file)");
  ReadTrainerParallel(k, deepspeed);  // after: fsdp_config's activation_checkpointing
  ReadLiger(k);
  k.Ignore("num_processes", "the launcher's process count: give --gpus");
  if (k.Bool("activation_offloading").value_or(false))
    k.Fail("activation_offloading", "offloading activations to the host is not represented");
  // Transformers' default attn_implementation is sdpa, whose flash backend is FlashAttention-2.
  k.Set("use_flash_sdp", "true");
  k.Set("attention_kernel", "fa2");
  ReadTrlModelConfig(k, load);
  if (stage == "grpo") {
    ReadGrpo(k);
  } else {
    ReadPreference(k, stage);
    ReadLength(k);
  }
  k.Set("stage", stage);
  k.Assume("stage", stage, "inferred from " + why + " (give --stage to override)");
  if (Status st = k.Finish(kHarmless, "TRL / TrainingArguments"); !st.ok()) return st;
  return out;
}

namespace {

// Completions per generation: the update's, or the generation batch of several updates.
Result<long long> GenerationCompletions(const FrameworkConfig& c, long long update_completions,
                                        int dp) {
  // generation_batch_size % (per_device_train_batch_size x processes): TRL refuses otherwise.
  if (c.steps_per_generation > 0)
    return 1LL * c.micro_completions_per_rank * c.steps_per_generation * dp;
  if (c.generation_batch_size <= 0) return update_completions;
  const long long gen = c.generation_batch_size;
  if (gen % (1LL * c.micro_completions_per_rank * dp) != 0)
    return Status::Invalid("generation_batch_size",
                           "must be divisible by per_device_train_batch_size x dp (" +
                               std::to_string(1LL * c.micro_completions_per_rank * dp) +
                               ", TRL's rule), got " + std::to_string(gen));
  return gen;
}

}  // namespace

Status ResolveFrameworkBatch(const FrameworkConfig& c, Strategy& s, bool gbs_given) {
  if (c.completions_per_rank <= 0 || gbs_given || s.dp() < 1) return Status::Ok();
  const int g = s.group_size > 0 ? s.group_size : 1;
  const long long completions = 1LL * c.completions_per_rank * s.dp();
  if (completions % g != 0)
    return Status::Invalid("per_device_train_batch_size",
                           "x gradient_accumulation_steps x dp (" + std::to_string(completions) +
                               " completions) must be divisible by num_generations (" +
                               std::to_string(g) + ")");
  auto gen = GenerationCompletions(c, completions, s.dp());
  if (!gen.ok()) return gen.status();
  // A generation batch that is not whole updates (fewer completions than one update, or not a
  // multiple of it) is costed as one generation per update.
  const long long generated =
      gen.value() > completions && gen.value() % completions == 0 ? gen.value() : completions;
  if (generated / g > limits::kMaxGlobalBatch)
    return Status::Invalid("per_device_train_batch_size",
                           "x gradient_accumulation_steps x dp / num_generations (" +
                               std::to_string(generated / g) +
                               " prompts) must be <= " + std::to_string(limits::kMaxGlobalBatch));
  s.gbs = static_cast<int>(generated / g);
  s.micro_batch_num = 0;
  s.rl_minibatch = generated > completions ? static_cast<int>(completions / g) : 0;
  s = NormaliseStrategy(s);
  return Status::Ok();
}

}  // namespace trainsim

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
#include <string>

#include "spec/json_fields.h"
#include "spec/trainer_keys.h"
#include "trainsim/limits.h"

namespace trainsim {
namespace {

using detail::TrainerKeys;
using nlohmann::json;

const std::set<std::string> kHarmless = {"dataset_text_field",
                                         "dataset_num_proc",
                                         "dataset_kwargs",
                                         "dataset_batch_size",
                                         "completion_only_loss",
                                         "assistant_only_loss",
                                         "beta",
                                         "label_smoothing",
                                         "rpo_alpha",
                                         "truncation_mode",
                                         "padding_value",
                                         "generate_during_eval",
                                         "model_init_kwargs",
                                         "ref_model_init_kwargs",
                                         "disable_dropout",
                                         "temperature",
                                         "top_p",
                                         "top_k",
                                         "min_p",
                                         "repetition_penalty",
                                         "epsilon",
                                         "epsilon_high",
                                         "scale_rewards",
                                         "reward_weights",
                                         "mask_truncated_completions",
                                         "log_completions",
                                         "num_completions_to_print",
                                         "sync_ref_model",
                                         "ref_model_mixup_alpha",
                                         "ref_model_sync_steps",
                                         "eos_token",
                                         "pad_token",
                                         "chat_template_path",
                                         "shuffle_dataset",
                                         "importance_sampling_level",
                                         "delta",
                                         "top_entropy_quantile",
                                         "wandb_log_unique_prompts",
                                         "f_divergence_type",
                                         "f_alpha_divergence_coef",
                                         "use_weighting",
                                         "ld_alpha",
                                         "discopop_tau",
                                         "loss_weights",
                                         "generation_kwargs",
                                         "use_transformers_paged",
                                         "cache_implementation",
                                         "vllm_server_host",
                                         "vllm_server_port",
                                         "vllm_server_base_url",
                                         "vllm_server_timeout",
                                         "vllm_guided_decoding_regex",
                                         "max_prompt_length",
                                         "loss_type"};

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
    if (v.is_null()) continue;
    if (key == "model_init_kwargs")
      if (Status st = InitKwargsDtype(v, origin, out); !st.ok()) return st;
    if (key == "deepspeed" && v.is_object()) {
      deepspeed = v.dump();
      out[key] = "(object)";
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
// GRPOConfig's grpo / bnpo / dr_grpo / dapo / cispo (grpo_config.py); DPOConfig's others.
std::string StageOfLoss(const std::string& loss) {
  for (const char* sft : {"nll", "dft", "chunked_nll"})
    if (loss == sft) return "sft";
  for (const char* grpo : {"grpo", "bnpo", "dr_grpo", "dapo", "cispo"})
    if (loss == grpo) return "grpo";
  return "dpo";
}

// The stage the keys describe; --stage overrides it.
std::string InferStage(TrainerKeys& k, std::string& why) {
  for (const char* key : {"num_generations", "max_completion_length", "use_vllm", "vllm_mode"})
    if (k.Has(key)) {
      why = key;
      return "grpo";
    }
  if (k.Has("loss_type")) {
    const std::string loss = k.Str("loss_type").value_or("");
    why = "loss_type " + loss;
    if (StageOfLoss(loss) != "dpo") return StageOfLoss(loss);
  }
  for (const char* key :
       {"loss_type", "precompute_ref_log_probs", "reference_free", "max_prompt_length", "beta"})
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
  } else {
    k.Assume("beta", "(absent)",
             "TRL's default is 0.0 in recent releases (no reference model) and 0.04 before: the "
             "stage's default (a reference forward) is used; give beta");
  }
  const bool vllm = k.Bool("use_vllm").value_or(false);
  if (!vllm)
    k.Assume("use_vllm", "false",
             "generation costed as a vLLM engine (HF generate is slower than modelled)");
  if (auto mode = k.Str("vllm_mode")) {
    if (*mode != "colocate" && *mode != "server")
      return k.Fail("vllm_mode", "must be colocate or server, got '" + *mode + "'");
    k.Set("rollout", *mode == "server" ? "separate" : "colocated");
  }
  if (auto f = k.Number("vllm_gpu_memory_utilization", 0.01, 1))
    k.Set("rollout_mem_fraction", std::to_string(*f));
  if (auto tp = k.Int("vllm_tensor_parallel_size", 1)) k.Set("rollout_tp", std::to_string(*tp));
  k.Ignore("num_iterations", "several updates per generation are not modelled (one update)");
  k.Ignore("steps_per_generation", "one generation per optimizer step is modelled");
  k.Ignore("generation_batch_size", "one generation per optimizer step is modelled");
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
}

// max_length / max_seq_length, packing, padding_free (SFT and DPO).
void ReadLength(TrainerKeys& k) {
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
  if (!packing && !padding_free)
    k.Assume("max_length", std::to_string(seq),
             "every sample costed at max_length (give --mean-seq or --seq for the data)");
}

}  // namespace

Result<FrameworkConfig> ParseTrlArgsJson(std::string_view text, std::string_view origin_sv) {
  const std::string origin(origin_sv);
  auto parsed = detail::ParseJsonText(text, origin);
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
  k.Ignore("use_liger_kernel", "Liger's fused kernels are not modelled");
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

Status ResolveFrameworkBatch(const FrameworkConfig& c, Strategy& s, bool gbs_given) {
  if (c.completions_per_rank <= 0 || gbs_given || s.dp() < 1) return Status::Ok();
  const int g = s.group_size > 0 ? s.group_size : 1;
  const long long completions = 1LL * c.completions_per_rank * s.dp();
  if (completions % g != 0)
    return Status::Invalid("per_device_train_batch_size",
                           "x gradient_accumulation_steps x dp (" + std::to_string(completions) +
                               " completions) must be divisible by num_generations (" +
                               std::to_string(g) + ")");
  if (completions / g > limits::kMaxGlobalBatch)
    return Status::Invalid("per_device_train_batch_size",
                           "x gradient_accumulation_steps x dp / num_generations (" +
                               std::to_string(completions / g) +
                               " prompts) must be <= " + std::to_string(limits::kMaxGlobalBatch));
  s.gbs = static_cast<int>(completions / g);
  s.micro_batch_num = 0;
  s.rl_minibatch = 0;
  s = NormaliseStrategy(s);
  return Status::Ok();
}

}  // namespace trainsim

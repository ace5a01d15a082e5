// LLaMA-Factory training YAML (--llamafactory), read with yaml-cpp.
//
// Sources (hiyouga/LLaMA-Factory, src/llamafactory/hparams/): finetuning_args.py — stage
// pt|sft|rm|ppo|dpo|kto (default sft), finetuning_type lora|oft|freeze|full (default lora),
// lora_rank 8, lora_alpha None = lora_rank * 2, lora_dropout 0, lora_target "all",
// additional_target, use_dora, pissa_init, freeze_trainable_layers 2 (positive: the last n layers
// train; negative: the first n), freeze_trainable_modules "all", freeze_extra_modules, pref_loss
// sigmoid|hinge| ipo|kto_pair|orpo|simpo (default sigmoid; use_ref_model = dpo and not orpo/simpo),
// oft_rank 0 / oft_block_size 32, use_galore / use_apollo / use_badam / use_adam_mini / use_muon,
// pure_bf16; model_args.py — quantization_bit None, quantization_method bnb, quantization_type nf4,
// double_quantization true, flash_attn auto, disable_gradient_checkpointing false (checkpointing
// on by default), enable_liger_kernel, use_unsloth; data_args.py — cutoff_len 2048, packing None
// (on for stage pt only), neat_packing; generating_args.py — max_new_tokens 1024 (PPO's
// responses). The HF TrainingArguments keys are read in spec/trainer_keys.cc.
#include <yaml-cpp/yaml.h>

#include <string>

#include "spec/trainer_keys.h"
#include "spec/yaml_mapping.h"
#include "trainsim/finetune.h"
#include "trainsim/limits.h"

namespace trainsim {
namespace {

using detail::TrainerKeys;

// LLaMA-Factory keys that do not change one step's time or memory.
const std::set<std::string> kHarmless = {"trust_remote_code",
                                         "dataset",
                                         "eval_dataset",
                                         "dataset_dir",
                                         "media_dir",
                                         "template",
                                         "max_samples",
                                         "overwrite_cache",
                                         "preprocessing_num_workers",
                                         "preprocessing_batch_size",
                                         "plot_loss",
                                         "val_size",
                                         "eval_on_each_dataset",
                                         "pref_beta",
                                         "pref_ftx",
                                         "pref_bco_weight",
                                         "simpo_gamma",
                                         "dpo_label_smoothing",
                                         "kto_chosen_weight",
                                         "kto_rejected_weight",
                                         "lora_dropout",
                                         "use_rslora",
                                         "loraplus_lr_ratio",
                                         "loraplus_lr_embedding",
                                         "pissa_iter",
                                         "pissa_convert",
                                         "create_new_adapter",
                                         "module_dropout",
                                         "train_on_prompt",
                                         "mask_history",
                                         "streaming",
                                         "buffer_size",
                                         "mix_strategy",
                                         "interleave_probs",
                                         "tokenized_path",
                                         "ignore_pad_token_for_loss",
                                         "adapter_name_or_path",
                                         "adapter_folder",
                                         "cache_dir",
                                         "use_fast_tokenizer",
                                         "model_revision",
                                         "low_cpu_mem_usage",
                                         "hf_hub_token",
                                         "ms_hub_token",
                                         "om_hub_token",
                                         "print_param_status",
                                         "compute_accuracy",
                                         "disable_shuffling",
                                         "early_stopping_steps",
                                         "include_effective_tokens_per_second",
                                         "use_swanlab",
                                         "swanlab_project",
                                         "swanlab_workspace",
                                         "swanlab_run_name",
                                         "swanlab_mode",
                                         "swanlab_api_key",
                                         "swanlab_logdir",
                                         "ppo_score_norm",
                                         "ppo_whiten_rewards",
                                         "ppo_target",
                                         "reward_model_type",
                                         "ref_model_adapters",
                                         "reward_model_adapters",
                                         "tool_format",
                                         "upcast_layernorm",
                                         "upcast_lmhead_output",
                                         "use_reentrant_gc",
                                         "temperature",
                                         "top_p",
                                         "top_k",
                                         "do_sample",
                                         "num_beams",
                                         "repetition_penalty",
                                         "length_penalty",
                                         "infer_dtype",
                                         "rope_scaling",
                                         "moe_aux_loss_coef",
                                         "resize_vocab",
                                         "split_special_tokens"};

// The YAML's top-level mapping as key -> text; lists are joined with "," (LLaMA-Factory's
// split_arg accepts both); null values are absent (the field's default).
Result<std::map<std::string, std::string>> Flatten(std::string_view text,
                                                   const std::string& origin) {
  auto loaded = detail::LoadYamlMapping(text, origin, "a LLaMA-Factory training file");
  if (!loaded.ok()) return loaded.status();
  const YAML::Node& root = loaded.value();
  std::map<std::string, std::string> out;
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    if (v.IsNull()) continue;
    if (v.IsScalar()) {
      out[key] = v.Scalar();
    } else if (v.IsSequence()) {
      std::string joined;
      for (const auto& item : v) {
        if (!item.IsScalar())
          return Status::Invalid(key, "must be a value or a list of values").WithContext(origin);
        joined += (joined.empty() ? "" : ",") + item.Scalar();
      }
      out[key] = joined;
    } else if (key == "fsdp_config" || key == "deepspeed") {
      auto dict = detail::YamlToJson(v, key);  // TrainingArguments takes a dict for both
      if (!dict.ok()) return dict.status().WithContext(origin);
      out[key] = dict->dump();
    } else {
      return Status::Invalid(key, "must be a value or a list of values, not a mapping")
          .WithContext(origin);
    }
  }
  return out;
}

// stage + pref_loss -> trainsim's stage.
void ReadStage(TrainerKeys& k) {
  auto stage = k.Str("stage");
  auto loss = k.Str("pref_loss");
  if (!stage) k.Assume("stage", "sft", "LLaMA-Factory's default");
  const std::string st = stage.value_or("sft");
  static const std::map<std::string, std::string> kStages = {{"pt", "pretrain"}, {"sft", "sft"},
                                                             {"rm", "rm"},       {"ppo", "ppo"},
                                                             {"dpo", "dpo"},     {"kto", "kto"}};
  auto it = kStages.find(st);
  if (it == kStages.end())
    return k.Fail("stage", "must be pt, sft, rm, ppo, dpo or kto, got '" + st + "'");
  std::string ours = it->second;
  if (st == "dpo" && loss) {
    if (*loss == "ipo" || *loss == "simpo" || *loss == "orpo") {
      ours = *loss;
    } else if (*loss == "hinge" || *loss == "kto_pair") {
      k.Assume("pref_loss", *loss, "costed as DPO (the same passes: policy and reference)");
    } else if (*loss != "sigmoid") {
      return k.Fail("pref_loss",
                    "must be sigmoid, hinge, ipo, kto_pair, orpo or simpo, got '" + *loss + "'");
    }
  }
  k.Set("stage", ours);
}

// finetuning_type lora (+ quantization_bit, use_dora, pissa_init).
void ReadLora(TrainerKeys& k, bool quantized) {
  const bool dora = k.Bool("use_dora").value_or(false);
  const bool pissa = k.Bool("pissa_init").value_or(false);
  if (dora && quantized)
    return k.Fail("use_dora", "DoRA on a quantized base (QDoRA) is not represented");
  if (dora && pissa) return k.Fail("pissa_init", "contradicts use_dora");
  k.Set("method", quantized ? "qlora" : dora ? "dora" : pissa ? "pissa" : "lora");
  const int rank = k.Int("lora_rank", 1).value_or(8);
  k.Set("lora_rank", std::to_string(rank));
  auto alpha = k.Str("lora_alpha");                                 // no effect on time or memory
  k.Set("lora_alpha", alpha.value_or(std::to_string(2LL * rank)));  // 2 x 2^30 wraps an int
  auto dropout = k.Str("lora_dropout");
  if (!dropout) k.Assume("lora_dropout", "0", "LLaMA-Factory's default");
  k.Set("lora_dropout", dropout.value_or("0"));
  auto targets = k.Str("lora_target");
  if (!targets) k.Assume("lora_target", "all", "LLaMA-Factory's default: every linear layer");
  const std::string t = targets.value_or("all");
  if (auto mask = ParseLoraTargets(t == "all" ? "all-linear" : t); !mask.ok())
    return k.Fail("lora_target", mask.status().message());
  k.Set("lora_targets", t == "all" ? "all-linear" : t);
}

// The modules a list trains besides the adapters / the trained layers: the embedding and the
// output layer set train_embeddings; others (norms) are listed.
void ReadExtraModules(TrainerKeys& k, const std::string& key) {
  auto v = k.Str(key);
  if (!v) return;
  const bool emb = v->find("embed_tokens") != std::string::npos ||
                   v->find("lm_head") != std::string::npos || v->find("wte") != std::string::npos;
  if (emb) k.Set("train_embeddings", "true");
  k.Assume(key, *v,
           emb ? "embedding and output layer trained in full (train_embeddings)"
               : "modules besides the embedding and output layer: their parameters not counted");
}

void ReadFreeze(TrainerKeys& k, int model_layers) {
  k.Set("method", "freeze");
  auto n = k.Str("freeze_trainable_layers");
  int trained = 2;
  if (n) {
    auto v = k.Int("freeze_trainable_layers", -1000000);
    if (!v) return;
    trained = *v;
  }
  if (trained <= 0)
    return k.Fail(
        "freeze_trainable_layers",
        "trainsim trains the last layers (a positive count), got " + std::to_string(trained));
  if (auto mods = k.Str("freeze_trainable_modules"); mods && *mods != "all")
    return k.Fail("freeze_trainable_modules",
                  "only 'all' is represented (whole layers train), got '" + *mods + "'");
  if (model_layers > 0) k.Set("freeze_layers", std::to_string(std::max(0, model_layers - trained)));
  if (!n)
    k.Assume("freeze_trainable_layers", "2", "LLaMA-Factory's default: the last 2 layers train");
  if (model_layers <= 0 && n)
    k.Assume("freeze_trainable_layers", *n,
             "the model's layer count is unknown here: trainsim's default (all but 2) is used");
  ReadExtraModules(k, "freeze_extra_modules");
}

// quantization_bit / method / type; true when the base is 4-bit NF4 (QLoRA).
bool ReadQuantization(TrainerKeys& k) {
  auto bits = k.Int("quantization_bit", 1);
  auto method = k.Str("quantization_method");
  auto type = k.Str("quantization_type");
  auto dq = k.Bool("double_quantization");
  if (!bits) return false;
  if (*bits != 4) {
    k.Fail("quantization_bit",
           "only a 4-bit base (QLoRA) is represented, got " + std::to_string(*bits));
    return false;
  }
  if (method && *method != "bnb" && *method != "bitsandbytes") {
    k.Fail("quantization_method", "only bitsandbytes NF4 is represented, got '" + *method + "'");
    return false;
  }
  if (type && *type == "fp4")
    k.Assume("quantization_type", "fp4", "costed as NF4 (same bytes and dequantisation)");
  if (dq && !*dq)
    k.Assume("double_quantization", "false",
             "base costed at 4.127 bits/param (double-quantised constants); without it 4.5");
  return true;
}

void ReadMethod(TrainerKeys& k, int model_layers) {
  auto type = k.Str("finetuning_type");
  if (!type) k.Assume("finetuning_type", "lora", "LLaMA-Factory's default");
  const std::string t = type.value_or("lora");
  const bool quantized = ReadQuantization(k);
  if (quantized && t != "lora")
    return k.Fail("quantization_bit", "a quantized base is read with finetuning_type lora only");
  for (const char* key :
       {"use_galore", "use_apollo", "use_badam", "use_adam_mini", "use_llama_pro", "use_mca"})
    if (k.Bool(key).value_or(false))
      return k.Fail(key, "is not simulated (its optimizer states and extra work are not costed)");
  if (k.Bool("use_muon").value_or(false)) k.Set("optimizer", "muon");
  if (t == "full") {
    k.Set("method", "full");
  } else if (t == "freeze") {
    ReadFreeze(k, model_layers);
  } else if (t == "lora") {
    ReadLora(k, quantized);
    ReadExtraModules(k, "additional_target");
  } else if (t == "oft") {
    auto r = k.Int("oft_rank", 0);
    if (!r || *r == 0)
      return k.Fail("oft_block_size", "trainsim's OFT takes the block count: give oft_rank");
    k.Set("method", "oft");
    k.Set("lora_rank", std::to_string(*r));
    k.Str("oft_block_size");
    ReadExtraModules(k, "additional_target");
  } else {
    k.Fail("finetuning_type", "must be lora, oft, freeze or full, got '" + t + "'");
  }
}

// cutoff_len, packing, PPO's response cap.
void ReadSequence(TrainerKeys& k) {
  const bool pt = k.out().settings["stage"] == "pretrain";
  const bool ppo = k.out().settings["stage"] == "ppo";
  auto cutoff = k.Int("cutoff_len", 1);
  if (!cutoff) k.Assume("cutoff_len", "2048", "LLaMA-Factory's default");
  const int len = cutoff.value_or(2048);
  auto packing = k.Bool("packing");
  const bool neat = k.Bool("neat_packing").value_or(false);
  const bool packed = neat || packing.value_or(pt);
  k.Set("packing", packed ? "true" : "false");
  if (!packing && !neat)
    k.Assume("packing", packed ? "true" : "false", "LLaMA-Factory's default: packing for pt only");
  if (!packed && !ppo)
    k.Assume("cutoff_len", std::to_string(len),
             "every sample costed at cutoff_len (LLaMA-Factory pads a batch to its longest "
             "sample: give --seq the mean padded length and --max-seq the longest)");
  if (neat)
    k.Assume("neat_packing", "true", "packed rows costed with causal attention over the row");
  if (!ppo) {
    k.Set("seq_len", std::to_string(len));
    return;
  }
  auto resp = k.Int("max_new_tokens", 1);
  if (!resp) k.Assume("max_new_tokens", "1024", "LLaMA-Factory's generating default");
  // In 64 bits: cutoff_len + max_new_tokens wrapped an int (a negative seq_len naming no key).
  const long long seq = 1LL * len + resp.value_or(1024);
  if (seq > limits::kMaxSeqLen)
    return k.Fail("max_new_tokens", "cutoff_len + max_new_tokens (" + std::to_string(seq) +
                                        ") must be <= " + std::to_string(limits::kMaxSeqLen) +
                                        " tokens");
  k.Set("prompt_len", std::to_string(len));
  k.Set("max_response_len", std::to_string(resp.value_or(1024)));
  k.Set("seq_len", std::to_string(seq));
  k.Assume("cutoff_len", std::to_string(len), "PPO: the prompt length (cutoff_len)");
  k.Ignore("ppo_epochs", "PPO epochs over the buffer are not modelled (one update per batch)");
  k.Ignore("ppo_buffer_size", "the experience buffer is not modelled");
}

void ReadKernels(TrainerKeys& k) {
  auto fa = k.Str("flash_attn");
  const std::string f = fa.value_or("auto");
  // PyTorch SDPA's flash backend is FlashAttention-2's kernel; Transformers models do not use
  // TE / cuDNN fused attention.
  // fa3 (Hopper) and fa4 (Blackwell; examples/train_full/qwen3_full_sft_fa4.yaml) have no
  // trainsim kernel of their own: costed as FlashAttention-2, which they outrun (assumed).
  if (f == "fa2" || f == "auto" || f == "sdpa" || f == "fa3" || f == "fa4") {
    k.Set("use_flash_sdp", "true");
    k.Set("attention_kernel", "fa2");
    if (!fa) k.Assume("flash_attn", "auto", "costed as FlashAttention-2 (SDPA's flash backend)");
    if (f == "fa3" || f == "fa4")
      k.Assume("flash_attn", f, "costed as FlashAttention-2 (slower than " + f + ")");
  } else if (f == "disabled" || f == "eager") {
    k.Set("use_flash_sdp", "false");
  } else {
    return k.Fail("flash_attn", "must be auto, disabled, sdpa, fa2, fa3 or fa4, got '" + f + "'");
  }
  // model_utils/checkpointing.py prepare_model_for_training checkpoints unless
  // disable_gradient_checkpointing; TrainingArguments' gradient_checkpointing true turns it on
  // too (Trainer), false turns nothing off.
  auto off = k.Bool("disable_gradient_checkpointing");
  auto gc = k.Bool("gradient_checkpointing");
  const bool on = !off.value_or(false) || gc.value_or(false);
  k.Set("recompute", on ? "full" : "none");
  if (!off)
    k.Assume("disable_gradient_checkpointing", "false",
             "LLaMA-Factory checkpoints every layer unless disabled");
  if (gc && !*gc && on)
    k.out().ignored.push_back({"gradient_checkpointing", "false",
                               "LLaMA-Factory checkpoints every layer unless "
                               "disable_gradient_checkpointing is true"});
  k.Ignore("use_unsloth", "Unsloth's kernels are not modelled");
  k.Ignore("use_unsloth_gc", "Unsloth's offloaded checkpointing is not modelled");
  k.Ignore("shift_attn", "S^2-Attn is not modelled");
  k.Ignore("mixture_of_depths", "mixture-of-depths is not modelled");
  if (k.Bool("fp8").value_or(false)) k.Set("dtype", "fp8");
  k.Ignore("fp8_backend", "the FP8 recipe is the hardware preset's");
}

// enable_liger_kernel (model_utils/liger_kernel.py, called with require_logits = stage not pt /
// sft): Liger's fused linear cross-entropy for pt and sft, the logits never held whole (read as
// a fused cross-entropy); the other stages keep the logits (their log-probs need them). Liger's
// RMSNorm, RoPE and SwiGLU kernels are not modelled.
void ReadLiger(TrainerKeys& k) {
  if (!k.Bool("enable_liger_kernel").value_or(false)) return;
  const std::string stage = k.out().settings["stage"];
  const bool fused = stage == "pretrain" || stage == "sft";
  if (fused) k.Set("fused_cross_entropy", "true");
  k.out().ignored.push_back(
      {"enable_liger_kernel", "true",
       std::string(fused ? "the fused linear cross-entropy is read (fused_cross_entropy); "
                         : "stage " + stage + " keeps the logits (no fused loss); ") +
           "Liger's RMSNorm, RoPE and SwiGLU kernels are not modelled"});
}

// Reference and reward models besides the policy (DPO, KTO, PPO).
void ReadModels(TrainerKeys& k) {
  if (auto ref = k.Str("ref_model"))
    k.Assume("ref_model", *ref, "a reference of the policy's size and precision");
  k.Ignore("ref_model_quantization_bit", "the reference is costed in the training precision");
  if (auto rm = k.Str("reward_model"))
    k.Assume("reward_model", *rm, "a reward model of the policy's size");
  k.Ignore("reward_model_quantization_bit", "the reward model is costed in the training dtype");
  if (auto m = k.Str("model_name_or_path")) k.out().model_path = *m;
}

// pure_bf16 with DeepSpeed: LLaMA-Factory refuses it with ZeRO-3 (hparams/parser.py: "`pure_bf16`
// is incompatible with DeepSpeed ZeRO-3."); under ZeRO-0/1/2 DeepSpeed's bf16 optimizer keeps
// fp32 partitions of the weights (the master copy) whatever the model's dtype.
void ReadPureBf16UnderDeepSpeed(TrainerKeys& k) {
  if (!k.Bool("pure_bf16").value_or(false) || !k.Has("deepspeed")) return;
  const auto& st = k.out().settings;
  if (st.count("zero_state") && st.at("zero_state") == "3")
    return k.Fail("pure_bf16", "is incompatible with DeepSpeed ZeRO-3 (LLaMA-Factory's rule)");
  k.Set("master_weights", "true");
  k.Set("use_fp32_accum_grad", "true");
  k.Assume("pure_bf16", "true",
           "DeepSpeed keeps fp32 master partitions of the bf16 weights: costed with fp32 master "
           "weights");
}

}  // namespace

Result<FrameworkConfig> ParseLlamaFactoryYaml(std::string_view text, std::string_view origin_sv,
                                              int model_layers) {
  const std::string origin(origin_sv);
  auto values = Flatten(text, origin);
  if (!values.ok()) return values.status();
  FrameworkConfig out;
  TrainerKeys k(std::move(values).value(), origin, out);
  ReadStage(k);
  ReadMethod(k, model_layers);
  ReadSequence(k);
  ReadModels(k);
  ReadKernels(k);
  ReadTrainerBatch(k);
  ReadTrainerPrecision(k, k.Bool("pure_bf16").value_or(false));
  ReadLiger(k);  // after the precision keys, which set the unfused loss
  if (out.settings.count("optimizer") == 0 || k.Has("optim")) ReadTrainerOptim(k);
  // deepspeed as a mapping: the DeepSpeed config itself (a path otherwise).
  std::string ds_object;
  if (k.Has("deepspeed"))
    if (auto ds = k.Str("deepspeed"); ds && ds->starts_with("{")) ds_object = *ds;
  ReadTrainerParallel(k, ds_object);
  ReadPureBf16UnderDeepSpeed(k);
  if (Status st = k.Finish(kHarmless, "LLaMA-Factory"); !st.ok()) return st;
  return out;
}

}  // namespace trainsim

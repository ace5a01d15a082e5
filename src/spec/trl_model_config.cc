// TRL's ModelConfig keys, which `trl sft|dpo|grpo --config FILE` files hold beside the trainer's
// (--trl-args).
//
// Source: huggingface/trl trl/trainer/model_config.py, ModelConfig: model_name_or_path,
// dtype (older torch_dtype), attn_implementation (older use_flash_attention_2), use_peft false,
// lora_r 16, lora_alpha 32, lora_dropout 0.05, lora_target_modules None (PEFT's per-architecture
// default: q_proj and v_proj for Llama / Qwen / Mistral, peft/utils/constants.py
// TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING), use_dora, load_in_8bit / load_in_4bit
// (not both), bnb_4bit_quant_type "nf4".
//
// The load dtype (ReadTrlPrecision). Sources: trl/trainer/utils.py create_model_from_path (the
// trainers' from_pretrained: dtype "float32" unless given; "auto" takes the checkpoint's dtype,
// transformers PreTrainedModel.from_pretrained); Accelerate's bf16 / fp16 mixed precision is
// torch.autocast around the forward, so the parameters keep the loaded dtype and there is no fp32
// master copy (huggingface/trl issue 5138); torch.optim.AdamW creates its states with
// zeros_like(param), in the parameter dtype; torch.amp.GradScaler refuses fp16 parameters
// ("Attempting to unscale FP16 gradients"), so a float16 load cannot train with fp16 true.
#include <optional>
#include <string>

#include "spec/trainer_keys.h"
#include "trainsim/finetune.h"

namespace trainsim::detail {
namespace {

// attn_implementation: Transformers' names. sdpa (the default) and flash_attention_2 run
// FlashAttention-2 kernels; eager materialises the scores.
void ReadAttention(TrainerKeys& k) {
  auto impl = k.Str("attn_implementation");
  if (k.Bool("use_flash_attention_2").value_or(false) && !impl) impl = "flash_attention_2";
  if (!impl || *impl == "sdpa" || *impl == "flash_attention_2") return;  // fa2, set by the reader
  if (*impl == "eager") {
    k.Set("use_flash_sdp", "false");
  } else if (*impl == "flex_attention") {
    k.out().ignored.push_back({"attn_implementation", *impl,
                               "FlexAttention has no trainsim kernel: costed as FlashAttention-2"});
  } else {  // flash_attention_3, kernels-community/... hub kernels
    k.Assume("attn_implementation", *impl, "costed as FlashAttention-2 (attention_kernel fa2)");
  }
}

void ReadPeft(TrainerKeys& k) {
  const bool four = k.Bool("load_in_4bit").value_or(false);
  if (k.Bool("load_in_8bit").value_or(false))
    return k.Fail("load_in_8bit", four ? "cannot be set with load_in_4bit (TRL's rule)"
                                       : "8-bit base weights are not represented (qlora is the "
                                         "4-bit NF4 base)");
  auto quant = k.Str("bnb_4bit_quant_type");
  if (four && quant.value_or("nf4") != "nf4")
    return k.Fail("bnb_4bit_quant_type", "only nf4 is represented (QLoRA), got '" + *quant + "'");
  k.Bool("use_bnb_nested_quant");  // double quantization: a few MB, not costed
  const bool dora = k.Bool("use_dora").value_or(false);
  for (const char* key : {"lora_task_type", "use_rslora"}) k.Str(key);
  if (!k.Bool("use_peft").value_or(false)) {
    for (const char* key :
         {"lora_r", "lora_alpha", "lora_dropout", "lora_target_modules", "lora_modules_to_save"})
      if (k.Has(key)) k.Ignore(key, "use_peft is false: full fine-tuning");
    if (four) k.Fail("load_in_4bit", "a 4-bit base trains only adapters: set use_peft");
    return;
  }
  k.Set("method", four ? "qlora" : dora ? "dora" : "lora");
  auto r = k.Int("lora_r", 1);
  if (!r) k.Assume("lora_r", "16", "TRL's default");
  k.Set("lora_rank", std::to_string(r.value_or(16)));
  k.Set("lora_alpha", k.Str("lora_alpha").value_or("32"));
  auto dropout = k.Str("lora_dropout");
  if (!dropout) k.Assume("lora_dropout", "0.05", "TRL's ModelConfig default");
  k.Set("lora_dropout", dropout.value_or("0.05"));
  auto targets = k.Str("lora_target_modules");
  if (!targets)
    k.Assume("lora_target_modules", "q_proj,v_proj",
             "PEFT's default for Llama-family models (other architectures differ)");
  const std::string t = targets.value_or("q_proj,v_proj");
  if (auto mask = ParseLoraTargets(t); !mask.ok())
    return k.Fail("lora_target_modules", mask.status().message());
  k.Set("lora_targets", t);
  if (auto save = k.Str("lora_modules_to_save"))
    k.Ignore("lora_modules_to_save", "modules trained in full besides the adapters are not costed");
}

}  // namespace

namespace {

// The wrappers that hold 16-bit weights in fp32 whatever the load: Accelerate upcasts the
// model to fp32 under FSDP with mixed precision on ("we follow DeepSpeed's strategy to hold the
// parameters in full precision", accelerator.py prepare_model; fsdp2_prepare_model likewise),
// and DeepSpeed's bf16 / fp16 optimizers keep fp32 partitions of the weights. The reason, or
// nullptr when neither wraps the model.
const char* UpcastBy(TrainerKeys& k, bool mixed) {
  auto fsdp = k.Str("fsdp");
  auto ds = k.Str("deepspeed");
  if (ds && !ds->empty())
    return "DeepSpeed keeps fp32 master partitions of 16-bit weights: mixed precision with fp32 "
           "master weights, as a float32 load";
  if (mixed && fsdp && !fsdp->empty() && *fsdp != "false")
    return "Accelerate upcasts a 16-bit model to fp32 under FSDP with bf16 / fp16 on: mixed "
           "precision with fp32 master weights, as a float32 load";
  return nullptr;
}

}  // namespace

std::string ReadTrlPrecision(TrainerKeys& k) {
  // TRL's configs (trl/trainer/base_config.py, _BaseConfig.__post_init__): bf16 = not fp16 when
  // unset; HF TrainingArguments' default is false.
  if (!k.Has("bf16") && !k.Bool("fp16").value_or(false))
    k.Assume("bf16", "true",
             "TRL's default when fp16 is not set (HF TrainingArguments' is false: give bf16 "
             "false for fp32)");
  std::optional<std::string> load;
  std::string from;
  for (const char* key : {"dtype", "torch_dtype", "model_init_kwargs.dtype"}) {
    auto d = k.Str(key);
    if (!d) continue;
    if (*d != "auto" && *d != "bfloat16" && *d != "float16" && *d != "float32") {
      k.Fail(key, "must be auto, bfloat16, float16 or float32, got '" + *d + "'");
      return "float32";
    }
    if (load && *load != *d) {
      k.Fail(key, "contradicts " + from + " (" + *load + ")");
      return "float32";
    }
    load = *d;
    from = key;
  }
  if (!load || *load == "float32") {
    ReadTrainerPrecision(k, false, true);
    return "float32";
  }
  const bool fp = k.Bool("fp16").value_or(false);
  const bool bf = k.Bool("bf16").value_or(!fp);  // TRL's default
  const bool half = *load == "float16";
  if (const char* why = UpcastBy(k, bf || fp)) {
    ReadTrainerPrecision(k, false, true);
    k.Assume(from, *load, why);
    return *load == "auto" ? "bfloat16" : *load;
  }
  if (bf && fp) k.Fail("fp16", "bf16 and fp16 are both true");
  if (half && fp)
    k.Fail("fp16", "cannot be true with " + from +
                       " float16: the fp16 grad scaler refuses fp16 parameters (PyTorch: "
                       "\"Attempting to unscale FP16 gradients\")");
  if (*load == "auto")
    k.Assume(from, "auto",
             "the checkpoint's dtype, taken as bfloat16 (the config.json torch_dtype of most "
             "published checkpoints); give float32 for fp32 master weights");
  // autocast picks the GEMM precision (fp16 true: fp16); without it the weights' own dtype.
  k.Set("dtype", fp || (half && !bf) ? "fp16" : "bf16");
  k.Set("master_weights", "false");
  k.Set("use_fp32_accum_grad", "false");
  k.Set("fused_cross_entropy", "false");
  const std::string resolved = half ? "float16" : "bfloat16";
  k.Assume(from, resolved,
           "16-bit weights train in place: no fp32 master copy, 16-bit gradients and AdamW "
           "states in the parameter dtype (bf16 / fp16 only add autocast)");
  return resolved;
}

void ReadTrlModelConfig(TrainerKeys& k, const std::string& load) {
  if (auto m = k.Str("model_name_or_path")) k.out().model_path = *m;
  for (const char* key : {"model_revision", "trust_remote_code"}) k.Str(key);
  ReadAttention(k);
  ReadPeft(k);
  if (load == "float32" && k.out().settings.count("method") &&
      k.out().settings.at("method") != "qlora")
    k.Assume("dtype", "float32",
             "the frozen base is held in fp32 by Transformers (4 B per parameter); trainsim "
             "costs it at 2 B: give dtype bfloat16 to load it in 16 bits");
}

}  // namespace trainsim::detail

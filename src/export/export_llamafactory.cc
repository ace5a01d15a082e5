// LLaMA-Factory training YAML (`llamafactory-cli train FILE`). Keys: LLaMA-Factory
// src/llamafactory/hparams/finetuning_args.py (stage pt|sft|rm|ppo|dpo|kto; finetuning_type
// lora|oft|freeze|full; lora_rank, lora_alpha, lora_dropout (when > 0), lora_target "all" or a
// list, additional_target, use_dora, pissa_init; freeze_trainable_layers = the last N layers
// trained, freeze_extra_modules; pref_loss sigmoid|ipo|orpo|simpo; pure_bf16), model_args.py
// (quantization_bit, flash_attn fa2|sdpa|disabled, disable_gradient_checkpointing), data_args.py
// (cutoff_len, packing) and HF TrainingArguments (per_device_train_batch_size,
// gradient_accumulation_steps, bf16, fp16, optim, deepspeed). Launch: FORCE_TORCHRUN=1 NNODES
// NODE_RANK MASTER_ADDR llamafactory-cli train (LLaMA-Factory README, "distributed training").
#include <string>

#include "export/export_internal.h"
#include "spec/field_text.h"
#include "trainsim/finetune.h"

namespace trainsim::export_detail {
namespace {

void KV(std::string& out, const std::string& key, const std::string& value) {
  out += key + ": " + value + "\n";
}

// stage, and pref_loss for the DPO family (LLaMA-Factory runs IPO, SimPO and ORPO as dpo).
Status Stage(const Strategy& s, std::string& out) {
  const char* loss = nullptr;
  std::string stage;
  switch (s.stage) {
    case TrainStage::kPretrain:
      stage = "pt";
      break;
    case TrainStage::kSft:
      stage = "sft";
      break;
    case TrainStage::kDpo:
      stage = "dpo", loss = "sigmoid";
      break;
    case TrainStage::kIpo:
      stage = "dpo", loss = "ipo";
      break;
    case TrainStage::kSimpo:
      stage = "dpo", loss = "simpo";
      break;
    case TrainStage::kOrpo:
      stage = "dpo", loss = "orpo";
      break;
    case TrainStage::kKto:
      stage = "kto";
      break;
    case TrainStage::kRm:
      stage = "rm";
      break;
    case TrainStage::kPpo:
      stage = "ppo";
      break;
    default:
      return Status::Invalid("stage", std::string(TrainStageName(s.stage)) +
                                          " has no LLaMA-Factory stage (pt, sft, rm, ppo, dpo, "
                                          "kto; ipo, simpo and orpo as dpo)");
  }
  KV(out, "stage", stage);
  KV(out, "do_train", "true");
  if (loss) KV(out, "pref_loss", loss);
  return Status::Ok();
}

Status Method(const ModelSpec& m, const Strategy& s, std::string& out,
              std::vector<std::string>& notes) {
  const FtMethod k = s.method;
  const bool lora = k == FtMethod::kLora || k == FtMethod::kQlora || k == FtMethod::kDora ||
                    k == FtMethod::kPissa;
  if (k == FtMethod::kFull) {
    KV(out, "finetuning_type", "full");
  } else if (k == FtMethod::kFreeze) {
    KV(out, "finetuning_type", "freeze");
    const int frozen = s.freeze_layers < 0 ? m.layers - 2 : s.freeze_layers;
    KV(out, "freeze_trainable_layers", std::to_string(m.layers - frozen));
    if (s.train_embeddings) KV(out, "freeze_extra_modules", "embed_tokens,lm_head");
  } else if (lora) {
    KV(out, "finetuning_type", "lora");
    KV(out, "lora_rank", std::to_string(s.lora_rank));
    KV(out, "lora_alpha", detail::NumberText(s.lora_alpha));
    if (s.lora_dropout > 0) KV(out, "lora_dropout", detail::NumberText(s.lora_dropout));
    const std::string targets = LoraTargetsName(s.lora_targets);
    KV(out, "lora_target", targets == "all-linear" ? "all" : targets);
    if (k == FtMethod::kDora) KV(out, "use_dora", "true");
    if (k == FtMethod::kPissa) KV(out, "pissa_init", "true");
    if (k == FtMethod::kQlora) KV(out, "quantization_bit", "4");
    if (s.train_embeddings) KV(out, "additional_target", "embed_tokens,lm_head");
  } else if (k == FtMethod::kOft) {
    KV(out, "finetuning_type", "oft");
    notes.push_back("lora_rank " + std::to_string(s.lora_rank) +
                    " for oft (set oft_rank / oft_block_size by hand)");
  } else {
    return Status::Invalid("method", std::string(FtMethodName(k)) +
                                         " has no LLaMA-Factory finetuning_type (full, freeze, "
                                         "lora, qlora, dora, pissa, oft)");
  }
  return Status::Ok();
}

std::string Optim(OptimizerKind k, std::vector<std::string>& notes) {
  switch (k) {  // HF TrainingArguments.optim names
    case OptimizerKind::kAdam:
      return "adamw_torch";
    case OptimizerKind::kAdamW8bit:
      return "adamw_bnb_8bit";
    case OptimizerKind::kPagedAdamW8bit:
      return "paged_adamw_8bit";
    case OptimizerKind::kPagedAdamW32bit:
      return "paged_adamw_32bit";
    case OptimizerKind::kAdafactor:
      return "adafactor";
    case OptimizerKind::kSgd:
      return "sgd";
    case OptimizerKind::kLion:
      return "lion_32bit";
    default:
      notes.push_back("optimizer " + std::string(OptimizerName(k)) +
                      " (no HF Trainer optim; adamw_torch written)");
      return "adamw_torch";
  }
}

// What HF Trainer (data parallel, DeepSpeed or FSDP) cannot lay out.
void ParallelNotes(const Strategy& s, std::vector<std::string>& notes) {
  const std::pair<const char*, int> sizes[] = {
      {"tp_size", s.tp}, {"pp_size", s.pp}, {"cp_size", s.cp}, {"ep_size", s.ep}};
  for (const auto& [key, v] : sizes)
    if (v > 1)
      notes.push_back(std::string(key) + " " + std::to_string(v) +
                      " (LLaMA-Factory's HF Trainer is data parallel only; use --format "
                      "megatron or bridge)");
  if (s.dtype != DType::kBf16 && s.dtype != DType::kFp16 && s.dtype != DType::kFp32 &&
      s.dtype != DType::kTf32)
    notes.push_back("dtype " + std::string(DTypeName(s.dtype)) + " (bf16 written)");
  if (s.recompute == Recompute::kSelective ||
      (s.recompute == Recompute::kFull && s.recompute_layers > 0))
    notes.push_back("recompute " + std::string(RecomputeName(s.recompute)) +
                    " of part of the layer stack (HF gradient checkpointing recomputes every "
                    "layer; written as on)");
  if (s.fused_cross_entropy) notes.push_back("fused_cross_entropy true (no such key)");
  if (s.precompute_ref) notes.push_back("precompute_ref true (no such key)");
  if (s.mean_seq > 0)
    notes.push_back("mean_seq " + std::to_string(s.mean_seq) + " (describes the data)");
}

std::string Train(const Strategy& s, std::vector<std::string>& notes) {
  std::string out;
  KV(out, "cutoff_len", std::to_string(std::max(s.seq, s.max_seq)));
  KV(out, "packing", s.packing ? "true" : "false");
  KV(out, "per_device_train_batch_size", std::to_string(s.mbs));
  KV(out, "gradient_accumulation_steps", std::to_string(s.num_micro_batches()));
  const bool fp16 = s.dtype == DType::kFp16;
  const bool fp32 = s.dtype == DType::kFp32 || s.dtype == DType::kTf32;
  if (!s.master_weights && !fp16 && !fp32) {
    KV(out, "pure_bf16", "true");
  } else {
    KV(out, "bf16", !fp16 && !fp32 ? "true" : "false");
    KV(out, "fp16", fp16 ? "true" : "false");
  }
  if (s.dtype == DType::kTf32) KV(out, "tf32", "true");  // HF TrainingArguments: TF32 matmuls
  KV(out, "optim", Optim(s.exec.optimizer, notes));
  KV(out, "flash_attn",
     !s.flash_attention                            ? "disabled"
     : s.attention_kernel != AttentionImpl::kFused ? "fa2"
                                                   : "sdpa");
  KV(out, "disable_gradient_checkpointing", s.recompute == Recompute::kNone ? "true" : "false");
  if (s.dp() > 1 && (s.zero >= 1 || s.fsdp))
    KV(out, "deepspeed",
       "ds_z" + std::to_string(s.fsdp ? 3 : s.zero) +
           "_config.json  # trainsim export --format deepspeed");
  return out;
}

}  // namespace

Result<ExportFile> ExportLlamaFactory(const ModelSpec& m, const Strategy& s,
                                      const ExportTarget& t) {
  ExportFile f;
  std::string body = "### model\n";
  KV(body, "model_name_or_path", t.model_path.empty() ? m.name : t.model_path);
  body += "\n### method\n";
  if (Status st = Stage(s, body); !st.ok()) return st;
  if (Status st = Method(m, s, body, f.notes); !st.ok()) return st;
  ParallelNotes(s, f.notes);
  body += "\n### train\n" + Train(s, f.notes);
  const int gpn = std::max(1, t.gpus_per_node);
  const int nodes = (s.world_size + gpn - 1) / gpn;
  f.text = Header(ExportFormat::kLlamaFactory, m, s, "# ") +
           "# launch: FORCE_TORCHRUN=1 NNODES=" + std::to_string(nodes) +
           " NPROC_PER_NODE=" + std::to_string(std::min(gpn, s.world_size)) +
           " llamafactory-cli train this.yaml (plus NODE_RANK, MASTER_ADDR on several nodes)\n"
           "# add dataset, template and output_dir: trainsim does not know them\n" +
           NoteLines(f.notes, "LLaMA-Factory YAML", "# ") + body;
  return f;
}

}  // namespace trainsim::export_detail

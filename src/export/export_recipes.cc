// Megatron-Bridge recipe overrides and LLaMA-Factory YAML: formats trainsim does not read, so
// what they cannot say is listed field by field here.
//
// Megatron-Bridge: the ConfigContainer groups model / train / ddp / optimizer / dataset /
// comm_overlap / mixed_precision / peft, overridden as Hydra "key=value" items
// (docs.nvidia.com/nemo/megatron-bridge "Megatron-LM to Megatron Bridge Guide": the Megatron-LM
// argument -> config field table; "Mixed Precision Training": recipe names bf16_mixed,
// fp16_mixed, bf16_with_fp8_delayed_scaling_mixed, bf16_with_mxfp8_mixed; "Communication
// Overlap": ddp.overlap_grad_reduce / overlap_param_gather / use_distributed_optimizer,
// comm_overlap.tp_comm_overlap; "Megatron FSDP": dist.use_megatron_fsdp, ddp.use_megatron_fsdp,
// ddp.data_parallel_sharding_strategy, checkpoint.ckpt_format fsdp_dtensor). LLaMA-Factory:
// src/llamafactory/hparams/finetuning_args.py (stage pt|sft|rm|ppo|dpo|kto, finetuning_type
// lora|oft|freeze|full, lora_rank, lora_alpha, lora_target, additional_target, use_dora,
// pissa_init, freeze_trainable_layers = the last N layers trained, freeze_extra_modules, pref_loss
// sigmoid|ipo|orpo|simpo, pure_bf16), model_args.py (quantization_bit, flash_attn,
// disable_gradient_checkpointing), data_args.py (cutoff_len, packing) and HF TrainingArguments
// (per_device_train_batch_size, gradient_accumulation_steps, bf16, fp16, optim, deepspeed).
#include <cmath>
#include <string>

#include "export/export_internal.h"
#include "spec/field_text.h"
#include "trainsim/finetune.h"

namespace trainsim::export_detail {
namespace {

void KV(std::string& out, const std::string& key, const std::string& value) {
  out += key + "=" + value + "\n";
}
std::string Int(long long v) {
  return std::to_string(v);
}
std::string Bool(bool b) {
  return b ? "true" : "false";
}

std::string BridgePrecision(const Strategy& s, std::vector<std::string>& notes) {
  switch (s.dtype) {
    case DType::kFp16:
      return "fp16_mixed";
    case DType::kFp8:  // Megatron-LM's default FP8 recipe is delayed scaling
      return "bf16_with_fp8_delayed_scaling_mixed";
    case DType::kMxfp8:
      return "bf16_with_mxfp8_mixed";
    case DType::kBf16:
      return "bf16_mixed";
    default:
      notes.push_back("dtype " + std::string(DTypeName(s.dtype)) +
                      " (no Megatron-Bridge mixed-precision recipe known to trainsim; "
                      "bf16_mixed written)");
      return "bf16_mixed";
  }
}

void BridgeParallel(const Strategy& s, std::string& out) {
  KV(out, "model.tensor_model_parallel_size", Int(s.tp));
  KV(out, "model.pipeline_model_parallel_size", Int(s.pp));
  KV(out, "model.virtual_pipeline_model_parallel_size", s.vpp > 1 ? Int(s.vpp) : "null");
  KV(out, "model.context_parallel_size", Int(s.cp));
  KV(out, "model.expert_model_parallel_size", Int(s.ep));
  if (s.ep > 1) KV(out, "model.expert_tensor_parallel_size", Int(s.expert_tp()));
  KV(out, "model.sequence_parallel", Bool(s.sp && s.tp > 1));
  if (s.first_stage_layers > 0)
    KV(out, "model.num_layers_in_first_pipeline_stage", Int(s.first_stage_layers));
  if (s.last_stage_layers > 0)
    KV(out, "model.num_layers_in_last_pipeline_stage", Int(s.last_stage_layers));
  // Hydra's quoted string: the layout's '|', '(' and '*' are not override syntax.
  if (!s.pipeline_layout.empty())
    KV(out, "model.pipeline_model_parallel_layout", "'" + s.pipeline_layout + "'");
  if (s.uneven_pipeline && s.first_stage_layers == 0 && s.last_stage_layers == 0) {
    KV(out, "model.account_for_embedding_in_pipeline_split", "true");
    KV(out, "model.account_for_loss_in_pipeline_split", "true");
  }
  if (s.cp > 1) KV(out, "model.cp_comm_type", s.cp_a2a ? "a2a" : "p2p");
}

void BridgeMemory(const Strategy& s, std::string& out, std::vector<std::string>& notes) {
  if (s.recompute == Recompute::kNone) {
    KV(out, "model.recompute_granularity", "null");
  } else {
    KV(out, "model.recompute_granularity", std::string(RecomputeName(s.recompute)));
  }
  if (s.recompute == Recompute::kSelective && s.recompute_modules != kRecomputeOpSac) {
    std::string list = "[";  // appended, not "[" + x: GCC 12 flags that with -Wrestrict
    list += RecomputeModulesName(s.recompute_modules);
    KV(out, "model.recompute_modules", list + "]");
  }
  if (s.recompute == Recompute::kFull) {
    KV(out, "model.recompute_method", s.recompute_layers > 0 ? "block" : "uniform");
    KV(out, "model.recompute_num_layers", Int(s.recompute_layers > 0 ? s.recompute_layers : 1));
  }
  const bool fsdp = s.fsdp || s.zero >= 2;  // Megatron-LM: ZeRO-2/3 is Megatron-FSDP
  KV(out, "ddp.use_distributed_optimizer", Bool(s.zero >= 1));
  KV(out, "optimizer.use_distributed_optimizer", Bool(s.zero >= 1));
  if (fsdp) {
    KV(out, "dist.use_megatron_fsdp", "true");  // "Megatron FSDP" page: all three are needed
    KV(out, "ddp.use_megatron_fsdp", "true");
    KV(out, "checkpoint.ckpt_format", "fsdp_dtensor");
    KV(out, "ddp.data_parallel_sharding_strategy",
       s.zero >= 3 ? "optim_grads_params" : "optim_grads");
  }
  if (s.dist_opt_instances > 1)
    KV(out, "ddp.num_distributed_optimizer_instances", Int(s.dist_opt_instances));
  KV(out, "ddp.overlap_grad_reduce", Bool(s.overlap_grad_reduce));
  KV(out, "ddp.overlap_param_gather", Bool(s.overlap_param_gather && s.zero >= 1));
  if (s.offload_optimizer) {
    KV(out, "optimizer.optimizer_cpu_offload", "true");
    KV(out, "optimizer.optimizer_offload_fraction",
       detail::NumberText(s.optimizer_offload_fraction));
  }
  if (s.optimizer_state_bytes != 12)
    notes.push_back("optimizer_state_bytes " + detail::NumberText(s.optimizer_state_bytes) +
                    " (set optimizer.use_precision_aware_optimizer and its state dtypes by hand)");
  if (!s.main_grad_fp32)
    notes.push_back("use_fp32_accum_grad false (mixed_precision.grad_reduce_in_fp32)");
  if (s.fp8_param_gather)
    notes.push_back("fp8_param_gather true (mixed_precision.fp8_param_gather)");
}

void BridgeKernels(const Strategy& s, std::string& out, std::vector<std::string>& notes) {
  if (s.tp > 1) KV(out, "comm_overlap.tp_comm_overlap", Bool(s.tp_comm_overlap));
  if (s.ep > 1) {
    KV(out, "model.moe_token_dispatcher_type", s.moe_dedup_dispatch ? "flex" : "alltoall");
    KV(out, "model.overlap_moe_expert_parallel_comm", Bool(s.ep_comm_overlap > 0));
    if (s.ep_comm_overlap > 0)
      notes.push_back("ep_comm_overlap " + detail::NumberText(s.ep_comm_overlap) +
                      " (a share of the all-to-all hidden; only the switch is written)");
  }
  KV(out, "model.attention_backend",
     !s.flash_attention                            ? "unfused"
     : s.attention_kernel != AttentionImpl::kFused ? "flash"
                                                   : "fused");
  KV(out, "model.cross_entropy_loss_fusion", Bool(s.fused_cross_entropy));
}

void BridgeWorkload(const Strategy& s, std::string& out, std::vector<std::string>& notes) {
  if (s.method == FtMethod::kLora || s.method == FtMethod::kDora) {
    KV(out, "peft", s.method == FtMethod::kLora ? "lora" : "dora");
    KV(out, "peft.dim", Int(s.lora_rank));
    KV(out, "peft.alpha", detail::NumberText(s.lora_alpha));
  } else if (s.method != FtMethod::kFull) {
    notes.push_back("method " + std::string(FtMethodName(s.method)) +
                    " (Megatron-Bridge PEFT writes lora and dora only)");
  }
  if (s.stage == TrainStage::kSft)
    notes.push_back(
        "stage sft: start from the model's finetune/SFT recipe (the overrides are "
        "the same)");
  else if (s.stage != TrainStage::kPretrain)
    notes.push_back("stage " + std::string(TrainStageName(s.stage)) +
                    " (not a Megatron-Bridge recipe setting)");
  if (s.exec.optimizer != OptimizerKind::kAdam)
    notes.push_back("optimizer " + std::string(OptimizerName(s.exec.optimizer)) +
                    " (Megatron-Core optimizers: adam, sgd)");
  if (s.schedule == PipelineSchedule::kZeroBubbleH1 || s.schedule == PipelineSchedule::kDualPipe)
    notes.push_back("pipeline_schedule " + std::string(ScheduleName(s.schedule)) +
                    " (Megatron-Core runs 1F1B / interleaved 1F1B)");
  if (s.order != RankOrder::kTpCpDpPp)
    notes.push_back("order " + std::string(RankOrderName(s.order)) + " (dist.* rank order)");
  if (!s.master_weights) notes.push_back("master_weights false (no fp32 master weights)");
}

}  // namespace

Result<ExportFile> ExportBridge(const ModelSpec& m, const Strategy& s) {
  ExportFile f;
  std::string body;
  BridgeParallel(s, body);
  KV(body, "train.micro_batch_size", Int(s.mbs));
  KV(body, "train.global_batch_size", Int(s.mbs * s.num_micro_batches() * s.dp()));
  KV(body, "model.seq_length", Int(s.seq));
  KV(body, "dataset.sequence_length", Int(s.seq));
  BridgeMemory(s, body, f.notes);
  KV(body, "mixed_precision", BridgePrecision(s, f.notes));
  BridgeKernels(s, body, f.notes);
  BridgeWorkload(s, body, f.notes);
  f.text = Header(ExportFormat::kBridge, m, s, "# ") +
           "# Megatron-Bridge / NeMo recipe overrides (Hydra key=value), one per line; the " +
           std::to_string(s.world_size) + " GPUs come from the launcher\n" +
           NoteLines(f.notes, "Megatron-Bridge overrides", "# ") + body;
  return f;
}

}  // namespace trainsim::export_detail

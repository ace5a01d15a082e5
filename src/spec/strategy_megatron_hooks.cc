// Megatron-LM arguments that do not map one to one onto a Strategy field.
#include "spec/strategy_megatron_hooks.h"

#include <algorithm>

#include "spec/field_text.h"

namespace trainsim::megatron_hooks {

void VppOut(const Strategy& s, std::string& out) {
  if (s.pipeline_layout.empty()) EmitAbove1<&Strategy::vpp, kVppArg>(s, out);
}

void LayoutOut(const Strategy& s, std::string& out) {
  if (!s.pipeline_layout.empty())
    out += " --pipeline-model-parallel-layout '" + s.pipeline_layout + "'";
}

void EtpOut(const Strategy& s, std::string& out) {
  if (s.ep > 1 || s.expert_tp() != s.tp)
    out += " --expert-tensor-parallel-size " + std::to_string(s.expert_tp());
}

// Megatron-FSDP shards optimizer states, gradients and (with optim_grads_params) parameters.
void FsdpOut(const Strategy& s, std::string& out) {
  if (s.fsdp || s.zero >= 3)
    out += std::string(" --use-megatron-fsdp --data-parallel-sharding-strategy ") +
           (s.zero >= 3 ? "optim_grads_params" : "optim_grads");
}

Status ZeroIn(Strategy& s, std::string_view arg, std::string_view value) {
  if (arg == "--use-distributed-optimizer") {
    s.zero = std::max(s.zero, 1);
    return Status::Ok();
  }
  // --data-parallel-sharding-strategy (Megatron-FSDP)
  const std::pair<std::string_view, int> levels[] = {
      {"no_shard", 0}, {"optim", 1}, {"optim_grads", 2}, {"optim_grads_params", 3}};
  for (const auto& [name, zero] : levels)
    if (value == name) {
      s.zero = zero;
      return Status::Ok();
    }
  return Status::Invalid("must be no_shard, optim, optim_grads or optim_grads_params, got '" +
                         std::string(value) + "'");
}

void ZeroOut(const Strategy& s, std::string& out) {
  if (!s.fsdp && (s.zero == 1 || s.zero == 2)) out += " --use-distributed-optimizer";
}

// --fp8-recipe (the other dtype arguments have fixed values): other recipes (delayed,
// tensorwise, blockwise) stay fp8.
Status DTypeIn(Strategy& s, std::string_view, std::string_view value) {
  if (value == "mxfp8") s.dtype = DType::kMxfp8;
  return Status::Ok();
}

void DTypeOut(const Strategy& s, std::string& out) {
  switch (s.dtype) {
    case DType::kFp16:
      out += " --fp16";
      break;
    case DType::kFp8:
      out += " --bf16 --fp8-format hybrid";
      break;
    case DType::kMxfp8:
      out += " --bf16 --fp8-format e4m3 --fp8-recipe mxfp8";
      break;
    case DType::kFp4:
      out += " --bf16 --fp4-format e2m1";
      break;
    default:  // fp32 / tf32 have no Megatron-LM switch
      out += " --bf16";
      break;
  }
}

// --accumulate-allreduce-grads-in-fp32 (a switch) or --main-grads-dtype fp32|bf16.
Status MainGradIn(Strategy& s, std::string_view arg, std::string_view value) {
  if (arg == "--accumulate-allreduce-grads-in-fp32") {
    s.main_grad_fp32 = true;
    return Status::Ok();
  }
  if (value != "fp32" && value != "bf16")
    return Status::Invalid("must be fp32 or bf16, got '" + std::string(value) + "'");
  s.main_grad_fp32 = value == "fp32";
  return Status::Ok();
}

namespace {
// Bytes of a Megatron-LM optimizer dtype name (--exp-avg-dtype choices: fp32, fp16, bf16, fp8).
int DTypeBytes(std::string_view v) {
  return v == "fp32" ? 4 : v == "fp16" || v == "bf16" ? 2 : v == "fp8" ? 1 : 0;
}
}  // namespace

// --main-params-dtype / --exp-avg-dtype / --exp-avg-sq-dtype: each replaces 4 fp32 bytes of the
// 12 (applied once each; ApplyMegatronArgs drops them without --use-precision-aware-optimizer,
// which Megatron-LM needs for them to act).
Status PrecisionAwareIn(Strategy& s, std::string_view arg, std::string_view value) {
  if (arg == "--use-precision-aware-optimizer") return Status::Ok();
  const int b = DTypeBytes(value);
  if (b == 0 || (arg == "--main-params-dtype" && b == 1))
    return Status::Invalid("must be fp32, fp16 or bf16" +
                           std::string(arg == "--main-params-dtype" ? "" : " (or fp8)") +
                           ", got '" + std::string(value) + "'");
  s.optimizer_state_bytes -= 4 - b;
  return Status::Ok();
}

void PrecisionAwareOut(const Strategy& s, std::string& out) {
  if (s.optimizer_state_bytes == 12) return;
  // The common split: 16-bit moments first, then 16-bit master weights.
  const double b = s.optimizer_state_bytes;
  const char* avg = b <= 10 ? "bf16" : "fp32";
  const char* sq = b <= 8 ? "bf16" : "fp32";
  const char* main = b <= 6 ? "fp16" : "fp32";
  out += std::string(" --use-precision-aware-optimizer --main-params-dtype ") + main +
         " --exp-avg-dtype " + avg + " --exp-avg-sq-dtype " + sq;
}

// bf16 implies fp32 gradient accumulation in Megatron-LM; fp16 needs the switch.
void MainGradOut(const Strategy& s, std::string& out) {
  if (s.main_grad_fp32 && s.dtype == DType::kFp16) out += " --accumulate-allreduce-grads-in-fp32";
  if (!s.main_grad_fp32 && s.dtype != DType::kFp16) out += " --grad-reduce-in-bf16";
}

void RecomputeModulesOut(const Strategy& s, std::string& out) {
  // op_sac is torchtitan's policy: Megatron-LM's default selective recompute is the nearest.
  if (s.recompute != Recompute::kSelective || s.recompute_modules == kRecomputeOpSac) return;
  std::string list = RecomputeModulesName(s.recompute_modules);
  std::replace(list.begin(), list.end(), ',', ' ');
  out += " --recompute-modules " + list;
}

void OffloadModulesOut(const Strategy& s, std::string& out) {
  // Layer offload (offload_activations) is --cpu-offloading; written only as the modules.
  if (s.exec.offload_modules == 0 || s.exec.offload_activations) return;
  std::string list = OffloadModulesName(s.exec.offload_modules);
  std::replace(list.begin(), list.end(), ',', ' ');
  out += " --fine-grained-activation-offloading --offload-modules " + list;
}

void RecomputeOut(const Strategy& s, std::string& out) {
  if (s.recompute != Recompute::kNone)
    out += " --recompute-granularity " + std::string(RecomputeName(s.recompute));
}

Status RecomputeLayersIn(Strategy& s, std::string_view arg, std::string_view value) {
  if (arg != "--recompute-method" && arg != "--activations-checkpoint-method")
    return detail::ParseIntText(value, 0, s.recompute_layers);  // --recompute-num-layers ...
  // --recompute-method (before 2022: --activations-checkpoint-method): "uniform" recomputes
  // every layer (in groups of N), "block" the first N layers of each stage; ApplyMegatronArgs
  // resolves it once every argument is read.
  if (value != "uniform" && value != "block")
    return Status::Invalid("must be uniform or block, got '" + std::string(value) + "'");
  return Status::Ok();
}

void RecomputeLayersOut(const Strategy& s, std::string& out) {
  if (s.recompute != Recompute::kFull) return;
  if (s.recompute_layers > 0)
    out += " --recompute-method block --recompute-num-layers " + std::to_string(s.recompute_layers);
  else
    out += " --recompute-method uniform --recompute-num-layers 1";
}

void UnevenOut(const Strategy& s, std::string& out) {
  // Megatron-LM refuses the flags together with first / last stage layers, which win here.
  if (s.uneven_pipeline && s.first_stage_layers == 0 && s.last_stage_layers == 0)
    out += " --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split";
}

void ParamGatherOut(const Strategy& s, std::string& out) {
  if (s.overlap_param_gather && s.zero >= 1) out += " --overlap-param-gather";
}

// --optimizer (Megatron-LM arguments.py: adam (default), sgd, muon, dist_muon). Megatron's
// adam is AdamW (decoupled weight decay); its sgd keeps one momentum buffer (--sgd-momentum 0.9).
Status OptimizerIn(Strategy& s, std::string_view, std::string_view value) {
  if (value == "adam") {
    s.exec.optimizer = OptimizerKind::kAdam;
  } else if (value == "sgd") {
    s.exec.optimizer = OptimizerKind::kSgd;
  } else if (value == "muon" || value == "dist_muon") {
    s.exec.optimizer = OptimizerKind::kMuon;
  } else {
    return Status::Invalid("must be adam, sgd, muon or dist_muon, got '" + std::string(value) +
                           "'");
  }
  return Status::Ok();
}

void OptimizerOut(const Strategy& s, std::string& out) {
  if (s.exec.optimizer == OptimizerKind::kSgd) out += " --optimizer sgd";
  if (s.exec.optimizer == OptimizerKind::kMuon) out += " --optimizer muon";
}

Status DispatcherIn(Strategy& s, std::string_view, std::string_view value) {
  s.moe_dedup_dispatch = value == "flex";  // alltoall, allgather: one message per expert
  return Status::Ok();
}

void DispatcherOut(const Strategy& s, std::string& out) {
  if (s.moe_dedup_dispatch) out += " --moe-token-dispatcher-type flex";
}

// --attention-backend: flash = the flash-attn package (FA2 kernels), fused/auto = TE/cuDNN,
// unfused/local = math attention.
Status AttentionIn(Strategy& s, std::string_view, std::string_view value) {
  if (value == "flash") {
    s.flash_attention = true;
    s.attention_kernel = AttentionImpl::kFa2;
  } else if (value == "fused" || value == "auto") {
    s.flash_attention = true;
    s.attention_kernel = AttentionImpl::kFused;
  } else if (value == "unfused" || value == "local") {
    s.flash_attention = false;
  } else {
    return Status::Invalid("must be flash, fused, unfused, local or auto, got '" +
                           std::string(value) + "'");
  }
  return Status::Ok();
}

void AttentionOut(const Strategy& s, std::string& out) {
  if (!s.flash_attention)
    out += " --attention-backend unfused";
  else if (s.attention_kernel != AttentionImpl::kFused)
    out += " --attention-backend flash";
}

// --cp-comm-type: one type for all layers, or one per layer (nargs='+', joined with ','):
// all-to-all only when every layer's is a2a; p2p, allgather, a2a+p2p and mixed lists are
// modelled as the ring (ResolveMegatronArgs lists what that leaves out).
Status CpCommIn(Strategy& s, std::string_view, std::string_view value) {
  bool all_a2a = true;
  while (true) {
    const size_t comma = value.find(',');
    const std::string_view v = value.substr(0, comma);
    if (v != "p2p" && v != "a2a" && v != "allgather" && v != "a2a+p2p")
      return Status::Invalid("must be p2p, a2a, allgather or a2a+p2p, got '" + std::string(v) +
                             "'");
    all_a2a = all_a2a && v == "a2a";
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  s.cp_a2a = all_a2a;
  return Status::Ok();
}

void CpCommOut(const Strategy& s, std::string& out) {
  if (s.cp_a2a) out += " --cp-comm-type a2a";
}

}  // namespace trainsim::megatron_hooks

#include "memory/memory.h"

#include <algorithm>

#include "memory/optimizer_states.h"
#include "util/units.h"

namespace trainsim::memory {
namespace {

// CUDA context and cuBLAS/NCCL workspaces, which max_memory_allocated does not see.
constexpr double kRuntimeOverhead = 1.5 * units::kGiB;

// Bytes of a per-parameter state of the stage's groups on one rank, sharded over each group's DP
// group from ZeRO stage `min_stage` on; `trainable_only` for gradients and optimizer states;
// `bytes_per_param` <= 0 takes each group's own bytes. Distributed-optimizer instances shard
// optimizer states (ZeRO-2 gradients, ZeRO-3 / FSDP parameters) within each replica only
// (Megatron-LM --num-distributed-optimizer-instances, torchtitan HSDP's
// data_parallel_shard_degree within data_parallel_replicate_degree).
double ShardedBytes(const StageInput& in, const Strategy& s, double bytes_per_param, int min_stage,
                    bool trainable_only) {
  const double replicas = std::max(1, s.dist_opt_instances);
  double dense = 0, expert = 0;
  for (const graph::ParamGroup& g : in.params) {
    if (trainable_only && !g.trainable) continue;
    const double b = bytes_per_param > 0 ? bytes_per_param : g.bytes_per_param;
    (g.expert ? expert : dense) += g.count * b;
  }
  if (s.zero >= min_stage)
    return dense / std::max(1.0, in.dense_shard / replicas) +
           expert / std::max(1.0, in.expert_shard / replicas);
  return dense + expert;
}

}  // namespace

bool DeepSpeedEngine(const Strategy& s) {
  return s.zero >= 1 && !s.fsdp;
}

double LossBytesPerLogit(const Strategy& s) {
  if (s.fused_cross_entropy) return 2.0;
  if (s.exec.loss_bytes_per_logit > 0 && !(s.exec.loss_fp32_by_autocast && DeepSpeedEngine(s)))
    return s.exec.loss_bytes_per_logit;
  return 6.0;
}

bool HoldsReduceBuckets(const Strategy& s) {
  return DeepSpeedEngine(s) && s.zero <= 2 && s.exec.zero_reduce_bucket_elems > 0;
}

bool TorchForeachStep(const Strategy& s) {
  return s.exec.adam_foreach_temporaries > 0 && s.exec.optimizer == OptimizerKind::kAdam &&
         !DeepSpeedEngine(s) && !s.exec.optimizer_in_backward && !s.offload_optimizer;
}

void StageMemory(const StageInput& in, const Strategy& s, StageReport& out) {
  const double grad_b = s.grad_bytes_per_param();
  const double w_b = WeightBytes(s.dtype);
  auto state = [&](double bytes_per_param, int min_stage, bool trainable_only) {
    return ShardedBytes(in, s, bytes_per_param, min_stage, trainable_only);
  };
  double params = 0, stored = 0;
  for (const graph::ParamGroup& g : in.params) {
    params += g.count;
    stored += g.count * g.bytes_per_param;
  }
  out.params = params;
  // ZeRO-3 / FSDP gather the weights as they are stored: 16-bit, or NF4 under QLoRA (FSDP
  // shards torchao's NF4 tensors and all-gathers them packed; torchtune's QLoRA recipes).
  // (A group's bytes_per_param is 2 unless its storage is narrower: the ratio scales w_b.)
  const double gathered_b = params > 0 ? w_b * std::min(1.0, stored / (2.0 * params)) : w_b;
  // --fp8-param-gather: the parameters are held in FP8 only, half their 16-bit bytes.
  const double w_scale = in.fp8_params_only ? 0.5 : 1.0;
  // FSDP CPU offload: only the gathered layers are in HBM.
  const double resident = s.exec.offload_params ? 0.0 : state(0, 3, false);
  out.weight_bytes =
      (resident + in.fsdp_unsharded * gathered_b) * w_scale + in.low_precision_weight_cache;
  // ZeRO++ hpZ (arXiv 2306.10209, section 3.2): each rank also holds its share of a secondary
  // copy of the 16-bit weights, sharded over zero_hpz_size ranks.
  if (s.zero >= 3 && s.zero_hpz_size > 1) out.weight_bytes += params * w_b / s.zero_hpz_size;
  out.grad_bytes = state(grad_b, 2, true);
  // Mixed-precision Adam: fp32 master weights, momentum and variance (ZeRO paper's K = 12, or
  // the precision-aware optimizer's optimizer_state_bytes); the other optimizers in
  // memory/optimizer_states.h.
  const double opt_b = OptimizerBytesPerParam(s);
  // --optimizer-offload-fraction: only the host's share leaves HBM.
  out.optimizer_bytes = opt_b <= 0 ? 0.0 : (1.0 - s.host_optimizer_share()) * state(opt_b, 1, true);
  const double layers = std::max(1.0, in.layers);
  // One layer's gradients at a time: stepped in backward, or reduced and copied to the host.
  if (s.exec.optimizer_in_backward || s.exec.offload_params) out.grad_bytes /= layers;
  // DeepSpeed ZeRO-1/2 backward: two reduce_bucket_size buffers of the 16-bit dtype that the
  // gradients are copied into (contiguous_gradients, double-buffered under overlap_comm), kept
  // from one backward to the next whatever the number of trainable parameters.
  if (HoldsReduceBuckets(s))
    out.grad_bytes += 2 * s.exec.zero_reduce_bucket_elems * units::kBf16Bytes;
  out.inflight_micro_batches = in.inflight;
  // The transformer layers' saved bytes of one micro-batch; the embedding's and loss's stay.
  const double layer_act = std::max(0.0, in.act_per_mb - in.head_saved);
  out.activation_bytes = (layer_act + in.head_saved) * in.inflight + 2 * in.offload_per_layer;
  out.transient_bytes = in.transient;
  out.peak_mem_bytes = out.weight_bytes + out.grad_bytes + out.optimizer_bytes +
                       out.activation_bytes + out.transient_bytes;
  if (s.exec.grad_set_to_none && in.single_micro_batch) {
    const double forward = out.activation_bytes + in.loss_transient;
    const double backward = std::max(out.grad_bytes, layer_act * in.inflight) + in.layer_transient;
    out.transient_bytes =
        std::max(0.0, std::max(forward, backward) - out.activation_bytes - out.grad_bytes);
    out.peak_mem_bytes = out.weight_bytes + out.optimizer_bytes + std::max(forward, backward);
  }
  // torch AdamW's foreach temporaries (TorchForeachStep) at the step, when the activations are
  // gone.
  if (TorchForeachStep(s)) {
    const double param_b = s.master_weights ? units::kFp32Bytes : w_b;
    const double temps = s.exec.adam_foreach_temporaries * state(param_b, 1, true);
    const double step = out.weight_bytes + out.grad_bytes + out.optimizer_bytes + temps;
    if (step > out.peak_mem_bytes) {
      out.transient_bytes = temps - out.activation_bytes;
      out.peak_mem_bytes = step;
    }
  }
  out.overhead_bytes = kRuntimeOverhead + kFragmentation * out.peak_mem_bytes;
  out.reserved_bytes = out.peak_mem_bytes + out.overhead_bytes;
}

HostBytes HostStageMemory(const StageInput& in, const Strategy& s) {
  HostBytes h;
  const double share = s.host_optimizer_share();
  if (share > 0) {
    const double opt_b = OptimizerBytesPerParam(s);
    h.optimizer = opt_b <= 0 ? 0.0 : share * ShardedBytes(in, s, opt_b, 1, true);
    // The CPU Adam's fp32 gradients of its share (the parameter shards' own gradients when
    // FSDP offloads them, below).
    if (!s.exec.offload_params) h.grads = share * ShardedBytes(in, s, units::kFp32Bytes, 1, true);
  }
  if (s.exec.offload_params) {
    h.params = ShardedBytes(in, s, 0, 3, false);
    h.grads = ShardedBytes(in, s, s.grad_bytes_per_param(), 2, true);
  }
  h.activations = in.offload_per_layer * std::max(1.0, in.layers) * in.inflight;
  const double paged_b = PagedOptimizerBytesPerParam(s);
  if (paged_b > 0) h.paged = ShardedBytes(in, s, paged_b, 1, true);
  h.pinned = h.grads + h.activations;
  return h;
}

}  // namespace trainsim::memory

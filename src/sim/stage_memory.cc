// Memory of every stage and the per-stage time fields of the report.
#include <algorithm>

#include "memory/memory.h"
#include "sim/step.h"

namespace trainsim::sim {
namespace {

memory::StageInput MemoryInput(const StepContext& c, const StagePlan& plan, const StageCost& cost,
                               const LayerKindCosts& kinds) {
  const Strategy& s = c.s;
  memory::StageInput in;
  in.params = plan.params;
  in.dense_shard = s.dp() * s.cp;
  in.expert_shard = s.expert_dp();
  in.act_per_mb = cost.sum.saved_none;
  in.inflight = schedule::InflightMicroBatches(plan.index, c.p, c.v, c.micro_batches, c.sched);
  // Transient: one layer's full activations while it is recomputed, or the gradients of the
  // largest intermediate; on the last stage the logits of the loss.
  double transient = 2.0 * cost.sum.max_intermediate;
  const LayerCost& layer = (c.has_moe ? kinds.moe[0] : kinds.dense[0]);
  // A recomputed layer holds all its activations again (recomputed tensors are not offloaded).
  const double rerun_layer = layer.saved_none + layer.offload_bytes;
  if (c.full_recompute) transient += rerun_layer;
  if (plan.layers.last)
    transient =
        std::max(transient, c.shape.tokens * c.m.vocab / s.tp * memory::LossBytesPerLogit(s));
  in.transient = transient;
  in.layers = std::max(1, plan.num_layers());
  in.single_micro_batch = c.micro_batches == 1;
  in.layer_transient = 2.0 * layer.max_intermediate + (c.full_recompute ? rerun_layer : 0);
  in.offload_per_layer = cost.sum.offload_bytes;
  if (plan.layers.last) {
    in.head_saved += kinds.head.saved_none;
    // Fused: the gradient overwrites the logits (TE) or is made chunk by chunk as each chunk's
    // saved logits are freed (torchtune CEWithChunkedOutputLoss); else the fp32 copies.
    if (!s.fused_cross_entropy)
      in.loss_transient = c.shape.tokens * c.m.vocab / s.tp * memory::LossBytesPerLogit(s);
  }
  if (plan.layers.first) in.head_saved += kinds.embedding.saved_none;
  const double all = plan.Params(false, false) + plan.Params(true, false);
  // ZeRO-3: the current and the prefetched layer are gathered at once.
  if (s.zero >= 3) in.fsdp_unsharded = 2.0 * all / std::max(1, plan.num_layers());
  // FP8 weight copies next to the 16-bit ones; with --fp8-param-gather the FP8 copy is the
  // parameter (Megatron-LM keeps no 16-bit one), which the weights' bytes account for.
  in.fp8_params_only = s.fp8_param_gather && IsLowPrecision(s.dtype);
  if (IsLowPrecision(s.dtype) && !in.fp8_params_only) in.low_precision_weight_cache = all;
  return in;
}

}  // namespace

bool StageMemories(const StepContext& c, const std::vector<StagePlan>& plans,
                   const std::vector<StageCost>& costs, const LayerKindCosts& kinds,
                   std::vector<StageReport>& out) {
  for (int k = 0; k < c.p; ++k) {
    const memory::StageInput in = MemoryInput(c, plans[k], costs[k], kinds);
    StageReport& sr = out[k];
    memory::StageMemory(in, c.s, sr);
    sr.static_bytes = sr.weight_bytes + sr.grad_bytes + sr.optimizer_bytes;
    sr.activation_bytes_per_mb = in.act_per_mb;
  }
  bool fits = true;
  for (int k = 0; k < c.p; ++k) {
    StageReport& sr = out[k];
    // DualPipe keeps two model copies: rank k also holds stage p-1-k's weights, gradients and
    // optimizer states (DeepSeek-V3 report, table 2: 2x parameters).
    if (c.sched == PipelineSchedule::kDualPipe) {
      sr.mirror_static_bytes = out[c.p - 1 - k].static_bytes;
      sr.peak_mem_bytes += sr.mirror_static_bytes;
      sr.reserved_bytes += sr.mirror_static_bytes * (1 + memory::kFragmentation);
      sr.overhead_bytes = sr.reserved_bytes - sr.peak_mem_bytes;
    }
    if (sr.reserved_bytes > c.hw.hbm_bytes) fits = false;
  }
  return fits;
}

HostMemReport HostBytesPerGpu(const StepContext& c, const std::vector<StagePlan>& plans,
                              const std::vector<StageCost>& costs, const LayerKindCosts& kinds) {
  HostMemReport h;
  double most = -1;
  for (int k = 0; k < c.p; ++k) {
    const memory::HostBytes b =
        memory::HostStageMemory(MemoryInput(c, plans[k], costs[k], kinds), c.s);
    if (b.Total() <= most) continue;
    most = b.Total();
    h.optimizer_bytes = b.optimizer;
    h.grad_bytes = b.grads;
    h.param_bytes = b.params;
    h.activation_bytes = b.activations;
    h.paged_bytes = b.paged;
    h.pinned_bytes = b.pinned;
    h.bytes_per_node = b.Total();
  }
  return h;
}

void FillStageTimes(const StepContext& c, const std::vector<StagePlan>& plans,
                    const std::vector<StageCost>& costs, const DataParallelTime& dp,
                    std::vector<StageReport>& out) {
  for (int k = 0; k < c.p; ++k) {
    const StageCost& sc = costs[k];
    const LayerCost& s = sc.sum;
    const StageDpComm& d = dp.stages[k];
    StageReport& st = out[k];
    st.index = k;
    st.layers = plans[k].num_layers();
    st.fwd_per_mb_s = sc.fwd_s;
    st.bwd_per_mb_s = sc.bwd_s;
    st.bwd_weight_per_mb_s = s.wgrad_s;
    st.recompute_per_mb_s = s.recompute_s;
    st.p2p_s = c.p > 1 ? c.p2p_s : 0;
    st.dp_grad_comm_s = d.grad_s;
    st.dp_param_gather_s = d.gather_s;
    st.dp_grad_comm_bytes = d.grad_bytes;
    st.dp_gather_comm_bytes = d.gather_bytes;
    st.fsdp_gather_per_mb_s = d.fsdp_gather_s;
    st.fsdp_reduce_per_mb_s = d.fsdp_reduce_s;
    st.fsdp_comm_per_mb_s = 2 * d.fsdp_gather_s + d.fsdp_reduce_s;
    st.ep_fwd_per_mb_s = s.ep_fwd_s;
    st.ep_bwd_per_mb_s = s.ep_comm_s - s.ep_fwd_s;
    st.fwd_flops_per_mb = s.fwd_flops;
    st.bwd_flops_per_mb = s.bwd_flops + s.recompute_flops;
    st.wgrad_flops_per_mb = s.wgrad_flops;
  }
}

}  // namespace trainsim::sim

// The optimizer step: Adam's element-wise update (memory-bound, or launch-bound when it is not
// fused), the fp16 loss-scale unscaling, and Muon's Newton-Schulz iterations (GEMMs on every
// hidden matrix). Per step, on the slowest pipeline stage.
#include <algorithm>
#include <cmath>
#include <vector>

#include "finetune/method.h"
#include "memory/optimizer_states.h"
#include "sim/step.h"

namespace trainsim::sim {
namespace {

// Muon's momentum update per hidden parameter: reads the gradient (4) and the momentum (4),
// writes the momentum (4), reads and writes the fp32 weight (8) and writes its 16-bit copy (2).
constexpr double kMuonTrafficBytesPerParam = 22.0;
// Host (CPU) Adam with the optimizer offloaded: about one parameter per nanosecond for each
// rank (DeepSpeed ZeRO-Offload's CPU-Adam, Ren et al. 2021, section 5, ran at that order on one
// process). Applied per rank, not shared by the ranks of a node: on a current server the step is
// bound by host DRAM (about 32 bytes read and written per fp32 parameter with its gradient and
// two moments), and a few hundred GB/s over 8 ranks is about 2 parameters per ns each. Sharing
// a node-wide 1/ns among 8 ranks puts torchtune's 70B FSDP CPU-offload run (ft_torchtune-006,
// 20.9 s measured) at 82 s, the per-rank rate at 20.3 s. Host DRAM bandwidth is not yet a
// hardware field; until it is, this per-rank rate stands (docs/FINETUNE.md, "Host memory").
constexpr double kHostAdamSecondsPerParam = 1e-9;
// Kernels per parameter tensor of one AdamW step, and memory traffic relative to a fused
// update, by OptimizerImpl (fused, foreach, per-tensor). Measured on one H100 with PyTorch 2.11
// over GPT-2 small's 148 tensors (data/measurements/h100_small_kernels.csv, "optimizer"): fused
// 9 kernels in 1.40 ms, foreach 56 kernels in 4.05 ms (2.9x the fused traffic: one element-wise
// pass per arithmetic step), a per-tensor loop 1184 kernels (8 per tensor).
constexpr double kAdamKernelsPerTensor[] = {9.0 / 148, 56.0 / 148, 8.0};
constexpr double kAdamTrafficFactor[] = {1.0, 2.9, 2.9};
// Newton-Schulz iteration of Muon (Keller Jordan, "Muon: An optimizer for hidden layers in
// neural networks", 2024): X <- a X + (b A + c A^2) X with A = X X^T, X the r x c matrix
// (r <= c): three GEMMs (r x c x r, r x r x r, r x r x c) and element-wise passes over X and A.
constexpr double kNsElementwisePasses = 4.0;

double NewtonSchulzTime(const StepContext& c, double k, double n, int steps) {
  const double r = std::min(k, n), w = std::max(k, n);
  const double floor_s = c.hw.eff.kernel_floor_us * 1e-6;
  auto gemm = [&](double m, double nn, double kk) {
    return std::max(cost::GemmTime(c.hw, DType::kBf16, m, nn, kk, 1), floor_s);
  };
  const double it = gemm(r, r, w) + gemm(r, r, r) + gemm(r, w, r) +
                    cost::MemoryTime(c.hw, kNsElementwisePasses * (r * w + r * r) * 2);
  return steps * it;
}

// One Newton-Schulz orthogonalisation of every trained GEMM weight of one layer (Muon).
double LayerNewtonSchulz(const StepContext& c, bool moe) {
  thread_local std::vector<graph::Op> ops;
  ops.clear();
  finetune::BuildTrainLayer(c.m, c.s, moe, ops);
  double t = 0;
  for (const graph::Op& op : ops)
    if (op.kind == graph::OpKind::kGemm && op.trainable)
      t += op.batch * NewtonSchulzTime(c, op.k, op.n, c.s.exec.muon_ns_steps);
  return t;
}

// Seconds of the element-wise Adam (or Muon momentum) update of one stage.
double UpdateTime(const StepContext& c, double adam_sharded, double muon_params, double tensors) {
  const int impl = static_cast<int>(c.s.exec.optimizer_impl);
  // Mixed-precision Adam per sharded parameter: reads fp32 master weight, momentum, variance
  // and gradient (16 bytes), writes the first three (12) and the 16-bit weight copy (2): 30
  // bytes; the other optimizers in memory/optimizer_states.h.
  const double bytes = adam_sharded * memory::OptimizerTrafficBytesPerParam(c.s) +
                       muon_params * kMuonTrafficBytesPerParam;
  const double kernels = tensors * kAdamKernelsPerTensor[impl];
  const double per_kernel = std::max(c.hw.eff.kernel_floor_us * 1e-6, c.host_issue_s);
  return std::max(cost::MemoryTime(c.hw, bytes) * kAdamTrafficFactor[impl], kernels * per_kernel);
}

// Parameters of `plan` that one rank steps on the host with the optimizer offloaded (its share
// of the rank's optimizer shard), and the seconds their gradients (down) and 16-bit weights (up)
// take on the host link.
double HostSteppedParams(const StepContext& c, const StagePlan& plan) {
  const Strategy& s = c.s;
  if (!s.offload_optimizer) return 0;
  const int inst = s.zero >= 1 ? std::max(1, s.dist_opt_instances) : 1;
  const double shard_d = s.zero >= 1 ? 1.0 * s.dp() * s.cp / inst : 1,
               shard_e = s.zero >= 1 ? 1.0 * s.expert_dp() / inst : 1;
  return s.host_optimizer_share() *
         (plan.Params(false, true) / shard_d + plan.Params(true, true) / shard_e);
}
double HostLinkSeconds(const StepContext& c, double host_params) {
  return host_params * (c.grad_bytes_per_param + 2.0) / c.hw.host_link_bw_bytes_per_s;
}

}  // namespace

double OptimizerHostLinkTime(const StepContext& c, const std::vector<StagePlan>& plans) {
  double t = 0;
  for (const StagePlan& plan : plans)
    t = std::max(t, HostLinkSeconds(c, HostSteppedParams(c, plan)));
  return t;
}

double OptimizerTime(const StepContext& c, const std::vector<StagePlan>& plans,
                     const LayerKindCosts& kinds) {
  const Strategy& s = c.s;
  // Each rank updates its shard of the sharding instance (dp*cp / dist_opt_instances ranks).
  const int inst = s.zero >= 1 ? std::max(1, s.dist_opt_instances) : 1;
  const double shard_d = s.zero >= 1 ? 1.0 * s.dp() * s.cp / inst : 1,
               shard_e = s.zero >= 1 ? 1.0 * s.expert_dp() / inst : 1;
  const bool muon = s.exec.optimizer == OptimizerKind::kMuon && !s.offload_optimizer;
  const double ns_dense = muon && c.has_dense ? LayerNewtonSchulz(c, false) : 0;
  const double ns_moe = muon && c.has_moe ? LayerNewtonSchulz(c, true) : 0;
  const LayerCost &dense = kinds.dense[0], &moe = kinds.moe[0];
  double opt_s = 0;
  for (const StagePlan& plan : plans) {
    const double dense_p = plan.Params(false, true), expert_p = plan.Params(true, true);
    const double grads = dense_p + expert_p;
    const int nl = plan.num_layers();
    const graph::StageLayers& sl = plan.layers;
    const double tensors = (sl.dense - sl.frozen_dense) * dense.param_tensors +
                           (sl.moe - sl.frozen_moe) * moe.param_tensors +
                           (plan.layers.first ? kinds.embedding.param_tensors : 0) +
                           (plan.layers.last ? kinds.head.param_tensors : 0);
    // Muon orthogonalises the hidden matrices; Adam keeps the embedding, head and norms.
    const double hidden =
        muon ? plan.layers.dense * dense.hidden_params + plan.layers.moe * moe.hidden_params : 0;
    const double adam = std::max(0.0, dense_p - hidden) / shard_d + expert_p / shard_e;
    double t = UpdateTime(c, adam, hidden, tensors) +
               cost::MemoryTime(c.hw, grads * c.grad_bytes_per_param);  // gradient norm
    // fp16: unscale the gradients and check them for inf/NaN before the step (one read and
    // one write of every gradient; Micikevicius et al. 2018, loss scaling).
    if (s.dtype == DType::kFp16)
      t += cost::MemoryTime(c.hw, 2 * c.grad_bytes_per_param * grads / (s.zero >= 1 ? shard_d : 1));
    if (muon && nl > 0) {
      const double ns = plan.layers.dense * ns_dense + plan.layers.moe * ns_moe;
      const bool split = s.exec.muon_distributed && c.pl.dp_cp.size > 1;
      t += split ? ns / c.pl.dp_cp.size : ns;
      // The orthogonalised updates of the other ranks' matrices come back in 16 bits.
      if (split) t += cost::CollectiveTime(c.hw, graph::Coll::kAllGather, c.pl.dp_cp, hidden * 2);
    }
    if (s.offload_optimizer) {
      // Host Adam on its share plus its gradients down and weights up the host link; the GPU
      // steps the rest at the same time (Megatron-LM's HybridDeviceOptimizer runs the two
      // sub-optimizers side by side).
      const double f = s.host_optimizer_share();
      const double sharded = HostSteppedParams(c, plan);
      const double host = sharded * kHostAdamSecondsPerParam + HostLinkSeconds(c, sharded);
      t = std::max(host, f < 1 ? (1 - f) * t : 0.0);
    }
    opt_s = std::max(opt_s, t);
  }
  return opt_s;
}

}  // namespace trainsim::sim

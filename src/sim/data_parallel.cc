// Data-parallel communication (DP x CP and expert-DP groups).
#include <algorithm>

#include "sim/step.h"

namespace trainsim::sim {
namespace {

// Parameters are gathered in 16 bits (Megatron's distributed optimizer and FSDP all-gather the
// bf16/fp16 model weights), in FP8 when the parameters are held in FP8 (--fp8-param-gather).
double GatherBytesPerParam(const Strategy& s) {
  return s.fp8_param_gather && IsLowPrecision(s.dtype) ? 1.0 : 2.0;
}

// One collective over the dense (DP x CP) and the expert-DP groups of a stage.
double StageCollective(const StepContext& c, graph::Coll coll, double dense, double expert,
                       double bytes_per_param) {
  return cost::CollectiveTime(c.hw, coll, c.pl.dp_cp, dense * bytes_per_param) +
         cost::CollectiveTime(c.hw, coll, c.pl.edp, expert * bytes_per_param);
}

// ZeRO-3 / FSDP: gather parameters in forward and again in backward, reduce-scatter gradients
// every micro-batch; prefetching hides them behind the layers' compute, at best all but one
// layer's share.
void FsdpComm(const StepContext& c, const StagePlan& plan, const StageCost& cost,
              StageDpComm& out) {
  const double ovl = c.hw.eff.comm_overlap;
  const double ag = StageCollective(c, graph::Coll::kAllGather, plan.Params(false, false),
                                    plan.Params(true, false), GatherBytesPerParam(c.s));
  const double rs = StageCollective(c, graph::Coll::kReduceScatter, plan.Params(false, true),
                                    plan.Params(true, true), c.grad_bytes_per_param);
  const LayerCost& s = cost.sum;
  const double f_hidden = s.fwd_compute_s * ovl, b_hidden = (s.bwd_compute_s + s.recompute_s) * ovl;
  const int n = std::max(1, plan.num_layers());
  const double per_mb =
      std::max(ag - f_hidden, ag / n) + std::max(ag + rs - b_hidden, (ag + rs) / n);
  out.fsdp_gather_s = ag;
  out.fsdp_reduce_s = rs;
  out.gather_bytes =
      (plan.Params(false, false) + plan.Params(true, false)) * GatherBytesPerParam(c.s);
  out.grad_bytes = (plan.Params(false, true) + plan.Params(true, true)) * c.grad_bytes_per_param;
  out.exposed_s = per_mb * c.micro_batches;
}

// ZeRO 0-2: one gradient all-reduce (or reduce-scatter plus a parameter all-gather) per step,
// overlapped with the backward (and the next forward) when the strategy says so.
void GradientComm(const StepContext& c, const StagePlan& plan, const StageCost& cost,
                  StageDpComm& out) {
  const double ovl = c.hw.eff.comm_overlap;
  const double dense = plan.Params(false, true), expert = plan.Params(true, true);
  const bool sharded = c.s.zero >= 1;
  out.grad_s = StageCollective(c, sharded ? graph::Coll::kReduceScatter : graph::Coll::kAllReduce,
                               dense, expert, c.grad_bytes_per_param);
  out.gather_s =
      sharded ? StageCollective(c, graph::Coll::kAllGather, dense, expert, GatherBytesPerParam(c.s))
              : 0.0;
  out.grad_bytes = (dense + expert) * c.grad_bytes_per_param;
  out.gather_bytes = sharded ? (dense + expert) * GatherBytesPerParam(c.s) : 0.0;
  const double g = c.s.overlap_grad_reduce
                       ? std::max(out.grad_s * (1 - ovl), out.grad_s - cost.bwd_s * ovl)
                       : out.grad_s;
  const double a = c.s.overlap_param_gather
                       ? std::max(out.gather_s * (1 - ovl), out.gather_s - cost.fwd_s * ovl)
                       : out.gather_s;
  out.exposed_s = g + a;
}

}  // namespace

DataParallelTime DataParallelComm(const StepContext& c, const std::vector<StagePlan>& plans,
                                  const std::vector<StageCost>& costs) {
  DataParallelTime t;
  t.stages.resize(plans.size());
  for (size_t k = 0; k < plans.size(); ++k) {
    if (c.s.zero >= 3)
      FsdpComm(c, plans[k], costs[k], t.stages[k]);
    else
      GradientComm(c, plans[k], costs[k], t.stages[k]);
    // Every stage reduces at the end of its backward; the slowest one is on the critical path.
    t.exposed_s = std::max(t.exposed_s, t.stages[k].exposed_s);
  }
  return t;
}

}  // namespace trainsim::sim

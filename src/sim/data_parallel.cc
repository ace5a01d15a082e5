// Data-parallel communication (DP x CP and expert-DP groups).
#include <algorithm>
#include <utility>

#include "memory/memory.h"
#include "sim/step.h"

namespace trainsim::sim {
namespace {

// Parameters are gathered in 16 bits (Megatron's distributed optimizer and FSDP all-gather the
// bf16/fp16 model weights), in FP8 when the parameters are held in FP8 (--fp8-param-gather).
double GatherBytesPerParam(const Strategy& s) {
  return s.fp8_param_gather && IsLowPrecision(s.dtype) ? 1.0 : 2.0;
}

// Sharded data parallelism over N replicas (HSDP: Megatron-LM --num-distributed-optimizer-
// instances N, torchtitan data_parallel_replicate_degree N): a group of g ranks splits into N
// instances of g/N consecutive ranks, which reduce-scatter the gradients and all-gather the
// parameters among themselves; the ranks at one offset of every instance all-reduce their
// gradient shard (Megatron-LM param_and_grad_buffer.py, start_grad_sync: reduce_scatter over
// intra_distributed_optimizer_instance_group, then all_reduce of the local shard over
// inter_distributed_optimizer_instance_group; FSDP2 HSDP likewise).
struct ShardGroups {
  cost::Placement intra, inter;
};
ShardGroups SplitInstances(const cost::Placement& g, const Strategy& s) {
  const int n = s.zero >= 1 ? s.dist_opt_instances : 1;
  if (n <= 1 || g.size % n != 0) return {g, cost::Placement{}};
  const int intra = g.size / n;
  return {cost::Placement{intra, std::min(g.local, intra)},
          cost::Placement{n, std::clamp(g.local / intra, 1, n)}};
}

// One collective over the dense (DP x CP) and the expert-DP groups of a stage, within the
// sharding instance; kAllReduce of the gradients adds the all-reduce of the shard across
// instances.
double StageCollective(const StepContext& c, graph::Coll coll, double dense, double expert,
                       double bytes_per_param) {
  const ShardGroups d = SplitInstances(c.pl.dp_cp, c.s), e = SplitInstances(c.pl.edp, c.s);
  return cost::CollectiveTime(c.hw, coll, d.intra, dense * bytes_per_param) +
         cost::CollectiveTime(c.hw, coll, e.intra, expert * bytes_per_param);
}

// The cross-instance all-reduce of each rank's gradient shard (0 without instances).
double CrossInstanceAllReduce(const StepContext& c, double dense, double expert) {
  const ShardGroups d = SplitInstances(c.pl.dp_cp, c.s), e = SplitInstances(c.pl.edp, c.s);
  const double b = c.grad_bytes_per_param;
  return cost::CollectiveTime(c.hw, graph::Coll::kAllReduce, d.inter, dense * b / d.intra.size) +
         cost::CollectiveTime(c.hw, graph::Coll::kAllReduce, e.inter, expert * b / e.intra.size);
}

// ZeRO++ hpZ: the backward all-gather over the secondary partition, groups of zero_hpz_size
// consecutive ranks of each sharding group (DeepSpeed zero_hpz_partition_size; arXiv 2306.10209
// section 3.2: inter-node backward all-gather removed when the group is a node).
double HpzBackwardGather(const StepContext& c, double dense, double expert, double bytes) {
  const int h = c.s.zero_hpz_size;
  auto group = [h](const cost::Placement& g) {
    const int size = std::min(h, g.size);
    return cost::Placement{size, std::min(g.local, size)};
  };
  const ShardGroups d = SplitInstances(c.pl.dp_cp, c.s), e = SplitInstances(c.pl.edp, c.s);
  return cost::CollectiveTime(c.hw, graph::Coll::kAllGather, group(d.intra), dense * bytes) +
         cost::CollectiveTime(c.hw, graph::Coll::kAllGather, group(e.intra), expert * bytes);
}

// ZeRO-3 / FSDP: gather parameters in forward and again in backward, reduce-scatter gradients
// every micro-batch; prefetching hides them behind the layers' compute, at best all but one
// layer's share. ZeRO++ (arXiv 2306.10209, 3M -> 0.75M cross-node volume): qwZ gathers the
// forward weights in int8 (1 B per parameter; the per-block scales are not counted), hpZ gathers
// the backward weights in 16 bits within its secondary group, qgZ reduces the gradients as an
// int4 all-to-all (0.5 B per parameter, costed as a reduce-scatter of that volume; the
// (de)quantisation kernels are not costed).
void FsdpComm(const StepContext& c, const StagePlan& plan, const StageCost& cost,
              StageDpComm& out) {
  const double ovl = c.hw.eff.comm_overlap;
  const double dense_w = plan.Params(false, false), expert_w = plan.Params(true, false);
  const double fwd_b = c.s.zero_quant_weights ? 1.0 : GatherBytesPerParam(c.s);
  const double ag_f = StageCollective(c, graph::Coll::kAllGather, dense_w, expert_w, fwd_b);
  const double ag_b = c.s.zero_hpz_size > 1
                          ? HpzBackwardGather(c, dense_w, expert_w, GatherBytesPerParam(c.s))
                          : StageCollective(c, graph::Coll::kAllGather, dense_w, expert_w,
                                            GatherBytesPerParam(c.s));
  const double rs_b = c.s.zero_quant_grads ? 0.5 : c.grad_bytes_per_param;
  const double rs = StageCollective(c, graph::Coll::kReduceScatter, plan.Params(false, true),
                                    plan.Params(true, true), rs_b);
  const LayerCost& s = cost.sum;
  // The gathers run on their own stream while the GPU computes or while it waits on the host
  // (a host-bound pass leaves the link idle as much as a compute-bound one).
  const double f_hidden = std::max(s.fwd_compute_s, cost.fwd_host_s) * ovl;
  const double b_hidden = std::max(s.bwd_compute_s + s.recompute_s, cost.bwd_host_s) * ovl;
  const int n = std::max(1, plan.num_layers());
  const double per_mb =
      std::max(ag_f - f_hidden, ag_f / n) + std::max(ag_b + rs - b_hidden, (ag_b + rs) / n);
  out.fsdp_gather_s = (ag_f + ag_b) / 2;  // one gather per pass: the mean of the two
  out.fsdp_reduce_s = rs;
  out.gather_bytes = (dense_w + expert_w) * fwd_b;
  out.grad_bytes = (plan.Params(false, true) + plan.Params(true, true)) * rs_b;
  // HSDP: the shards are all-reduced across replicas once per step, in the last backward.
  out.grad_s = CrossInstanceAllReduce(c, plan.Params(false, true), plan.Params(true, true));
  out.exposed_s =
      per_mb * c.micro_batches + std::max(out.grad_s * (1 - ovl), out.grad_s - cost.bwd_s * ovl);
}

// The part of a pass that can hide the DP collectives: all of it, but where the DP group lies
// inside one scale-up domain its collectives share the links (and NCCL's channels) with the
// pass's own exposed TP/EP collectives, so only the rest of the pass hides them (one link
// carries one stream's bytes at a time).
double DpHideWindow(const StepContext& c, double pass_s, double pass_comm_s) {
  const cost::Placement& g = c.pl.dp_cp;
  if (g.size <= 1 || g.local < g.size) return pass_s;
  return std::max(0.0, pass_s - pass_comm_s);
}

// How many micro-batch passes of a whole stage can hide its once-per-step gradient reduce (or
// its parameter gather). Without interleaving the buckets are ready only during the last
// micro-batch's backward: one pass. Megatron-LM's interleaved schedule launches each model
// chunk's grad sync as soon as that chunk's last backward is done (schedules.py,
// forward_backward_pipelining_with_interleaving: grad_sync_func per chunk in the cooldown) and
// each chunk's param gather before its first forward (param_sync_func in the warm-up); the
// cooldown runs the chunks' last backwards in groups of pp micro-batches, last chunk first, so
// the reduce of chunk j still has the j chunks after it (pp micro-batches each) to hide behind:
// v - 1 chunk groups of p micro-batch-chunks plus the last chunk's own pass, in stage passes
// p (v - 1) / v + 1 / v. Capped at the micro-batches of the step.
double DpHidePasses(const StepContext& c) {
  if (c.v <= 1) return 1.0;
  const double passes = static_cast<double>(c.p) * (c.v - 1) / c.v + 1.0 / c.v;
  return std::min(passes, static_cast<double>(std::max(1, c.micro_batches)));
}

// DeepSpeed ZeRO-2 partitions the gradients, so each micro-batch's backward reduce-scatters its
// own (deepspeed/runtime/engine.py, allreduce_gradients: "ZeRO stage >= 2 communicates during
// non gradient accumulation boundaries as well"; Accelerate's no_sync skips DeepSpeed at stage
// >= 2 for the same reason); Megatron-LM's distributed optimizer and DeepSpeed ZeRO-1 reduce at
// the accumulation boundary only. A DeepSpeed ZeRO-1/2 engine is the one that holds its reduce
// buckets (memory::HoldsReduceBuckets: a DeepSpeed stack's profile or config).
bool ReducesEveryMicroBatch(const Strategy& s) {
  return s.zero == 2 && memory::HoldsReduceBuckets(s);
}

// ZeRO 0-2: one gradient all-reduce (or reduce-scatter plus a parameter all-gather) per step
// (per micro-batch under DeepSpeed ZeRO-2, above),
// overlapped with the backward (and the next forward) when the strategy says so.
// slack_f / slack_b: how much later than the first stage this stage starts its first forward
// and how much earlier it ends its last backward (PipelineSlack): its gather and its reduce
// also run in that time, while the first stage is still busy.
void GradientComm(const StepContext& c, const StagePlan& plan, const StageCost& cost,
                  double slack_f, double slack_b, StageDpComm& out) {
  const double ovl = c.hw.eff.comm_overlap;
  const double dense = plan.Params(false, true), expert = plan.Params(true, true);
  const bool sharded = c.s.zero >= 1;
  out.grad_s = StageCollective(c, sharded ? graph::Coll::kReduceScatter : graph::Coll::kAllReduce,
                               dense, expert, c.grad_bytes_per_param) +
               CrossInstanceAllReduce(c, dense, expert);
  out.gather_s =
      sharded ? StageCollective(c, graph::Coll::kAllGather, dense, expert, GatherBytesPerParam(c.s))
              : 0.0;
  out.grad_bytes = (dense + expert) * c.grad_bytes_per_param;
  out.gather_bytes = sharded ? (dense + expert) * GatherBytesPerParam(c.s) : 0.0;
  const double passes = DpHidePasses(c);
  const double bwd_window = passes * DpHideWindow(c, cost.bwd_s, cost.sum.bwd_comm_s);
  const double fwd_window = passes * DpHideWindow(c, cost.fwd_s, cost.sum.fwd_comm_s);
  auto exposed_reduce = [&](double window) {
    return c.s.overlap_grad_reduce ? std::max(out.grad_s * (1 - ovl), out.grad_s - window * ovl)
                                   : out.grad_s;
  };
  // DeepSpeed ZeRO-2: every micro-batch reduces, behind its own backward.
  const int reduces = ReducesEveryMicroBatch(c.s) ? std::max(1, c.micro_batches) : 1;
  const double g = reduces > 1
                       ? reduces * exposed_reduce(DpHideWindow(c, cost.bwd_s, cost.sum.bwd_comm_s))
                       : exposed_reduce(bwd_window);
  out.grad_bytes *= reduces;
  const double a = c.s.overlap_param_gather
                       ? std::max(out.gather_s * (1 - ovl), out.gather_s - fwd_window * ovl)
                       : out.gather_s;
  out.exposed_s = std::max(0.0, g - slack_b) + std::max(0.0, a - slack_f);
}

// Under 1F1B and its interleaved form, stage k receives its first micro-batch after the k
// stages before it ran their first forward (chunk) and finishes its last backward (chunk) that
// much earlier than they do (the fill and drain of the pipeline): per-step DP collectives of a
// later stage hide there. {forward slack, backward slack} of stage k; 0 for other schedules.
std::pair<double, double> PipelineSlack(const StepContext& c, const std::vector<StageCost>& costs,
                                        size_t k) {
  if (c.sched != PipelineSchedule::k1F1B && c.sched != PipelineSchedule::kInterleaved)
    return {0.0, 0.0};
  const double v = c.sched == PipelineSchedule::kInterleaved ? std::max(1, c.v) : 1;
  double f = 0, b = 0;
  for (size_t j = 0; j < k && j < costs.size(); ++j) {
    f += costs[j].fwd_s / v + c.p2p_s;
    b += costs[j].bwd_s / v + c.p2p_s;
  }
  return {f, b};
}

}  // namespace

DataParallelTime DataParallelComm(const StepContext& c, const std::vector<StagePlan>& plans,
                                  const std::vector<StageCost>& costs) {
  DataParallelTime t;
  t.stages.resize(plans.size());
  for (size_t k = 0; k < plans.size(); ++k) {
    if (c.s.zero >= 3)
      FsdpComm(c, plans[k], costs[k], t.stages[k]);
    else {
      const auto [slack_f, slack_b] = PipelineSlack(c, costs, k);
      GradientComm(c, plans[k], costs[k], slack_f, slack_b, t.stages[k]);
    }
    // Every stage reduces at the end of its backward; the slowest one is on the critical path.
    t.exposed_s = std::max(t.exposed_s, t.stages[k].exposed_s);
  }
  return t;
}

}  // namespace trainsim::sim

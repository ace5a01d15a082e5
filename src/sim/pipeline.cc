// The closed-form pipeline over the stages and the breakdown along its critical rank.
#include "sim/step.h"

namespace trainsim::sim {
namespace {

// The stages a pipeline rank runs, with the share of a micro-batch of each: the stage itself,
// or under DualPipe half of it and half of its mirror p-1-k (DeepSeek-V3 report, 3.2.1).
struct RankShare {
  int stage[2];
  double weight[2];
  int n;
};

RankShare RankStages(const StepContext& c, int rank) {
  if (c.sched == PipelineSchedule::kDualPipe) return {{rank, c.p - 1 - rank}, {0.5, 0.5}, 2};
  return {{rank, rank}, {1.0, 0.0}, 1};
}

double RankTime(const StepContext& c, const std::vector<StageCost>& costs, int rank) {
  const RankShare r = RankStages(c, rank);
  if (r.n == 1) return costs[rank].pipeline_s();
  return (costs[r.stage[0]].pipeline_s() + costs[r.stage[1]].pipeline_s()) / 2;
}

}  // namespace

PipelineResult RunPipeline(const StepContext& c, const std::vector<StageCost>& costs) {
  std::vector<double> stage_s(c.p), stage_w(c.p), stage_f(c.p);
  for (int k = 0; k < c.p; ++k) {
    stage_s[k] = costs[k].pipeline_s();
    stage_w[k] = costs[k].sum.wgrad_s;
    stage_f[k] = costs[k].fwd_s;
  }
  PipelineResult r;
  r.time = schedule::PipelineStepTime(stage_s, c.micro_batches, c.v, c.sched, c.p2p_s, &stage_w,
                                      &stage_f);
  double t_max = -1;
  for (int rank = 0; rank < c.p; ++rank) {
    const double t = RankTime(c, costs, rank);
    if (t > t_max) {
      t_max = t;
      r.critical_rank = rank;
    }
  }
  return r;
}

TimeBreakdown Breakdown(const StepContext& c, const std::vector<StageCost>& costs,
                        const PipelineResult& pipe, double dp_exposed_s, double optimizer_s) {
  // The steady state runs m micro-batches of the critical rank's work; under DualPipe the EP
  // all-to-all hidden behind the paired chunk is not exposed.
  const RankShare r = RankStages(c, pipe.critical_rank);
  const double m = c.micro_batches;
  TimeBreakdown tb;
  for (int i = 0; i < r.n; ++i) {
    const StageCost& sc = costs[r.stage[i]];
    const LayerCost& s = sc.sum;
    const double f = r.weight[i] * m;
    tb.compute_s += f * (s.fwd_compute_s + s.bwd_compute_s + s.recompute_s);
    tb.recompute_s += f * s.recompute_s;
    tb.exposed_tp_comm_s += f * s.tp_comm_s;
    tb.exposed_cp_comm_s += f * s.cp_comm_s;
    tb.exposed_ep_comm_s += f * (s.ep_comm_s - sc.hidden_s);
    tb.exposed_offload_s += f * s.offload_s;
    tb.overhead_s += f * sc.launch_overhead_s;
  }
  tb.overhead_s += c.hw.eff.step_overhead_s;
  tb.pp_comm_s = pipe.time.p2p_s;
  tb.bubble_s = pipe.time.bubble_s;
  tb.exposed_dp_comm_s = dp_exposed_s;
  tb.optimizer_s = optimizer_s;
  return tb;
}

}  // namespace trainsim::sim

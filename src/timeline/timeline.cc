// SimulateTimeline(): per-chunk costs from a StepReport -> schedule order -> event simulation ->
// per-stage statistics and the step time.
#include "trainsim/timeline.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "schedule/schedule.h"
#include "timeline/event_sim.h"
#include "timeline/schedules.h"
#include "trainsim/limits.h"

namespace trainsim {
namespace {

// Layers of each (rank, chunk) in model order: the pipeline split when it matches the report,
// else an even split of each stage's layers over its chunks.
void ChunkLayerRanges(const StepReport& r, const Strategy& s, int v, std::vector<int>& begin,
                      std::vector<int>& count) {
  const int p = static_cast<int>(r.stages.size());
  int total = 0;
  for (const StageReport& st : r.stages) total += st.layers;
  Strategy split = s;
  split.pp = p;
  split.vpp = v;
  std::vector<int> per_vs = PipelineChunkLayers(split, total, 0);
  std::vector<int> check(p, 0);
  for (int vs = 0; vs < p * v; ++vs) check[vs % p] += per_vs[vs];
  for (int k = 0; k < p; ++k) {
    if (check[k] == r.stages[k].layers) continue;
    for (int vs = k; vs < p * v; vs += p) {
      const int c = vs / p;
      per_vs[vs] = r.stages[k].layers * (c + 1) / v - r.stages[k].layers * c / v;
    }
  }
  begin.assign(p * v, 0);
  count.assign(p * v, 0);
  int layer = 0;
  for (int vs = 0; vs < p * v; ++vs) {
    begin[vs] = layer;
    count[vs] = per_vs[vs];
    layer += per_vs[vs];
  }
}

}  // namespace

const char* TimelineOpName(TimelineOp op) {
  switch (op) {
    case TimelineOp::kForward:
      return "F";
    case TimelineOp::kBackward:
      return "B";
    case TimelineOp::kBackwardInput:
      return "B (input grad)";
    case TimelineOp::kWeightGrad:
      return "W";
    case TimelineOp::kForwardBackward:
      return "F&B";
    case TimelineOp::kP2PSend:
      return "pp send";
    case TimelineOp::kGradReduce:
      return "dp grad reduce";
    case TimelineOp::kParamGather:
      return "dp param all-gather";
    case TimelineOp::kFsdpGather:
      return "fsdp all-gather";
    case TimelineOp::kFsdpReduce:
      return "fsdp reduce-scatter";
  }
  return "?";
}

const char* TimelineStreamName(TimelineStream s) {
  switch (s) {
    case TimelineStream::kCompute:
      return "compute";
    case TimelineStream::kPipeP2P:
      return "pp p2p";
    case TimelineStream::kDataParallel:
      return "dp comm";
    case TimelineStream::kFsdp:
      return "fsdp comm";
  }
  return "?";
}

const char* PipelineScheduleName(PipelineSchedule s) {
  // ScheduleName's views are string literals, hence NUL-terminated.
  return ScheduleName(s).data();
}

double PipelineMessageBytes(const ModelSpec& m, const Strategy& s) {
  double tokens = static_cast<double>(s.mbs) * s.seq / std::max(1, s.cp);
  if (s.sp && s.tp > 1) tokens /= s.tp;
  return tokens * static_cast<double>(m.hidden) * 2.0;
}

Result<Timeline> SimulateTimeline(const StepReport& r, const Strategy& s,
                                  const TimelineOptions& o) {
  const int p = static_cast<int>(r.stages.size());
  if (p < 1 || p != s.pp)
    return Status::Invalid("stages: the report has " + std::to_string(p) +
                           " stages but the strategy has pp " + std::to_string(s.pp));
  const int m = r.micro_batches;
  if (m < 1) return Status::Invalid("micro_batches: the report has no micro-batches");
  const PipelineSchedule sched = o.schedule.value_or(s.schedule);
  if ((sched == PipelineSchedule::kZeroBubbleH1 || sched == PipelineSchedule::kDualPipe) &&
      s.vpp > 1)
    return Status::Invalid(std::string("schedule: ") + PipelineScheduleName(sched) +
                           " needs vpp 1, got vpp " + std::to_string(s.vpp));
  const int v = sched == PipelineSchedule::kInterleaved ? std::max(1, s.vpp) : 1;
  if (!o.stage_slowdown.empty() && static_cast<int>(o.stage_slowdown.size()) != p)
    return Status::Invalid("stage_slowdown: needs one factor per stage (" + std::to_string(p) +
                           "), got " + std::to_string(o.stage_slowdown.size()));
  for (double f : o.stage_slowdown)
    if (!(f > 0) || !std::isfinite(f))
      return Status::Invalid("stage_slowdown: factors must be finite and > 0");
  if (static_cast<long long>(p) * v * m > limits::kMaxTraceEvents)
    return Status::Invalid("micro_batches", "pp * vpp * micro-batches is " +
                                                std::to_string(static_cast<long long>(p) * v * m) +
                                                ", too many to simulate event by event (limit " +
                                                std::to_string(limits::kMaxTraceEvents) + ")");

  thread_local timeline::Order order;
  if (Status st = timeline::BuildOrder(sched, p, v, m, order); !st.ok()) return st;
  const int chunks = order.chunks;
  const bool dual = order.bidirectional;

  // Per-chunk costs.
  std::vector<int> lbegin, lcount;
  ChunkLayerRanges(r, s, dual ? 1 : v, lbegin, lcount);
  timeline::SimInput in;
  in.order = &order;
  in.cost.resize(static_cast<size_t>(p) * chunks);
  in.static_bytes.resize(p);
  for (int rank = 0; rank < p; ++rank) {
    const double slow = o.stage_slowdown.empty() ? 1.0 : o.stage_slowdown[rank];
    in.static_bytes[rank] = 0;
    for (int c = 0; c < chunks; ++c) {
      // DualPipe: chunk 0 is stage `rank` of the forward direction, chunk 1 stage p-1-rank of
      // the reverse direction (two copies of the parameters per rank).
      const int k = dual ? (c == 0 ? rank : p - 1 - rank) : rank;
      const int vs = dual ? k : c * p + rank;
      const double per = dual ? 1.0 : 1.0 / v;
      const StageReport& st = r.stages[k];
      timeline::ChunkCost& cc = in.cost[static_cast<size_t>(rank) * chunks + c];
      cc.f_s = st.fwd_per_mb_s * per * slow;
      cc.b_s = st.bwd_per_mb_s * per * slow;
      cc.w_s = std::min(st.bwd_weight_per_mb_s, st.bwd_per_mb_s) * per * slow;
      // Exposed EP all-to-all of this stage (communication is not slowed by a straggler).
      cc.ep_f_s = std::min(st.ep_fwd_per_mb_s * per, cc.f_s);
      cc.ep_b_s = std::min(st.ep_bwd_per_mb_s * per, cc.b_s);
      cc.act_bytes = st.activation_bytes_per_mb * per;
      cc.f_flops = st.fwd_flops_per_mb * per;
      cc.b_flops = st.bwd_flops_per_mb * per;
      cc.w_flops = st.wgrad_flops_per_mb * per;
      cc.layer_begin = lbegin[vs];
      cc.layer_count = lcount[vs];
      cc.param_gather_s = st.dp_param_gather_s * per;
      cc.grad_reduce_s = st.dp_grad_comm_s * per;
      cc.fsdp_gather_s = st.fsdp_gather_per_mb_s * per;
      cc.fsdp_reduce_s = st.fsdp_reduce_per_mb_s * per;
      cc.gather_bytes = st.dp_gather_comm_bytes * per;
      cc.grad_bytes = st.dp_grad_comm_bytes * per;
      in.static_bytes[rank] += (dual || c == 0) ? st.static_bytes : 0.0;
    }
  }
  in.p2p_s = p > 1 ? r.stages[0].p2p_s : 0;
  in.p2p_bytes = o.p2p_message_bytes;
  in.overlap_grad_reduce = o.overlap_grad_reduce && s.overlap_grad_reduce;
  in.overlap_param_gather = o.overlap_param_gather && s.overlap_param_gather;
  in.overlap_fsdp = o.overlap_fsdp;
  in.overlap_p2p = o.overlap_p2p;
  in.overlap_ep = o.dualpipe_overlap_ep;
  in.grad_buckets = std::max(0, o.grad_buckets_per_chunk);

  Timeline t;
  t.schedule = sched;
  t.stages = p;
  t.chunks = chunks;
  t.micro_batches = m;
  t.stage_stats.resize(p);
  for (int k = 0; k < p; ++k) {
    t.stage_stats[k].stage = k;
    t.stage_stats[k].slowdown = o.stage_slowdown.empty() ? 1.0 : o.stage_slowdown[k];
  }
  if (Status st = timeline::RunEventSim(in, t); !st.ok()) return st;
  timeline::ComputeStageStats(t);

  // The terms Simulate adds after the pipeline: the optimizer and the per-step overhead.
  t.optimizer_s = r.time.optimizer_s;
  t.overhead_s = r.step_overhead_s;
  t.step_time_s = t.pipeline_s + t.optimizer_s + t.overhead_s;
  t.closed_form_step_time_s = r.step_time_s;
  return t;
}

}  // namespace trainsim

#include "timeline/event_sim.h"

#include <algorithm>
#include <string>

namespace trainsim::timeline {
namespace {

constexpr double kNotYet = -1.0;

struct RankState {
  int next = 0;  // local index of the next op
  double compute_free = 0;
  double last_start = 0;  // start of the latest compute op (FSDP prefetch issue point)
  bool started = false;
  double p2p_free = 0, dp_free = 0, fsdp_free = 0;
  double gather_all_end = 0;  // all ZeRO-1/2 gathers of the rank done
  double mem = 0;
};

class Engine {
 public:
  Engine(const SimInput& in, Timeline& t)
      : in_(in), o_(*in.order), t_(t), p_(o_.ranks), c_(o_.chunks), m_(o_.micro_batches) {
    pipes_ = o_.bidirectional ? 2 : 1;
    l_ = o_.bidirectional ? p_ : p_ * c_;
  }

  Status Run() {
    const size_t n_ops = o_.ops.size();
    const size_t slots = static_cast<size_t>(pipes_) * l_ * m_;
    farr_.assign(slots, kNotYet);
    barr_.assign(slots, kNotYet);
    rank_.assign(p_, RankState{});
    first_f_.assign(static_cast<size_t>(p_) * c_, 0);
    gather_end_.assign(static_cast<size_t>(p_) * c_, 0);
    last_wgrad_.assign(static_cast<size_t>(p_) * c_, -1);
    deferred_head_.assign(n_ops, -1);
    deferred_next_.assign(n_ops, -1);
    t_.events.clear();
    t_.events.reserve(n_ops * 2 + static_cast<size_t>(p_) * c_ * 16);
    Prepare();

    size_t left = n_ops;
    while (left > 0) {
      bool progress = false;
      for (int r = 0; r < p_; ++r) {
        RankState& rs = rank_[r];
        const int end = o_.begin[r + 1] - o_.begin[r];
        while (rs.next < end) {
          double dep = 0;
          if (!Ready(r, o_.ops[o_.begin[r] + rs.next], dep)) break;
          Execute(r, rs.next, dep);
          ++rs.next;
          --left;
          progress = true;
        }
      }
      if (!progress)
        return Status::Invalid(
            "schedule: the op order deadlocks (an op waits for an input that "
            "is produced later on its own rank)");
    }
    Finish();
    return Status::Ok();
  }

 private:
  const ChunkCost& Cost(int r, int c) const { return in_.cost[static_cast<size_t>(r) * c_ + c]; }
  void Locate(int r, int c, int& pipe, int& vs) const {
    if (o_.bidirectional) {
      pipe = c;
      vs = c == 0 ? r : p_ - 1 - r;
    } else {
      pipe = 0;
      vs = c * p_ + r;
    }
  }
  size_t Slot(int pipe, int vs, int mb) const {
    return (static_cast<size_t>(pipe) * l_ + vs) * m_ + mb;
  }
  static bool HasF(TimelineOp op) {
    return op == TimelineOp::kForward || op == TimelineOp::kForwardBackward;
  }
  static bool HasB(TimelineOp op) {
    return op == TimelineOp::kBackward || op == TimelineOp::kBackwardInput ||
           op == TimelineOp::kForwardBackward;
  }
  // Chunk whose weight gradients the op produces; -1 when none.
  static int GradChunk(const SchedOp& s) {
    switch (s.op) {
      case TimelineOp::kBackward:
      case TimelineOp::kWeightGrad:
        return s.chunk;
      case TimelineOp::kForwardBackward:
        return s.chunk2;
      default:
        return -1;
    }
  }
  // Backward part of an op: (chunk, mb).
  static int BChunk(const SchedOp& s) {
    return s.op == TimelineOp::kForwardBackward ? s.chunk2 : s.chunk;
  }
  static int BMb(const SchedOp& s) { return s.op == TimelineOp::kForwardBackward ? s.mb2 : s.mb; }

  int Buckets(const ChunkCost& c) const {
    return in_.grad_buckets > 0 ? in_.grad_buckets : std::max(1, c.layer_count);
  }

  double Duration(int r, const SchedOp& s) const {
    const ChunkCost& c = Cost(r, s.chunk);
    switch (s.op) {
      case TimelineOp::kForward:
        return c.f_s;
      case TimelineOp::kBackward:
        return c.b_s;
      case TimelineOp::kBackwardInput:
        return std::max(0.0, c.b_s - c.w_s);
      case TimelineOp::kWeightGrad:
        return c.w_s;
      case TimelineOp::kForwardBackward: {
        // DualPipe: the all-to-all of one chunk runs under the compute of the other
        // (DeepSeek-V3 report, figure 4); the pair lasts as long as the longer of the
        // compute and the communication.
        const ChunkCost& cb = Cost(r, s.chunk2);
        const double comm = c.ep_f_s + cb.ep_b_s;
        const double sum = c.f_s + cb.b_s;
        return in_.overlap_ep ? std::max(sum - comm, comm) : sum;
      }
      default:
        return 0;
    }
  }

  void Prepare() {
    // Last op producing each chunk's weight gradients; deferred forward sends; ZeRO-1/2 gathers
    // at the start of the step in the order the chunks are first used.
    for (int r = 0; r < p_; ++r) {
      RankState& rs = rank_[r];
      rs.mem = in_.static_bytes[r];
      t_.stage_stats[r].static_bytes = rs.mem;
      t_.stage_stats[r].memory.clear();
      t_.stage_stats[r].memory.push_back({0.0, rs.mem});
      t_.stage_stats[r].peak_mem_bytes = rs.mem;
      const int b = o_.begin[r], e = o_.begin[r + 1];
      for (int i = b; i < e; ++i) {
        const SchedOp& s = o_.ops[i];
        const int g = GradChunk(s);
        if (g >= 0) last_wgrad_[static_cast<size_t>(r) * c_ + g] = i - b;
        if (s.send_after > i - b && b + s.send_after < e) {
          const int j = b + s.send_after;
          deferred_next_[i] = deferred_head_[j];
          deferred_head_[j] = i;
        }
        if (HasF(s.op)) {
          const size_t k = static_cast<size_t>(r) * c_ + s.chunk;
          if (!first_f_[k]) {
            first_f_[k] = 1;
            const ChunkCost& c = Cost(r, s.chunk);
            if (c.param_gather_s > 0) {
              const double start = rs.dp_free;
              rs.dp_free = start + c.param_gather_s;
              Emit(r, TimelineStream::kDataParallel, TimelineOp::kParamGather, start,
                   c.param_gather_s, -1, s.chunk, c.layer_begin, c.layer_count, 0, c.gather_bytes);
            }
            gather_end_[k] = rs.dp_free;
          }
        }
      }
      rs.gather_all_end = rs.dp_free;
      std::fill(first_f_.begin() + static_cast<size_t>(r) * c_,
                first_f_.begin() + static_cast<size_t>(r + 1) * c_, 0);
    }
  }

  bool Ready(int r, const SchedOp& s, double& dep) const {
    int pipe = 0, vs = 0;
    if (HasF(s.op)) {
      Locate(r, s.chunk, pipe, vs);
      if (vs > 0) {
        const double a = farr_[Slot(pipe, vs - 1, s.mb)];
        if (a < 0) return false;
        dep = std::max(dep, a);
      }
    }
    if (HasB(s.op)) {
      Locate(r, BChunk(s), pipe, vs);
      // The last stage starts the backward from its own forward (the loss).
      const double a =
          vs < l_ - 1 ? barr_[Slot(pipe, vs + 1, BMb(s))] : farr_[Slot(pipe, vs, BMb(s))];
      if (a < 0) return false;
      dep = std::max(dep, a);
    }
    return true;
  }

  TimelineEvent& Emit(int r, TimelineStream stream, TimelineOp op, double start, double dur, int mb,
                      int chunk, int layer_begin, int layer_count, double flops, double bytes) {
    TimelineEvent& e = t_.events.emplace_back();
    e.stage = r;
    e.stream = stream;
    e.op = op;
    e.start_s = start;
    e.dur_s = dur;
    e.micro_batch = mb;
    e.chunk = chunk;
    e.layer_begin = layer_begin;
    e.layer_count = layer_count;
    e.flops = flops;
    e.bytes = bytes;
    return e;
  }

  // Global micro-batch number for display (DualPipe numbers the reverse direction after the
  // forward direction).
  int DisplayMb(int chunk, int mb) const { return o_.bidirectional ? chunk * m_ + mb : mb; }

  // Sends the output of (chunk, mb) of rank r to its neighbour; `forward`: activation to the next
  // virtual stage, else gradient to the previous one.
  void Send(int r, double post, int chunk, int mb, bool forward) {
    int pipe = 0, vs = 0;
    Locate(r, chunk, pipe, vs);
    RankState& rs = rank_[r];
    double arrive = post;
    if (in_.p2p_s > 0) {
      const double start = std::max(post, rs.p2p_free);
      arrive = start + in_.p2p_s;
      rs.p2p_free = arrive;
      const ChunkCost& c = Cost(r, chunk);
      Emit(r, TimelineStream::kPipeP2P, TimelineOp::kP2PSend, start, in_.p2p_s,
           DisplayMb(chunk, mb), chunk, c.layer_begin, c.layer_count, 0, in_.p2p_bytes);
      // Megatron's blocking send_forward_recv_backward / DualPipe's wait before the next chunk.
      if (!in_.overlap_p2p) rs.compute_free = std::max(rs.compute_free, arrive);
    }
    (forward ? farr_ : barr_)[Slot(pipe, vs, mb)] = arrive;
  }

  void Mem(int r, double t, double delta) {
    RankState& rs = rank_[r];
    rs.mem += delta;
    StageTimeline& st = t_.stage_stats[r];
    if (!st.memory.empty() && st.memory.back().t_s == t)
      st.memory.back().bytes = rs.mem;
    else
      st.memory.push_back({t, rs.mem});
    st.peak_mem_bytes = std::max(st.peak_mem_bytes, rs.mem);
  }

  void Execute(int r, int local, double dep) {
    RankState& rs = rank_[r];
    const int gi = o_.begin[r] + local;
    const SchedOp& s = o_.ops[gi];
    const double dur = Duration(r, s);
    double start = std::max(rs.compute_free, dep);
    start = WaitForParamGather(r, s, start);
    start = GatherFsdpParams(r, s, dur, start);
    const double end = start + dur;
    rs.compute_free = end;
    rs.last_start = start;
    rs.started = true;
    EmitCompute(r, s, start, dur);
    ApplyMemory(r, s, end);
    SendOutputs(r, local, gi, s, end);
    ReduceGradients(r, local, s, start, dur, end);
  }

  // ZeRO-1/2: the first forward of a chunk needs its gathered parameters. Overlapped, the
  // gather runs layer by layer ahead of the forward (Megatron --overlap-param-gather), so the
  // forward ends no earlier than one layer after the gather. Returns the op's earliest start.
  double WaitForParamGather(int r, const SchedOp& s, double start) {
    if (!HasF(s.op)) return start;
    const RankState& rs = rank_[r];
    const ChunkCost& c = Cost(r, s.chunk);
    const size_t k = static_cast<size_t>(r) * c_ + s.chunk;
    if (first_f_[k]) return start;
    first_f_[k] = 1;
    if (!(c.param_gather_s > 0 || rs.gather_all_end > 0)) return start;
    if (in_.overlap_param_gather) {
      const double f = c.f_s, nb = Buckets(c);
      return std::max(start, gather_end_[k] + f / nb - f);
    }
    return std::max(start, rs.gather_all_end);
  }

  // ZeRO-3 / FSDP: gather the chunk's parameters before F and B (prefetched during the
  // previous op when overlapped, else after it). Returns the op's earliest start.
  double GatherFsdpParams(int r, const SchedOp& s, double dur, double start) {
    RankState& rs = rank_[r];
    const ChunkCost& c = Cost(r, s.chunk);
    const ChunkCost& cb = Cost(r, BChunk(s));
    double gather = 0;
    if (HasF(s.op)) gather += c.fsdp_gather_s;
    if (HasB(s.op)) gather += cb.fsdp_gather_s;
    if (gather <= 0) return start;
    const double issue = in_.overlap_fsdp ? (rs.started ? rs.last_start : 0.0) : rs.compute_free;
    const double gs = std::max(issue, rs.fsdp_free);
    const double ge = gs + gather;
    rs.fsdp_free = ge;
    const ChunkCost& gc = HasF(s.op) ? c : cb;
    Emit(r, TimelineStream::kFsdp, TimelineOp::kFsdpGather, gs, gather,
         DisplayMb(HasF(s.op) ? s.chunk : BChunk(s), HasF(s.op) ? s.mb : BMb(s)),
         HasF(s.op) ? s.chunk : BChunk(s), gc.layer_begin, gc.layer_count, 0, gc.gather_bytes);
    if (in_.overlap_fsdp) {
      const double nl = std::max(1, gc.layer_count);
      return std::max(start, ge + dur / nl - dur);
    }
    return std::max(start, ge);
  }

  // The compute event, with its FLOPs and activation bytes.
  void EmitCompute(int r, const SchedOp& s, double start, double dur) {
    const ChunkCost& c = Cost(r, s.chunk);
    const ChunkCost& cb = Cost(r, BChunk(s));
    double flops = 0, bytes = 0;
    switch (s.op) {
      case TimelineOp::kForward:
        flops = c.f_flops;
        bytes = c.act_bytes;
        break;
      case TimelineOp::kBackward:
        flops = c.b_flops;
        bytes = c.act_bytes;
        break;
      case TimelineOp::kBackwardInput:
        flops = std::max(0.0, c.b_flops - c.w_flops);
        break;
      case TimelineOp::kWeightGrad:
        flops = c.w_flops;
        bytes = c.act_bytes;
        break;
      case TimelineOp::kForwardBackward:
        flops = c.f_flops + cb.b_flops;
        bytes = c.act_bytes;
        break;
      default:
        break;
    }
    TimelineEvent& e = Emit(r, TimelineStream::kCompute, s.op, start, dur, DisplayMb(s.chunk, s.mb),
                            s.chunk, c.layer_begin, c.layer_count, flops, bytes);
    if (s.op == TimelineOp::kForwardBackward) {
      e.micro_batch2 = DisplayMb(s.chunk2, s.mb2);
      e.chunk2 = s.chunk2;
    }
  }

  // Memory: a forward saves its activations at its end; the backward (the W when split)
  // frees them at its end; an F&B pair applies its net change at its end.
  void ApplyMemory(int r, const SchedOp& s, double end) {
    const ChunkCost& c = Cost(r, s.chunk);
    const ChunkCost& cb = Cost(r, BChunk(s));
    double delta = HasF(s.op) ? c.act_bytes : 0.0;
    if (s.op == TimelineOp::kBackward || s.op == TimelineOp::kForwardBackward)
      delta -= cb.act_bytes;
    if (s.op == TimelineOp::kWeightGrad) delta -= c.act_bytes;
    if (delta != 0) Mem(r, end, delta);
  }

  // Outputs to the neighbours: deferred forward sends first (DualPipe), then this op's.
  void SendOutputs(int r, int local, int gi, const SchedOp& s, double end) {
    for (int i = deferred_head_[gi]; i >= 0; i = deferred_next_[i])
      PostForward(r, o_.ops[i].chunk, o_.ops[i].mb, end);
    if (HasF(s.op) && !(s.send_after > local)) PostForward(r, s.chunk, s.mb, end);
    if (HasB(s.op)) {
      int pipe = 0, vs = 0;
      Locate(r, BChunk(s), pipe, vs);
      if (vs == 0)
        barr_[Slot(pipe, vs, BMb(s))] = end;
      else
        Send(r, end, BChunk(s), BMb(s), false);
    }
  }

  // Gradients: FSDP reduce-scatter after every weight-gradient op; DP buckets during the last
  // weight-gradient op of each chunk (Megatron --overlap-grad-reduce: buckets launch as the
  // backward of the last micro-batch reaches them).
  void ReduceGradients(int r, int local, const SchedOp& s, double start, double dur, double end) {
    const int g = GradChunk(s);
    if (g < 0) return;
    RankState& rs = rank_[r];
    const ChunkCost& gc = Cost(r, g);
    if (gc.fsdp_reduce_s > 0) {
      const double rs0 = std::max(end, rs.fsdp_free);
      rs.fsdp_free = rs0 + gc.fsdp_reduce_s;
      Emit(r, TimelineStream::kFsdp, TimelineOp::kFsdpReduce, rs0, gc.fsdp_reduce_s,
           DisplayMb(g, s.op == TimelineOp::kForwardBackward ? s.mb2 : s.mb), g, gc.layer_begin,
           gc.layer_count, 0, gc.grad_bytes);
      if (!in_.overlap_fsdp) rs.compute_free = std::max(rs.compute_free, rs.fsdp_free);
    }
    if (!in_.overlap_grad_reduce || gc.grad_reduce_s <= 0 ||
        last_wgrad_[static_cast<size_t>(r) * c_ + g] != local)
      return;
    const int nb = Buckets(gc);
    const double each = gc.grad_reduce_s / nb;
    for (int j = 0; j < nb; ++j) {
      const double ready = start + dur * (j + 1) / nb;
      const double bs = std::max(ready, rs.dp_free);
      rs.dp_free = bs + each;
      // Backward runs from the chunk's last layer to its first.
      const int lb = gc.layer_begin + gc.layer_count * (nb - 1 - j) / nb;
      const int le = gc.layer_begin + gc.layer_count * (nb - j) / nb;
      Emit(r, TimelineStream::kDataParallel, TimelineOp::kGradReduce, bs, each, -1, g, lb, le - lb,
           0, gc.grad_bytes / nb);
    }
  }

  void PostForward(int r, int chunk, int mb, double t) {
    int pipe = 0, vs = 0;
    Locate(r, chunk, pipe, vs);
    if (vs == l_ - 1)
      farr_[Slot(pipe, vs, mb)] = t;  // the loss: consumed by this rank's own backward
    else
      Send(r, t, chunk, mb, true);
  }

  void Finish() {
    // Without overlap the gradients are reduced after the rank's last backward
    // (Megatron finalize_model_grads).
    for (int r = 0; r < p_; ++r) {
      RankState& rs = rank_[r];
      if (in_.overlap_grad_reduce) continue;
      for (int ch = 0; ch < c_; ++ch) {
        const ChunkCost& c = Cost(r, ch);
        if (c.grad_reduce_s <= 0) continue;
        const double s = std::max(rs.compute_free, rs.dp_free);
        rs.dp_free = s + c.grad_reduce_s;
        Emit(r, TimelineStream::kDataParallel, TimelineOp::kGradReduce, s, c.grad_reduce_s, -1, ch,
             c.layer_begin, c.layer_count, 0, c.grad_bytes);
      }
    }
    double end = 0;
    for (const TimelineEvent& e : t_.events) end = std::max(end, e.start_s + e.dur_s);
    t_.pipeline_s = end;
  }

  const SimInput& in_;
  const Order& o_;
  Timeline& t_;
  int p_, c_, m_, pipes_ = 1, l_ = 1;
  std::vector<double> farr_, barr_;  // arrival of forward outputs / input gradients, per slot
  std::vector<RankState> rank_;
  std::vector<uint8_t> first_f_;
  std::vector<double> gather_end_;
  std::vector<int> last_wgrad_;
  std::vector<int> deferred_head_, deferred_next_;
};

}  // namespace

Status RunEventSim(const SimInput& in, Timeline& t) {
  if (in.order == nullptr || in.order->ranks < 1 ||
      static_cast<int>(t.stage_stats.size()) != in.order->ranks ||
      in.cost.size() != static_cast<size_t>(in.order->ranks) * in.order->chunks ||
      static_cast<int>(in.static_bytes.size()) != in.order->ranks)
    return Status::Invalid("timeline: inconsistent simulation input");
  Engine e(in, t);
  return e.Run();
}

}  // namespace trainsim::timeline

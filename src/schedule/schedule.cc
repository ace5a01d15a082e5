#include "schedule/schedule.h"

#include <algorithm>

namespace trainsim::schedule {

PipelineTime PipelineStepTime(const std::vector<double>& stage_s, int micro_batches, int vpp,
                              PipelineSchedule sched, double p2p_s,
                              const std::vector<double>* stage_w_s,
                              const std::vector<double>* stage_f_s) {
  PipelineTime r;
  const int p = static_cast<int>(stage_s.size());
  if (p == 0) return r;
  // DualPipe puts stage k and stage p-1-k on one rank (two chunks of half a stage each), which
  // balances a heavy first or last stage.
  const bool dual = sched == PipelineSchedule::kDualPipe;
  auto t_of = [&](int k) { return dual ? (stage_s[k] + stage_s[p - 1 - k]) / 2 : stage_s[k]; };
  double t_max = 0, t_sum = 0, w_sum = 0, f_sum = 0;
  for (int k = 0; k < p; ++k) {
    t_max = std::max(t_max, t_of(k));
    t_sum += stage_s[k];
    if (stage_w_s && static_cast<int>(stage_w_s->size()) == p) w_sum += (*stage_w_s)[k];
    f_sum +=
        stage_f_s && static_cast<int>(stage_f_s->size()) == p ? (*stage_f_s)[k] : stage_s[k] / 3;
  }
  const double v = sched == PipelineSchedule::kInterleaved ? std::max(vpp, 1) : 1;
  const double m = micro_batches;
  // Fill and drain pass once through every other stage: (m-1)*t_max + sum(t) for 1F1B, the
  // fill/drain part divided by v when interleaved. Equal stages give (p-1)/(v*m).
  r.bubble_s = (t_sum - t_max) / v;
  const double t_avg = t_sum / p, w_avg = w_sum / p, f_avg = f_sum / p;
  if (sched == PipelineSchedule::kZeroBubbleH1 && t_avg > 0) {
    r.bubble_s *= std::max(0.0, 1.0 - 2.0 * w_avg / t_avg);
  } else if (sched == PipelineSchedule::kDualPipe && p >= 2 && t_avg > 0) {
    // Chunks hold half a stage: F&B + B - 3W = (f + b)/2 + b/2 - 3w/2 with b = t - f, i.e.
    // (2t - f - 3w)/2 in stage times.
    const double per = std::max(0.0, (2.0 * t_avg - f_avg - 3.0 * w_avg) / 2.0);
    r.bubble_s = (p / 2.0 - 1.0) * per;
  }
  if (p > 1) {
    // One forward activation and one backward gradient cross each boundary per micro-batch
    // (and per chunk when interleaved); the fill and drain add p-1 more.
    // DualPipe pairs a forward and a backward chunk, which hides the steady-state transfers.
    r.p2p_s = 2.0 * p2p_s * ((sched == PipelineSchedule::kDualPipe ? 0 : m * v) + p - 1);
  }
  r.total_s = m * t_max + r.bubble_s + r.p2p_s;
  return r;
}

double InflightMicroBatches(int stage, int pp, int vpp, int micro_batches, PipelineSchedule sched) {
  const double m = micro_batches;
  switch (sched) {
    case PipelineSchedule::kGPipe:
      return m;
    case PipelineSchedule::kInterleaved: {
      // Megatron's interleaved warm-up: (p-k-1)*2 + (v-1)*p chunk forwards, plus one; all of
      // them when m == p.
      if (micro_batches == pp && vpp > 1) return m;
      const double chunks = std::min(m * vpp, 2.0 * (pp - stage - 1) + (vpp - 1.0) * pp + 1.0);
      return chunks / vpp;
    }
    case PipelineSchedule::kZeroBubbleH1:
      // ZB-H1 (Qi et al. 2023): stage k defers the W of k micro-batches, whose activations stay
      // until W, so every stage holds p in flight: 1F1B's peak (that of its first stage).
      return std::min(m, static_cast<double>(pp));
    case PipelineSchedule::kDualPipe:
      // DualPipe (DeepSeek-V3 report, table 2): PP+1 chunk activations at the peak, on the two
      // middle ranks (PP on the others), counted here in units of this stage's activations.
      return std::min(m, pp + ((stage == pp / 2 - 1 || stage == pp / 2) ? 1.0 : 0.0));
    case PipelineSchedule::k1F1B:
      break;
  }
  return std::min(m, static_cast<double>(pp - stage));
}

std::vector<int> ChunkLayers(int layers, int pp, int vpp, bool /*uneven*/, int mtp_layers) {
  Strategy s;
  s.pp = pp;
  s.vpp = vpp;
  return PipelineChunkLayers(s, layers, mtp_layers);
}

}  // namespace trainsim::schedule

// Synthetic reports for the timeline tests: p equal stages with given per-micro-batch times.
#pragma once

#include "trainsim/report.h"
#include "trainsim/strategy.h"

namespace trainsim::timeline_test {

// Stage times per micro-batch: forward f, backward b (incl. weight gradients w); one unit of
// activations per micro-batch, 100 static bytes, 4 layers per stage, no communication.
inline StepReport EqualStages(int p, int m, double f, double b, double w) {
  StepReport r;
  r.micro_batches = m;
  r.stages.resize(p);
  for (int k = 0; k < p; ++k) {
    StageReport& s = r.stages[k];
    s.index = k;
    s.layers = 4;
    s.fwd_per_mb_s = f;
    s.bwd_per_mb_s = b;
    s.bwd_weight_per_mb_s = w;
    s.activation_bytes_per_mb = 1;
    s.static_bytes = 100;
  }
  return r;
}

inline Strategy Pipeline(int p, int vpp, PipelineSchedule sched) {
  Strategy s;
  s.world_size = p;
  s.pp = p;
  s.vpp = vpp;
  s.schedule = sched;
  return s;
}

}  // namespace trainsim::timeline_test

// Closed-form pipeline schedules: step time from per-micro-batch stage times.
#pragma once

#include <vector>

#include "trainsim/strategy.h"

namespace trainsim::schedule {

struct PipelineTime {
  double total_s = 0;   // from the first forward to the last backward
  double bubble_s = 0;  // idle time of the slowest stage
  double p2p_s = 0;     // point-to-point transfers on the critical path
};

// stage_s[k]: forward+backward seconds of one micro-batch on stage k (all its virtual chunks).
// 1F1B/GPipe: bubble (p-1)/m of the steady state; interleaved: (p-1)/(v*m) (Narayanan et al.
// SC21, section 2.2). p2p_s: one activation transfer between neighbouring stages.
// stage_w_s[k], stage_f_s[k] (optional, same size): the weight-gradient and forward parts of
// stage_s[k]. ZB-H1 and
// DualPipe move into the bubble. ZB-H1 (Qi et al. 2023): bubble (p-1)(F+B-W) with B the input
// gradient, i.e. the 1F1B bubble less 2W per stage; DualPipe (DeepSeek-V3 report, table 2):
// (p/2-1)(F&B + B - 3W) over chunks of half a stage.
PipelineTime PipelineStepTime(const std::vector<double>& stage_s, int micro_batches, int vpp,
                              PipelineSchedule sched, double p2p_s,
                              const std::vector<double>* stage_w_s = nullptr,
                              const std::vector<double>* stage_f_s = nullptr);

// Micro-batches whose activations stage k holds at its peak, in units of the whole stage's
// per-micro-batch activations (Korthikanti et al. 2022, section 4.2.3: the first stage of 1F1B
// holds p; interleaving multiplies it by 1 + (p-1)/(p*v)).
double InflightMicroBatches(int stage, int pp, int vpp, int micro_batches, PipelineSchedule sched);

// Transformer layers of each virtual chunk without first / last stage layers: PipelineChunkLayers
// (trainsim/strategy.h), which Simulate uses. Even split when divisible; otherwise the embedding,
// the loss and MTP modules take one slot each on the first and last chunk and layers are
// balanced over the rest, whatever `uneven` says (kept for callers).
std::vector<int> ChunkLayers(int layers, int pp, int vpp, bool uneven, int mtp_layers);

}  // namespace trainsim::schedule

// The pieces of a whole-run plan that are formulas: the checkpoint interval and goodput under
// interruptions, the checkpoint's size, a GPU's average power over a step, the Chinchilla fit.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "trainsim/plan.h"

namespace trainsim {

double YoungDalyIntervalS(double checkpoint_s, double mtbf_job_s) {
  // Young 1974, "A first order approximation to the optimum checkpoint interval"; Daly 2006,
  // eq. 2 (first order): tau = sqrt(2 delta M).
  return std::sqrt(2.0 * checkpoint_s * mtbf_job_s);
}

Result<Goodput> ExpectedGoodput(double ideal_s, double checkpoint_s, double restart_s,
                                double mtbf_job_s, double interval_s) {
  Goodput g;
  g.mtbf_job_s = mtbf_job_s;
  g.checkpoint_write_s = checkpoint_s;
  g.restart_s = restart_s;
  g.interval_s = interval_s;
  if (!(interval_s > 0)) return Status::Invalid("checkpoint_interval_s", "must be > 0");
  // Each interruption loses the restart and, on average, half an interval with its checkpoint.
  const double loss_per_interruption = restart_s + (interval_s + checkpoint_s) / 2;
  const double lost_share = std::isinf(mtbf_job_s) ? 0.0 : loss_per_interruption / mtbf_job_s;
  if (!(lost_share < 1))
    return Status::Invalid("goodput", fmt::format("interruptions every {:.4g} s leave no progress "
                                                  "(restart + half an interval and its "
                                                  "checkpoint take {:.4g} s)",
                                                  mtbf_job_s, loss_per_interruption));
  const double with_checkpoints = ideal_s * (1 + checkpoint_s / interval_s);
  g.wall_time_s = with_checkpoints / (1 - lost_share);
  g.checkpoint_overhead_s = with_checkpoints - ideal_s;
  g.lost_s = g.wall_time_s - with_checkpoints;
  g.expected_interruptions = std::isinf(mtbf_job_s) ? 0.0 : g.wall_time_s / mtbf_job_s;
  g.fraction = g.wall_time_s > 0 ? ideal_s / g.wall_time_s : 1.0;
  return g;
}

double CheckpointBytes(const StepReport& r, const ModelSpec& m, const Strategy& s) {
  // Weights: every distinct parameter once in 16 bits (full and freeze); PEFT methods write the
  // adapters, whose fp32 copies are part of the optimizer states below.
  const bool base_written = s.method == FtMethod::kFull || s.method == FtMethod::kFreeze;
  double bytes = base_written ? 2.0 * static_cast<double>(CountParams(m).total) : 0.0;
  // Optimizer states: a rank's share times the ranks of its stage, divided by the replicas
  // (none under ZeRO >= 1, which shards the states over the data-parallel group).
  const double ranks_per_stage = static_cast<double>(s.world_size) / s.pp;
  const double replicas = s.zero >= 1 ? 1.0 : static_cast<double>(s.dp()) * s.cp;
  for (const StageReport& st : r.stages) bytes += st.optimizer_bytes * ranks_per_stage / replicas;
  return bytes;
}

namespace {

// Of the kernel time in the per-layer table, the share of memory-bound kernels; 0 without one.
double MemoryBoundShare(const StepReport& r) {
  double memory = 0, all = 0;
  for (const LayerReport& l : r.layers)
    for (const OpReport& op : l.ops) {
      if (op.kind == "comm") continue;
      const double t = l.count * (op.fwd_s + op.bwd_s);
      all += t;
      if (op.kind == "memory") memory += t;
    }
  return all > 0 ? memory / all : 0.0;
}

}  // namespace

GpuPower StepGpuPower(const StepReport& r, double tdp_w, double idle_fraction) {
  namespace d = plan_defaults;
  GpuPower p;
  p.tdp_w = tdp_w;
  p.idle_w = idle_fraction * tdp_w;
  const TimeBreakdown& t = r.time;
  const double mem_share = MemoryBoundShare(r);
  p.compute_bound_s = t.compute_s * (1 - mem_share);
  p.memory_bound_s = t.compute_s * mem_share + t.optimizer_s;
  p.wait_s = std::max(0.0, r.step_time_s - p.compute_bound_s - p.memory_bound_s);
  const double activity =
      r.step_time_s > 0 ? (d::kComputeActivity * p.compute_bound_s +
                           d::kMemoryActivity * p.memory_bound_s + d::kWaitActivity * p.wait_s) /
                              r.step_time_s
                        : 0.0;
  p.average_w = p.idle_w + (p.tdp_w - p.idle_w) * std::clamp(activity, 0.0, 1.0);
  return p;
}

namespace {
// Hoffmann et al. 2022, eq. 10 (approach 3): L(N, D) = E + A/N^alpha + B/D^beta.
constexpr double kE = 1.69, kA = 406.4, kB = 410.7, kAlpha = 0.34, kBeta = 0.28;
// Minimising L under C = 6 N D (their eq. 4 solved): N_opt = G (C/6)^a, D_opt = (C/6)^b / G
// with G = (alpha A / (beta B))^(1/(alpha+beta)), a = beta/(alpha+beta), b = alpha/(alpha+beta).
double G() {
  return std::pow(kAlpha * kA / (kBeta * kB), 1.0 / (kAlpha + kBeta));
}
constexpr double kExpA = kBeta / (kAlpha + kBeta), kExpB = kAlpha / (kAlpha + kBeta);
}  // namespace

ComputeOptimal ChinchillaOptimal(double flops) {
  ComputeOptimal o;
  o.flops = flops;
  o.params = G() * std::pow(flops / 6, kExpA);
  o.tokens = std::pow(flops / 6, kExpB) / G();
  o.loss = kE + kA / std::pow(o.params, kAlpha) + kB / std::pow(o.tokens, kBeta);
  return o;
}

double ChinchillaTokensForParams(double params) {
  // Invert N_opt(C): C/6 = (N/G)^(1/a); then D = (C/6)^b / G.
  const double c6 = std::pow(params / G(), 1.0 / kExpA);
  return std::pow(c6, kExpB) / G();
}

}  // namespace trainsim

// Whole-run planning (docs/PLAN.md): tokens -> steps, wall time, GPU-hours, cost, energy, CO2 and
// goodput under failures and checkpointing; compute-optimal sizing; the cluster recommendation
// over the hardware catalogue.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/hardware.h"
#include "trainsim/model.h"
#include "trainsim/report.h"
#include "trainsim/search.h"
#include "trainsim/status.h"
#include "trainsim/strategy.h"

namespace trainsim {

// Published figures behind the defaults (docs/PLAN.md, "Defaults and their sources").
namespace plan_defaults {
// Llama 3 paper (Dubey et al. 2024, "The Llama 3 Herd of Models", section 3.3.4): 466 job
// interruptions (47 planned, 419 unexpected) in a 54-day snapshot on up to 16,384 H100 GPUs.
// Every interruption costs a restart and the work since the last checkpoint, so all 466 count:
// 54 * 24 h * 16384 GPUs / 466 = 45,566 GPU-hours between interruptions per GPU.
constexpr double kLlama3Days = 54, kLlama3Gpus = 16384, kLlama3Interruptions = 466;
constexpr double kMtbfGpuHours = kLlama3Days * 24 * kLlama3Gpus / kLlama3Interruptions;
// Same paper, section 3.3.1 (storage): Tectonic sustains 2 TB/s for the 16K-GPU job; the default
// checkpoint bandwidth is that share per GPU (122 MB/s) times the job's GPUs.
constexpr double kStorageBytesPerSPerGpu = 2e12 / kLlama3Gpus;
// Restart after an interruption (rescheduling, process and NCCL start-up, checkpoint load): no
// job-level published figure was found; 10 minutes is an assumption, listed as such.
constexpr double kRestartS = 600;
// Data-centre PUE: Uptime Institute Global Data Center Survey 2023, industry average 1.58.
constexpr double kPue = 1.58;
// Grid carbon intensity: world average of electricity generation in 2023, 481 gCO2/kWh
// (Ember, Global Electricity Review 2024).
constexpr double kGridKgCo2PerKwh = 0.481;
// Host, NIC and switch power per 8-GPU node: an 8x H100 HGX node measured at most 8.4 kW while
// training near full GPU use (Latif et al. 2025, IEEE Access 13:61740), less 8 x 700 W of GPUs.
constexpr double kHostWPerNode = 8400 - 8 * 700;
constexpr int kGpusPerNode = 8;
// GPU idle power as a fraction of TDP: an idle H200 (700 W TDP) draws about 75-80 W (nvidia-smi
// readings, public RunPod measurements); 0.11 of TDP.
constexpr double kIdlePowerFraction = 0.11;
// Activity between idle (0) and TDP (1) in each phase of the step. TDP is the sustained power
// at full compute load, hence 1 for GEMM and attention kernels; memory-bound kernels and the
// optimizer 0.5 and communication waits, bubbles and host overhead 0.15 are engineering
// estimates (no published per-phase split was found) and are listed as assumed.
constexpr double kComputeActivity = 1.0, kMemoryActivity = 0.5, kWaitActivity = 0.15;
}  // namespace plan_defaults

// What the plan needs beyond the step: every field left empty takes its documented default
// and is listed in RunPlan::assumed.
struct PlanOptions {
  // The run's length: tokens, or epochs x dataset_tokens (exactly one of the two forms).
  std::optional<double> tokens, epochs, dataset_tokens;
  std::optional<double> price_usd_per_gpu_hour;  // else the hardware's price; none: cost null
  std::optional<double> pue, grid_kg_co2_per_kwh, host_w_per_node, idle_power_fraction;
  std::optional<int> gpus_per_node;
  std::optional<double> mtbf_gpu_hours;         // per-GPU mean time between job interruptions
  std::optional<double> storage_bytes_per_s;    // aggregate checkpoint write bandwidth
  std::optional<double> restart_s;              // from an interruption to training again
  std::optional<double> checkpoint_interval_s;  // else Young/Daly
};

// Young (1974) / Daly (2006) first-order optimum: sqrt(2 * checkpoint_s * mtbf_job_s).
double YoungDalyIntervalS(double checkpoint_s, double mtbf_job_s);

// Expected run time under failures: work is cut into intervals of interval_s, each followed by a
// checkpoint of checkpoint_s; interruptions arrive at rate 1/mtbf_job_s of wall time and each
// costs restart_s plus the half interval (with its checkpoint) lost on average. Then
//   wall = ideal * (1 + C/tau) / (1 - (R + (tau + C)/2) / M).
struct Goodput {
  double mtbf_job_s = 0;
  double checkpoint_bytes = 0;
  double checkpoint_write_s = 0;
  double restart_s = 0;
  double interval_s = 0;
  double checkpoint_overhead_s = 0;  // time spent writing checkpoints
  double lost_s = 0;                 // restarts and recomputed work
  double expected_interruptions = 0;
  double wall_time_s = 0;
  double fraction = 1;  // ideal / wall
};
// InvalidArgument "goodput" when interruptions come faster than the work between them survives.
Result<Goodput> ExpectedGoodput(double ideal_s, double checkpoint_s, double restart_s,
                                double mtbf_job_s, double interval_s);

// Bytes one checkpoint writes: the distinct model weights (16-bit; the trained ones only under a
// PEFT method) and optimizer states, from the step's per-stage bytes and the sharding.
double CheckpointBytes(const StepReport& r, const ModelSpec& m, const Strategy& s);

// Average power of one GPU over a step: idle + (TDP - idle) x the time-weighted activity of the
// step's phases (compute-bound kernels, memory-bound kernels and the optimizer, waits). The
// memory-bound share of compute_s comes from the per-layer table when the report has one.
struct GpuPower {
  double idle_w = 0, tdp_w = 0, average_w = 0;
  double compute_bound_s = 0, memory_bound_s = 0, wait_s = 0;  // per step
};
GpuPower StepGpuPower(const StepReport& r, double tdp_w, double idle_fraction);

// The Chinchilla loss fit L(N, D) = E + A/N^alpha + B/D^beta (Hoffmann et al. 2022, "Training
// Compute-Optimal Large Language Models", approach 3, eq. 10: E 1.69, A 406.4, B 410.7, alpha
// 0.34, beta 0.28) minimised under C = 6 N D.
struct ComputeOptimal {
  double flops = 0, params = 0, tokens = 0, loss = 0;
  std::string fit = "Hoffmann et al. 2022, approach 3 (parametric loss fit)";
};
ComputeOptimal ChinchillaOptimal(double flops);
// The compute-optimal token count of a model with `params` parameters (the same fit).
double ChinchillaTokensForParams(double params);

struct RunPlan {
  double tokens = 0, tokens_per_step = 0;
  int64_t steps = 0;
  double step_time_s = 0;
  double ideal_wall_time_s = 0, wall_time_s = 0, gpu_hours = 0;
  std::optional<double> price_usd_per_gpu_hour, cost_usd;
  std::string cost_note;  // why cost is null
  std::optional<double> energy_kwh, co2_kg;
  std::string energy_note;  // why energy is null
  GpuPower gpu_power;
  double gpu_energy_kwh = 0, host_energy_kwh = 0, pue = 0, grid_kg_co2_per_kwh = 0;
  int nodes = 0;
  Goodput goodput;
  std::vector<Assumption> assumed;  // every default filled in, in order
};

// The whole run of `step` (the report of one step of `s` on `hw`). Bad options are
// InvalidArgument naming the option.
Result<RunPlan> PlanRun(const StepReport& step, const ModelSpec& m, const HardwareSpec& hw,
                        const Strategy& s, const PlanOptions& o);

std::string RunPlanText(const RunPlan& p);
// The plan as JSON; `step_json` (FormatReportJson's document) goes under "step".
std::string RunPlanJson(const RunPlan& p, const std::string& step_json,
                        const std::optional<ComputeOptimal>& optimal, int indent = 2);

// ---- recommend -------------------------------------------------------------------------------

enum class PlanObjective { kCost, kTime, kEnergy };
Result<PlanObjective> ParsePlanObjective(std::string_view s);  // "cost" | "time" | "energy"

// A hardware profile to rank: its spec and whether its efficiencies were fitted on it.
struct CatalogueEntry {
  HardwareSpec hw;
  bool calibrated = true;
};
// The embedded presets; a preset that borrows its efficiencies ("efficiency_from") or is marked
// "calibrated": false is uncalibrated.
Result<std::vector<CatalogueEntry>> LoadCatalogue();

struct RecommendOptions {
  double tokens = 0;
  int seq = 4096;
  int gbs = 0;  // sequences per step; 0 = tried at 2, 4, 8 and 16 M tokens per step
  DType dtype = DType::kBf16;
  std::optional<double> deadline_s, budget_usd;
  PlanObjective objective = PlanObjective::kCost;
  std::vector<int> gpu_counts;        // empty = 8, 16, ..., 16384
  bool include_uncalibrated = false;  // rank uncalibrated profiles with the calibrated ones
  int top = 10;
  int threads = 0;
  PlanOptions plan;  // energy and goodput settings (the length is `tokens`)
  // Stopping early (as SearchOptions::cancel and deadline): no cluster starts after either, the
  // running cluster's search stops, and RecommendResult::complete is false. Defaults never stop.
  const std::atomic<bool>* cancel = nullptr;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

struct RecommendedPlan {
  std::string hardware;
  bool calibrated = true;
  int gpus = 0;
  Strategy strategy;
  uint64_t variants = 0;  // strategies with the same result collapsed into this one
  double step_time_s = 0, wall_time_s = 0, goodput = 0;
  std::optional<double> cost_usd, energy_kwh;
  bool meets_deadline = true, meets_budget = true;
};

struct RecommendResult {
  std::vector<RecommendedPlan> plans;                 // meeting every constraint, best first
  std::string binding;                                // which constraint binds, in words
  std::optional<RecommendedPlan> unconstrained_best;  // best by the objective, constraints aside
  uint64_t clusters = 0, pruned = 0, no_fit = 0, evaluated = 0, collapsed = 0;
  std::vector<Assumption> assumed;
  double seconds = 0;
  bool complete = true;  // false when RecommendOptions::cancel or deadline stopped it
};

// The search Recommend runs on one cluster: `trainsim search`'s space without optimizer offload
// and rank orders, at most 4 virtual stages, the top 1 by step time.
SearchOptions RecommendSearchOptions(int gpus, int gbs, const RecommendOptions& o);

// Every (profile, GPU count, global batch): the search's fastest strategy of the cluster, its
// whole-run plan; clusters that cannot meet a constraint at 100 % MFU are pruned unsearched.
// Ranked by the objective; uncalibrated profiles after calibrated ones unless asked.
Result<RecommendResult> Recommend(const ModelSpec& m, const std::vector<CatalogueEntry>& catalogue,
                                  const RecommendOptions& o);
std::string RecommendText(const RecommendResult& r, const RecommendOptions& o);
std::string RecommendJson(const RecommendResult& r, int indent = 2);

}  // namespace trainsim

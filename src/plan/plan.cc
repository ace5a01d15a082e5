// PlanRun: a step report -> the whole run (steps, time, cost, energy, CO2, goodput), every
// default it fills in listed in RunPlan::assumed.
#include "trainsim/plan.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace trainsim {
namespace {

namespace d = plan_defaults;

// The option's value, or `def` recorded as assumed with `why`.
template <typename T>
T Take(const std::optional<T>& v, T def, const char* field, const std::string& shown,
       const std::string& why, std::vector<Assumption>& assumed) {
  if (v) return *v;
  assumed.push_back({field, shown, why});
  return def;
}

// A positive quantity is at least 1e-6 of its unit (a denormal storage speed or MTBF reached
// the goodput model and printed "inf s" and "0.000000 s"); 0 only where it means none.
Status CheckPositive(const std::optional<double>& v, const char* field, bool zero_ok = false) {
  if (!v) return Status::Ok();
  const double x = *v;
  if (!std::isfinite(x) || (x != 0 && x < 1e-6) || (!zero_ok && x == 0) || x > 1e30)
    return Status::Invalid(field, std::string("must be a finite number in ") +
                                      (zero_ok ? "0 or [1e-06" : "[1e-06") + ", 1e30], got " +
                                      fmt::format("{}", x));
  return Status::Ok();
}

Status CheckOptions(const PlanOptions& o) {
  // storage_gbps is held in bytes/s: its rule, and the value the message shows, are in GB/s
  // (1e-320 GB/s was reported as 'got 9.999888671827e-312', and 1e-12 GB/s passed).
  const std::optional<double> storage_gbps =
      o.storage_bytes_per_s ? std::optional<double>(*o.storage_bytes_per_s / 1e9) : std::nullopt;
  const std::pair<const std::optional<double>*, const char*> positive[] = {
      {&o.tokens, "tokens"},
      {&o.epochs, "epochs"},
      {&o.dataset_tokens, "dataset_tokens"},
      {&o.pue, "pue"},
      {&o.mtbf_gpu_hours, "mtbf_gpu_hours"},
      {&storage_gbps, "storage_gbps"},
      {&o.checkpoint_interval_s, "checkpoint_interval_s"}};
  for (const auto& [v, f] : positive)
    if (Status st = CheckPositive(*v, f); !st.ok()) return st;
  for (const auto& [v, f] :
       {std::pair{&o.price_usd_per_gpu_hour, "price_per_gpu_hour"},
        std::pair{&o.grid_kg_co2_per_kwh, "grid_kg_co2_per_kwh"},
        std::pair{&o.host_w_per_node, "host_w_per_node"}, std::pair{&o.restart_s, "restart_s"}})
    if (Status st = CheckPositive(*v, f, true); !st.ok()) return st;
  if (o.pue && *o.pue < 1) return Status::Invalid("pue", "must be >= 1 (total / IT power)");
  if (o.idle_power_fraction && !(*o.idle_power_fraction >= 0 && *o.idle_power_fraction <= 1))
    return Status::Invalid("idle_power_fraction", "must be in [0, 1] (of TDP)");
  if (o.gpus_per_node && *o.gpus_per_node < 1)
    return Status::Invalid("gpus_per_node", "must be >= 1");
  const bool epochs = o.epochs || o.dataset_tokens;
  if (o.tokens && epochs)
    return Status::Invalid("tokens", "give --tokens or --epochs with --dataset-tokens, not both");
  if (epochs && !(o.epochs && o.dataset_tokens))
    return Status::Invalid("epochs", "--epochs and --dataset-tokens go together");
  if (!o.tokens && !epochs)
    return Status::Invalid("tokens", "give --tokens N, or --epochs E --dataset-tokens N");
  return Status::Ok();
}

// Steps, ideal time and the goodput section.
Status PlanTime(const StepReport& step, const ModelSpec& m, const Strategy& s, const PlanOptions& o,
                RunPlan& p) {
  p.tokens = o.tokens ? *o.tokens : *o.epochs * *o.dataset_tokens;
  p.tokens_per_step = static_cast<double>(s.gbs) * s.seq;
  if (!(p.tokens_per_step > 0) || !(step.step_time_s > 0))
    return Status::Invalid("gbs", "the step has no tokens or no time");
  const double steps = std::ceil(p.tokens / p.tokens_per_step);
  if (steps > 1e15) return Status::Invalid("tokens", "more than 1e15 steps");
  p.steps = static_cast<int64_t>(steps);
  p.step_time_s = step.step_time_s;
  p.ideal_wall_time_s = steps * step.step_time_s;
  const double mtbf_h = Take(
      o.mtbf_gpu_hours, d::kMtbfGpuHours, "mtbf_gpu_hours", fmt::format("{:.0f}", d::kMtbfGpuHours),
      "Llama 3 paper: 466 interruptions in 54 days on 16,384 H100s", p.assumed);
  const double storage = Take(
      o.storage_bytes_per_s, d::kStorageBytesPerSPerGpu * s.world_size, "storage_gbps",
      fmt::format("{:.2f}", d::kStorageBytesPerSPerGpu * s.world_size / 1e9),
      "Llama 3 paper: 2 TB/s sustained for 16,384 GPUs, the share of this job's GPUs", p.assumed);
  const double restart = Take(o.restart_s, d::kRestartS, "restart_s", "600",
                              "no published job-level figure found: 10 minutes", p.assumed);
  const double mtbf_job = mtbf_h * 3600 / s.world_size;
  const double ckpt_bytes = CheckpointBytes(step, m, s);
  const double ckpt_s = ckpt_bytes / storage;
  double interval = YoungDalyIntervalS(ckpt_s, mtbf_job);
  if (o.checkpoint_interval_s)
    interval = *o.checkpoint_interval_s;
  else
    p.assumed.push_back({"checkpoint_interval_s", fmt::format("{:.0f}", interval),
                         "Young/Daly optimum sqrt(2 x checkpoint write x job MTBF)"});
  auto g = ExpectedGoodput(p.ideal_wall_time_s, ckpt_s, restart, mtbf_job, interval);
  if (!g.ok()) return g.status();
  p.goodput = g.value();
  p.goodput.checkpoint_bytes = ckpt_bytes;
  p.wall_time_s = p.goodput.wall_time_s;
  p.gpu_hours = p.wall_time_s * s.world_size / 3600;
  return Status::Ok();
}

void PlanCost(const HardwareSpec& hw, const PlanOptions& o, RunPlan& p) {
  if (o.price_usd_per_gpu_hour) {
    p.price_usd_per_gpu_hour = *o.price_usd_per_gpu_hour;
  } else if (hw.price_usd_per_gpu_hour > 0) {
    p.price_usd_per_gpu_hour = hw.price_usd_per_gpu_hour;
    p.assumed.push_back({"price_per_gpu_hour", fmt::format("{}", hw.price_usd_per_gpu_hour),
                         "the price of hardware preset " + hw.id});
  } else {
    p.cost_note = "no price: hardware " + hw.id + " has none; give --price-per-gpu-hour";
    return;
  }
  p.cost_usd = p.gpu_hours * *p.price_usd_per_gpu_hour;
}

void PlanEnergy(const StepReport& step, const HardwareSpec& hw, const Strategy& s,
                const PlanOptions& o, RunPlan& p) {
  const double idle = Take(o.idle_power_fraction, d::kIdlePowerFraction, "idle_power_fraction",
                           "0.11", "idle H200 draws about 77 W of its 700 W TDP", p.assumed);
  p.pue = Take(o.pue, d::kPue, "pue", "1.58", "Uptime Institute 2023 industry average", p.assumed);
  p.grid_kg_co2_per_kwh =
      Take(o.grid_kg_co2_per_kwh, d::kGridKgCo2PerKwh, "grid_kg_co2_per_kwh", "0.481",
           "world average 2023 (Ember Global Electricity Review 2024)", p.assumed);
  const double host_w = Take(
      o.host_w_per_node, d::kHostWPerNode, "host_w_per_node", "2800",
      "8x H100 node measured at 8.4 kW training (Latif et al. 2025) less 8 x 700 W", p.assumed);
  const int per_node =
      Take(o.gpus_per_node, d::kGpusPerNode, "gpus_per_node", "8", "HGX/DGX node", p.assumed);
  p.nodes = (s.world_size + per_node - 1) / per_node;
  if (!(hw.tdp_w > 0)) {
    p.energy_note = "no TDP: hardware " + hw.id +
                    " has no tdp_w; give --hw-override "
                    "'{\"tdp_w\": W}'";
    return;
  }
  p.assumed.push_back({"gpu_activity", "compute 1.0, memory-bound 0.5, waits 0.15",
                       "fraction of (TDP - idle) per phase: engineering estimate, unmeasured"});
  p.gpu_power = StepGpuPower(step, hw.tdp_w, idle);
  // The average step power over the whole wall time (restarts and lost work included).
  p.gpu_energy_kwh = p.gpu_power.average_w * s.world_size * p.wall_time_s / 3.6e6;
  p.host_energy_kwh = host_w * p.nodes * p.wall_time_s / 3.6e6;
  p.energy_kwh = (p.gpu_energy_kwh + p.host_energy_kwh) * p.pue;
  p.co2_kg = *p.energy_kwh * p.grid_kg_co2_per_kwh;
}

}  // namespace

Result<RunPlan> PlanRun(const StepReport& step, const ModelSpec& m, const HardwareSpec& hw,
                        const Strategy& s, const PlanOptions& o) {
  if (Status st = CheckOptions(o); !st.ok()) return st;
  RunPlan p;
  if (Status st = PlanTime(step, m, s, o, p); !st.ok()) return st;
  PlanCost(hw, o, p);
  PlanEnergy(step, hw, s, o, p);
  return p;
}

}  // namespace trainsim

// A run plan for people (text) and as JSON.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "trainsim/plan.h"

namespace trainsim {
namespace {

using nlohmann::json;

std::string Duration(double s) {
  if (s >= 86400) return fmt::format("{:.2f} days", s / 86400);
  if (s >= 3600) return fmt::format("{:.2f} h", s / 3600);
  return fmt::format("{:.1f} s", s);
}

template <typename T>
json OrNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json AssumedJson(const std::vector<Assumption>& a) {
  json out = json::array();
  for (const Assumption& x : a)
    out.push_back({{"field", x.field}, {"value", x.value}, {"why", x.why}});
  return out;
}

}  // namespace

std::string RunPlanText(const RunPlan& p) {
  const Goodput& g = p.goodput;
  std::string o = "Run plan\n";
  o += fmt::format("  tokens             {:.4g} ({:.4g} per step)\n", p.tokens, p.tokens_per_step);
  o += fmt::format("  steps              {}\n", p.steps);
  o += fmt::format("  step time          {:.4f} s\n", p.step_time_s);
  o += fmt::format("  ideal wall time    {} ({:.0f} s)\n", Duration(p.ideal_wall_time_s),
                   p.ideal_wall_time_s);
  o += fmt::format("  wall time          {} ({:.0f} s, with failures and checkpoints)\n",
                   Duration(p.wall_time_s), p.wall_time_s);
  o += fmt::format("  GPU-hours          {:.0f}\n", p.gpu_hours);
  o += p.cost_usd ? fmt::format("  cost               ${:.0f} (at ${:.2f} per GPU-hour)\n",
                                *p.cost_usd, *p.price_usd_per_gpu_hour)
                  : "  cost               null (" + p.cost_note + ")\n";
  o += "\nGoodput\n";
  o += fmt::format("  job MTBF           {}\n", Duration(g.mtbf_job_s));
  o += fmt::format("  checkpoint         {:.1f} GB, written in {:.1f} s\n",
                   g.checkpoint_bytes / 1e9, g.checkpoint_write_s);
  o += fmt::format("  interval           {} (restart {:.0f} s)\n", Duration(g.interval_s),
                   g.restart_s);
  o += fmt::format("  interruptions      {:.3g} expected; {} lost, {} writing checkpoints\n",
                   g.expected_interruptions, Duration(g.lost_s), Duration(g.checkpoint_overhead_s));
  o += fmt::format("  goodput            {:.1f} %\n", 100 * g.fraction);
  o += "\nEnergy\n";
  if (p.energy_kwh) {
    const GpuPower& w = p.gpu_power;
    o += fmt::format(
        "  GPU power          {:.0f} W average (idle {:.0f} W, TDP {:.0f} W; per step {:.3f} s "
        "compute-bound, {:.3f} s memory-bound, {:.3f} s waiting)\n",
        w.average_w, w.idle_w, w.tdp_w, w.compute_bound_s, w.memory_bound_s, w.wait_s);
    o += fmt::format(
        "  energy             {:.4g} kWh = (GPUs {:.4g} + hosts {:.4g} on {} nodes) x "
        "PUE {:.2f}\n",
        *p.energy_kwh, p.gpu_energy_kwh, p.host_energy_kwh, p.nodes, p.pue);
    o += fmt::format("  CO2                {:.4g} kg at {:.3f} kg/kWh\n", *p.co2_kg,
                     p.grid_kg_co2_per_kwh);
  } else {
    o += "  energy             null (" + p.energy_note + ")\n";
  }
  if (!p.assumed.empty()) {
    o += "\nAssumed (plan)\n";
    for (const Assumption& a : p.assumed)
      o += fmt::format("  {:<22} {:<12} {}\n", a.field, a.value, a.why);
  }
  return o;
}

std::string RunPlanJson(const RunPlan& p, const std::string& step_json,
                        const std::optional<ComputeOptimal>& optimal, int indent) {
  const Goodput& g = p.goodput;
  json j;
  j["tokens"] = p.tokens;
  j["tokens_per_step"] = p.tokens_per_step;
  j["steps"] = p.steps;
  j["step_time_s"] = p.step_time_s;
  j["wall_time_s"] = p.wall_time_s;
  j["ideal_wall_time_s"] = p.ideal_wall_time_s;
  j["gpu_hours"] = p.gpu_hours;
  j["price_usd_per_gpu_hour"] = OrNull(p.price_usd_per_gpu_hour);
  j["cost_usd"] = OrNull(p.cost_usd);
  if (!p.cost_note.empty()) j["cost_note"] = p.cost_note;
  j["energy_kwh"] = OrNull(p.energy_kwh);
  j["co2_kg"] = OrNull(p.co2_kg);
  if (!p.energy_note.empty()) j["energy_note"] = p.energy_note;
  j["energy"] = {{"gpu_average_w", p.gpu_power.average_w},
                 {"gpu_idle_w", p.gpu_power.idle_w},
                 {"gpu_tdp_w", p.gpu_power.tdp_w},
                 {"gpu_kwh", p.gpu_energy_kwh},
                 {"host_kwh", p.host_energy_kwh},
                 {"nodes", p.nodes},
                 {"pue", p.pue},
                 {"grid_kg_co2_per_kwh", p.grid_kg_co2_per_kwh},
                 {"compute_bound_s", p.gpu_power.compute_bound_s},
                 {"memory_bound_s", p.gpu_power.memory_bound_s},
                 {"wait_s", p.gpu_power.wait_s}};
  j["goodput"] = g.fraction;
  j["checkpoint_interval_s"] = g.interval_s;
  j["failures"] = {{"mtbf_job_s", g.mtbf_job_s},
                   {"checkpoint_bytes", g.checkpoint_bytes},
                   {"checkpoint_write_s", g.checkpoint_write_s},
                   {"restart_s", g.restart_s},
                   {"expected_interruptions", g.expected_interruptions},
                   {"lost_s", g.lost_s},
                   {"checkpoint_overhead_s", g.checkpoint_overhead_s}};
  if (optimal)
    j["compute_optimal"] = {{"flops", optimal->flops},
                            {"params", optimal->params},
                            {"tokens", optimal->tokens},
                            {"loss", optimal->loss},
                            {"fit", optimal->fit}};
  j["assumed"] = AssumedJson(p.assumed);
  j["step"] = json::parse(step_json, nullptr, false);
  return j.dump(indent);
}

}  // namespace trainsim

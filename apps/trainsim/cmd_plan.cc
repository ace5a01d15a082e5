// `trainsim plan`: the whole run of a step — steps, wall time, GPU-hours, cost, energy, CO2,
// goodput — for a given strategy or the best of a search (include/trainsim/plan.h).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <string_view>

#include "cli_numbers.h"
#include "cli_util.h"
#include "commands.h"
#include "trainsim/front_end.h"
#include "trainsim/plan.h"

namespace trainsim::cli {
namespace {

// Registers the number option `flag` (plan option `name`), its presence remembered in a.given.
CLI::Option* Number(CLI::App* c, PlanArgs& a, std::string_view name, const std::string& help) {
  const std::string key(name);
  std::string flag = "--" + key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return a.given[key] = c->add_option(flag, a.values[key], help)->group("Run plan");
}

// The request of the given options, as every front-end builds it (front_end.h).
Result<PlanRequest> Request(const PlanArgs& a) {
  PlanRequest r;
  for (const auto& [name, opt] : a.given)
    if (opt->count() > 0)
      if (Status st = SetPlanOption(r, name, a.values.at(name)); !st.ok()) return st;
  r.search = a.search;
  r.compute_optimal = a.compute_optimal;
  r.detail = a.sim.detail;
  return r;
}

std::string OptimalText(const ComputeOptimal& c) {
  return fmt::format(
      "\nCompute-optimal ({})\n  budget             {:.3g} FLOPs\n  parameters         {:.3g}\n"
      "  tokens             {:.3g} ({:.1f} per parameter)\n  predicted loss     {:.3f}\n",
      c.fit, c.flops, c.params, c.tokens, c.tokens / c.params, c.loss);
}

}  // namespace

void AddPlan(CLI::App& app, PlanArgs& a) {
  CLI::App* c = app.add_subcommand(
      "plan", "whole run: steps, wall time, GPU-hours, cost, energy, CO2, goodput (docs/PLAN.md)");
  AddSimulateInputs(c, a.sim);
  Number(c, a, "tokens", "training tokens of the run");
  Number(c, a, "epochs", "epochs over --dataset-tokens (instead of --tokens)");
  Number(c, a, "dataset_tokens", "tokens in the dataset");
  Number(c, a, "price_per_gpu_hour", "USD per GPU-hour (default: the hardware's)");
  Number(c, a, "pue", "data-centre PUE (default 1.58, Uptime Institute 2023)");
  Number(c, a, "grid_kg_co2_per_kwh", "grid carbon intensity (default 0.481, world 2023, Ember)");
  Number(c, a, "host_w_per_node", "host, NIC and switch watts per node (default 2800)");
  Number(c, a, "gpus_per_node", "GPUs per node (default 8)")->check(Positive());
  Number(c, a, "idle_power_fraction", "GPU idle power / TDP (default 0.11)");
  Number(c, a, "mtbf_gpu_hours",
         "per-GPU hours between job interruptions (default 45566, Llama 3)");
  Number(c, a, "storage_gbps",
         "checkpoint write bandwidth, GB/s for the job (default 0.122 per GPU, Llama 3)");
  Number(c, a, "restart_s", "seconds from an interruption to training (default 600)");
  Number(c, a, "checkpoint_interval_s", "default: Young/Daly optimum");
  Number(c, a, "flops", "with --compute-optimal: a FLOP budget");
  Number(c, a, "budget_usd", "with --compute-optimal: a dollar budget");
  c->add_flag("--search", a.search, "plan the fastest strategy of the cluster instead")
      ->group("Run plan");
  c->add_flag("--compute-optimal", a.compute_optimal,
              "Chinchilla-optimal size and tokens (Hoffmann et al. 2022, approach 3)")
      ->group("Run plan");
  c->add_flag("--json", a.sim.json, "print the plan as JSON (the step report under \"step\")");
  c->add_flag("--detail", a.sim.detail, "include the per-layer op table in the step report");
}

int RunPlan(const PlanArgs& a) {
  auto prepared = PrepareStep(a.sim, /*detail=*/true);
  if (!prepared.ok()) return Fail(prepared.status());
  PreparedStep& ps = prepared.value();
  auto req = Request(a);
  if (!req.ok()) return Fail(req.status());
  auto run = PlanStep(ps.model, ps.hw, ps.strategy, std::move(ps.report), req.value());
  if (!run.ok()) return Fail(run.status());
  const PlannedRun& p = run.value();
  if (a.sim.json) {
    std::cout << PlannedRunJson(p, ps.model, ps.hw) << "\n";
    return 0;
  }
  std::cout << FormatReportText(p.step, ps.model, ps.hw, p.strategy) << "\n" << RunPlanText(p.plan);
  if (p.optimal) std::cout << OptimalText(*p.optimal);
  return 0;
}

}  // namespace trainsim::cli

// `trainsim plan`: the whole run of a step — steps, wall time, GPU-hours, cost, energy, CO2,
// goodput — for a given strategy or the best of a search (include/trainsim/plan.h).
#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "cli_util.h"
#include "commands.h"
#include "trainsim/plan.h"
#include "trainsim/search.h"

namespace trainsim::cli {
namespace {

// Registers a number option whose presence is remembered in a.given.
void Number(CLI::App* c, PlanArgs& a, const std::string& name, double& v, const std::string& help) {
  a.given[name] = c->add_option(name, v, help)->group("Run plan");
}

std::optional<double> Given(const PlanArgs& a, const std::string& name, double v) {
  auto it = a.given.find(name);
  return it != a.given.end() && it->second->count() > 0 ? std::optional<double>(v) : std::nullopt;
}

PlanOptions Options(const PlanArgs& a) {
  PlanOptions o;
  o.tokens = Given(a, "--tokens", a.tokens);
  o.epochs = Given(a, "--epochs", a.epochs);
  o.dataset_tokens = Given(a, "--dataset-tokens", a.dataset_tokens);
  o.price_usd_per_gpu_hour = Given(a, "--price-per-gpu-hour", a.price);
  o.pue = Given(a, "--pue", a.pue);
  o.grid_kg_co2_per_kwh = Given(a, "--grid-kg-co2-per-kwh", a.grid);
  o.host_w_per_node = Given(a, "--host-w-per-node", a.host_w);
  o.idle_power_fraction = Given(a, "--idle-power-fraction", a.idle_fraction);
  o.mtbf_gpu_hours = Given(a, "--mtbf-gpu-hours", a.mtbf_hours);
  if (auto gbps = Given(a, "--storage-gbps", a.storage_gbps)) o.storage_bytes_per_s = *gbps * 1e9;
  o.restart_s = Given(a, "--restart-s", a.restart_s);
  o.checkpoint_interval_s = Given(a, "--checkpoint-interval-s", a.interval_s);
  if (a.given.at("--gpus-per-node")->count() > 0) o.gpus_per_node = a.gpus_per_node;
  return o;
}

// --search: the fastest strategy of the cluster the inputs describe (GPUs, batch, sequence,
// precision), simulated with the per-layer table.
Status SearchStrategy(PreparedStep& ps) {
  SearchOptions so;
  so.gpus = ps.strategy.world_size;
  so.gbs = ps.strategy.gbs;
  so.seq = ps.strategy.seq;
  so.dtype = ps.strategy.dtype;
  so.top_k = 1;
  auto res = Search(ps.model, ps.hw, so);
  if (!res.ok()) return res.status();
  if (res->top.empty())
    return Status::Invalid("search", "no strategy of " + std::to_string(so.gpus) + " x " +
                                         ps.hw.id + " fits the model");
  SimOptions detail;
  detail.detail = true;
  auto rep = Simulate(ps.model, ps.hw, res->top.front().strategy, detail);
  if (!rep.ok()) return rep.status();
  ps.strategy = res->top.front().strategy;
  ps.report = std::move(rep).value();
  ps.report.assumed.insert(
      ps.report.assumed.begin(),
      {"strategy", DescribeStrategy(ps.strategy),
       fmt::format("--search: the fastest of {} strategies ({} alike collapsed)", res->evaluated,
                   res->collapsed)});
  return Status::Ok();
}

// --compute-optimal: the Chinchilla optimum for --flops or --budget-usd (at this cluster's
// achieved FLOP/s and price), else for the model's own size; the run's tokens default to the
// optimum for the model's size.
Result<ComputeOptimal> Optimal(const PlanArgs& a, const PreparedStep& ps, PlanOptions& o) {
  const double params = static_cast<double>(CountParams(ps.model).total);
  if (!o.tokens && !o.epochs) o.tokens = ChinchillaTokensForParams(params);
  if (auto f = Given(a, "--flops", a.flops)) {
    if (!(*f > 0) || !std::isfinite(*f)) return Status::Invalid("flops", "must be > 0");
    return ChinchillaOptimal(*f);
  }
  if (auto usd = Given(a, "--budget-usd", a.budget_usd)) {
    const double price = o.price_usd_per_gpu_hour.value_or(ps.hw.price_usd_per_gpu_hour);
    if (!(*usd > 0) || !std::isfinite(*usd)) return Status::Invalid("budget_usd", "must be > 0");
    if (!(price > 0))
      return Status::Invalid("price_per_gpu_hour",
                             "a dollar budget needs a price: " + ps.hw.id + " has none");
    const double flops_per_gpu_s =
        ps.report.model_flops / ps.report.step_time_s / ps.strategy.world_size;
    return ChinchillaOptimal(*usd / price * 3600 * flops_per_gpu_s);
  }
  return ChinchillaOptimal(6 * params * ChinchillaTokensForParams(params));
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
  Number(c, a, "--tokens", a.tokens, "training tokens of the run");
  Number(c, a, "--epochs", a.epochs, "epochs over --dataset-tokens (instead of --tokens)");
  Number(c, a, "--dataset-tokens", a.dataset_tokens, "tokens in the dataset");
  Number(c, a, "--price-per-gpu-hour", a.price, "USD per GPU-hour (default: the hardware's)");
  Number(c, a, "--pue", a.pue, "data-centre PUE (default 1.58, Uptime Institute 2023)");
  Number(c, a, "--grid-kg-co2-per-kwh", a.grid,
         "grid carbon intensity (default 0.481, world 2023, Ember)");
  Number(c, a, "--host-w-per-node", a.host_w, "host, NIC and switch watts per node (default 2800)");
  a.given["--gpus-per-node"] =
      c->add_option("--gpus-per-node", a.gpus_per_node, "GPUs per node (default 8)")
          ->check(CLI::PositiveNumber)
          ->group("Run plan");
  Number(c, a, "--idle-power-fraction", a.idle_fraction, "GPU idle power / TDP (default 0.11)");
  Number(c, a, "--mtbf-gpu-hours", a.mtbf_hours,
         "per-GPU hours between job interruptions (default 45566, Llama 3)");
  Number(c, a, "--storage-gbps", a.storage_gbps,
         "checkpoint write bandwidth, GB/s for the job (default 0.122 per GPU, Llama 3)");
  Number(c, a, "--restart-s", a.restart_s,
         "seconds from an interruption to training (default 600)");
  Number(c, a, "--checkpoint-interval-s", a.interval_s, "default: Young/Daly optimum");
  Number(c, a, "--flops", a.flops, "with --compute-optimal: a FLOP budget");
  Number(c, a, "--budget-usd", a.budget_usd, "with --compute-optimal: a dollar budget");
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
  if (a.search)
    if (Status st = SearchStrategy(ps); !st.ok()) return Fail(st);
  PlanOptions o = Options(a);
  std::optional<ComputeOptimal> optimal;
  const bool tokens_given = o.tokens || o.epochs;
  if (a.compute_optimal) {
    auto opt = Optimal(a, ps, o);
    if (!opt.ok()) return Fail(opt.status());
    optimal = opt.value();
  } else if (Given(a, "--flops", a.flops) || Given(a, "--budget-usd", a.budget_usd)) {
    return Fail(Status::Invalid("flops", "--flops and --budget-usd go with --compute-optimal"));
  }
  auto plan = PlanRun(ps.report, ps.model, ps.hw, ps.strategy, o);
  if (!plan.ok()) return Fail(plan.status());
  if (a.compute_optimal && !tokens_given)
    plan.value().assumed.insert(plan.value().assumed.begin(),
                                {"tokens", fmt::format("{:.4g}", *o.tokens),
                                 "--compute-optimal: the Chinchilla-optimal tokens of this model"});
  if (!a.sim.detail) ps.report.layers.clear();
  if (a.sim.json) {
    std::cout << RunPlanJson(plan.value(),
                             FormatReportJson(ps.report, ps.model, ps.hw, ps.strategy), optimal)
              << "\n";
    return 0;
  }
  std::cout << FormatReportText(ps.report, ps.model, ps.hw, ps.strategy) << "\n"
            << RunPlanText(plan.value());
  if (optimal) std::cout << OptimalText(*optimal);
  return 0;
}

}  // namespace trainsim::cli

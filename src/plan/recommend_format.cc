// The recommendation for people (text) and as JSON.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "trainsim/plan.h"

namespace trainsim {
namespace {

using nlohmann::json;

const char* ObjectiveName(PlanObjective o) {
  switch (o) {
    case PlanObjective::kCost:
      return "cost";
    case PlanObjective::kTime:
      return "time";
    case PlanObjective::kEnergy:
      return "energy";
  }
  return "cost";
}

json PlanJson(const RecommendedPlan& p) {
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  return {{"hardware", p.hardware},
          {"calibrated", p.calibrated},
          {"gpus", p.gpus},
          {"strategy", DescribeStrategy(p.strategy)},
          {"gbs", p.strategy.gbs},
          {"variants", p.variants},
          {"step_time_s", p.step_time_s},
          {"wall_time_s", p.wall_time_s},
          {"goodput", p.goodput},
          {"cost_usd", opt(p.cost_usd)},
          {"energy_kwh", opt(p.energy_kwh)},
          {"megatron_args", MegatronArgs(p.strategy)}};
}

std::string Money(const std::optional<double>& v) {
  return v ? fmt::format("{:.4g}", *v) : std::string("null");
}

}  // namespace

std::string RecommendText(const RecommendResult& r, const RecommendOptions& o) {
  std::string s = fmt::format("trainsim recommend: {:.4g} tokens, objective {}", o.tokens,
                              ObjectiveName(o.objective));
  if (o.deadline_s) s += fmt::format(", deadline {:.4g} days", *o.deadline_s / 86400);
  if (o.budget_usd) s += fmt::format(", budget ${:.4g}", *o.budget_usd);
  s += "\n\n";
  s +=
      fmt::format("  {:<4} {:<20} {:>6} {:>8} {:>10} {:>8} {:>12} {:>12}  {}\n", "rank", "hardware",
                  "GPUs", "gbs", "wall days", "goodput", "cost $", "energy kWh", "strategy");
  int rank = 1;
  for (const RecommendedPlan& p : r.plans)
    s += fmt::format("  {:<4} {:<20} {:>6} {:>8} {:>10.2f} {:>7.1f}% {:>12} {:>12}  {}{}\n", rank++,
                     p.hardware + (p.calibrated ? "" : " (U)"), p.gpus, p.strategy.gbs,
                     p.wall_time_s / 86400, 100 * p.goodput, Money(p.cost_usd), Money(p.energy_kwh),
                     DescribeStrategy(p.strategy),
                     p.variants ? fmt::format(" (+{} alike)", p.variants) : "");
  if (r.plans.empty()) s += "  no cluster meets every constraint\n";
  s += "\n  binding constraint: " + r.binding + "\n";
  s += "  (U) = uncalibrated profile: efficiencies borrowed from other silicon";
  s += o.include_uncalibrated ? " (ranked with the others)\n" : " (ranked after calibrated)\n";
  if (!r.assumed.empty()) {
    s += "\n  Assumed\n";
    for (const Assumption& a : r.assumed)
      s += fmt::format("    {:<22} {:<20} {}\n", a.field, a.value, a.why);
  }
  s += fmt::format(
      "recommend: {} clusters ({} pruned by bounds, {} without a fitting strategy), {} "
      "strategies evaluated, {} alike collapsed, in {:.2f} s\n",
      r.clusters, r.pruned, r.no_fit, r.evaluated, r.collapsed, r.seconds);
  return s;
}

std::string RecommendJson(const RecommendResult& r, int indent) {
  json j;
  j["plans"] = json::array();
  for (const RecommendedPlan& p : r.plans) j["plans"].push_back(PlanJson(p));
  j["binding"] = r.binding;
  j["unconstrained_best"] = r.unconstrained_best ? PlanJson(*r.unconstrained_best) : json(nullptr);
  j["clusters"] = r.clusters;
  j["pruned"] = r.pruned;
  j["no_fit"] = r.no_fit;
  j["evaluated"] = r.evaluated;
  j["collapsed"] = r.collapsed;
  j["seconds"] = r.seconds;
  j["assumed"] = json::array();
  for (const Assumption& a : r.assumed)
    j["assumed"].push_back({{"field", a.field}, {"value", a.value}, {"why", a.why}});
  return j.dump(indent);
}

}  // namespace trainsim

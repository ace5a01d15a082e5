// The plan and recommend requests of every front-end (include/trainsim/front_end.h): the
// option names, the search and compute-optimal steps of `trainsim plan`, and recommend's rules.
#include <fmt/format.h>

#include <cmath>

#include "trainsim/front_end.h"
#include "trainsim/search.h"

namespace trainsim {

namespace {

// One name -> where it lands in the request.
struct PlanOptionSlot {
  std::string_view name;
  std::optional<double> PlanOptions::*field;  // nullptr for the request's own fields
};

constexpr PlanOptionSlot kPlanSlots[] = {
    {"tokens", &PlanOptions::tokens},
    {"epochs", &PlanOptions::epochs},
    {"dataset_tokens", &PlanOptions::dataset_tokens},
    {"price_per_gpu_hour", &PlanOptions::price_usd_per_gpu_hour},
    {"pue", &PlanOptions::pue},
    {"grid_kg_co2_per_kwh", &PlanOptions::grid_kg_co2_per_kwh},
    {"host_w_per_node", &PlanOptions::host_w_per_node},
    {"gpus_per_node", nullptr},
    {"idle_power_fraction", &PlanOptions::idle_power_fraction},
    {"mtbf_gpu_hours", &PlanOptions::mtbf_gpu_hours},
    {"storage_gbps", nullptr},
    {"restart_s", &PlanOptions::restart_s},
    {"checkpoint_interval_s", &PlanOptions::checkpoint_interval_s},
    {"flops", nullptr},
    {"budget_usd", nullptr},
};

// --search: the fastest strategy of the cluster the inputs describe (GPUs, batch, sequence,
// precision), simulated with the per-layer table.
Status SearchStrategy(const ModelSpec& model, const HardwareSpec& hw, const PlanRequest& r,
                      PlannedRun& p) {
  SearchOptions so;
  so.gpus = p.strategy.world_size;
  so.gbs = p.strategy.gbs;
  so.seq = p.strategy.seq;
  so.dtype = p.strategy.dtype;
  so.top_k = 1;
  so.cancel = r.cancel;
  so.deadline = r.deadline;
  auto res = Search(model, hw, so);
  if (!res.ok()) return res.status();
  if (!res->complete)
    return Status::Invalid("time_limit", "search: stopped (" + res->stopped + ") after " +
                                             std::to_string(res->evaluated) + " of " +
                                             std::to_string(res->space_size) + " strategies");
  if (res->top.empty())
    return Status::Invalid(
        "search", "no strategy of " + std::to_string(so.gpus) + " x " + hw.id + " fits the model");
  SimOptions detail;
  detail.detail = true;
  auto rep = Simulate(model, hw, res->top.front().strategy, detail);
  if (!rep.ok()) return rep.status();
  p.strategy = res->top.front().strategy;
  p.step = std::move(rep).value();
  p.step.assumed.insert(p.step.assumed.begin(),
                        {"strategy", DescribeStrategy(p.strategy),
                         fmt::format("--search: the fastest of {} strategies ({} alike collapsed)",
                                     res->evaluated, res->collapsed)});
  return Status::Ok();
}

// --compute-optimal: the Chinchilla optimum for --flops or --budget-usd (at this cluster's
// achieved FLOP/s and price), else for the model's own size; the run's tokens default to the
// optimum for the model's size.
Result<ComputeOptimal> Optimal(const PlanRequest& r, const ModelSpec& model, const HardwareSpec& hw,
                               const PlannedRun& p, PlanOptions& o) {
  const double params = static_cast<double>(CountParams(model).total);
  if (!o.tokens && !o.epochs) o.tokens = ChinchillaTokensForParams(params);
  if (r.flops) {
    if (!(*r.flops > 0) || !std::isfinite(*r.flops)) return Status::Invalid("flops", "must be > 0");
    return ChinchillaOptimal(*r.flops);
  }
  if (r.budget_usd) {
    const double usd = *r.budget_usd;
    const double price = o.price_usd_per_gpu_hour.value_or(hw.price_usd_per_gpu_hour);
    if (!(usd > 0) || !std::isfinite(usd)) return Status::Invalid("budget_usd", "must be > 0");
    if (!(price > 0))
      return Status::Invalid("price_per_gpu_hour",
                             "a dollar budget needs a price: " + hw.id + " has none");
    const double flops_per_gpu_s = p.step.model_flops / p.step.step_time_s / p.strategy.world_size;
    return ChinchillaOptimal(usd / price * 3600 * flops_per_gpu_s);
  }
  return ChinchillaOptimal(6 * params * ChinchillaTokensForParams(params));
}

}  // namespace

const std::vector<std::string_view>& PlanOptionNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const PlanOptionSlot& s : kPlanSlots) v.push_back(s.name);
    return v;
  }();
  return names;
}

Status SetPlanOption(PlanRequest& r, std::string_view name, double value) {
  for (const PlanOptionSlot& s : kPlanSlots) {
    if (s.name != name) continue;
    if (s.field) {
      r.options.*(s.field) = value;
    } else if (name == "gpus_per_node") {
      if (!(value >= 1 && value <= 1e6) || value != std::floor(value))
        return Status::Invalid("gpus_per_node", "must be a whole number >= 1");
      r.options.gpus_per_node = static_cast<int>(value);
    } else if (name == "storage_gbps") {
      r.options.storage_bytes_per_s = value * 1e9;
    } else if (name == "flops") {
      r.flops = value;
    } else {
      r.budget_usd = value;
    }
    return Status::Ok();
  }
  return Status::Invalid(std::string(name), "not an option of plan");
}

Result<PlannedRun> PlanStep(const ModelSpec& model, const HardwareSpec& hw, Strategy s,
                            StepReport step, const PlanRequest& r) {
  PlannedRun p{std::move(s), std::move(step), {}, std::nullopt};
  if (r.search)
    if (Status st = SearchStrategy(model, hw, r, p); !st.ok()) return st;
  PlanOptions o = r.options;
  const bool tokens_given = o.tokens || o.epochs;
  if (r.compute_optimal) {
    auto opt = Optimal(r, model, hw, p, o);
    if (!opt.ok()) return opt.status();
    p.optimal = opt.value();
  } else if (r.flops || r.budget_usd) {
    return Status::Invalid("flops", "--flops and --budget-usd go with --compute-optimal");
  }
  auto plan = PlanRun(p.step, model, hw, p.strategy, o);
  if (!plan.ok()) return plan.status();
  p.plan = std::move(plan).value();
  if (r.compute_optimal && !tokens_given)
    p.plan.assumed.insert(p.plan.assumed.begin(),
                          {"tokens", fmt::format("{:.4g}", *o.tokens),
                           "--compute-optimal: the Chinchilla-optimal tokens of this model"});
  if (!r.detail) p.step.layers.clear();
  return p;
}

std::string PlannedRunJson(const PlannedRun& p, const ModelSpec& model, const HardwareSpec& hw) {
  return RunPlanJson(p.plan, FormatReportJson(p.step, model, hw, p.strategy), p.optimal);
}

Result<RecommendOptions> MakeRecommendOptions(const RecommendRequest& r) {
  auto obj = ParsePlanObjective(r.objective);
  if (!obj.ok()) return obj.status();
  auto dt = ParseDType(r.dtype);
  if (!dt.ok()) return dt.status();
  if (r.gbs < 0) return Status::Invalid("gbs", "must be >= 1 (or absent: chosen)");
  if (r.seq < 1) return Status::Invalid("seq", "must be >= 1");
  if (r.top < 1 || r.top > 1000) return Status::Invalid("top", "must be in [1, 1000]");
  if (r.threads < 0 || r.threads > 1024) return Status::Invalid("threads", "must be in [0, 1024]");
  RecommendOptions o;
  o.tokens = r.tokens;
  o.seq = r.seq;
  o.gbs = r.gbs;
  o.dtype = dt.value();
  o.objective = obj.value();
  o.gpu_counts = r.gpus;
  o.include_uncalibrated = r.include_uncalibrated;
  o.top = r.top;
  o.threads = r.threads;
  if (r.deadline_days) o.deadline_s = *r.deadline_days * 86400;
  o.budget_usd = r.budget_usd;
  if (r.price_per_gpu_hour) {
    if (!(*r.price_per_gpu_hour > 0)) return Status::Invalid("price_per_gpu_hour", "must be > 0");
    o.plan.price_usd_per_gpu_hour = r.price_per_gpu_hour;
  }
  return o;
}

}  // namespace trainsim

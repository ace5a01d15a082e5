// Recommend: every (hardware profile, GPU count, global batch) cluster, its fastest strategy from
// the search, its whole-run plan; ranked by cost, time or energy under a deadline and a budget.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "spec/field_text.h"
#include "trainsim/hardware_figures.h"
#include "trainsim/plan.h"
#include "trainsim/trainsim.h"

namespace trainsim {

Result<PlanObjective> ParsePlanObjective(std::string_view s) {
  if (s == "cost") return PlanObjective::kCost;
  if (s == "time") return PlanObjective::kTime;
  if (s == "energy") return PlanObjective::kEnergy;
  return Status::Invalid("objective", "must be cost, time or energy, got '" + std::string(s) + "'");
}

SearchOptions RecommendSearchOptions(int gpus, int gbs, const RecommendOptions& o) {
  SearchOptions so;
  so.gpus = gpus;
  so.gbs = gbs;
  so.seq = o.seq;
  so.dtype = o.dtype;
  so.top_k = 1;
  so.threads = o.threads;
  so.cancel = o.cancel;
  so.deadline = o.deadline;
  // A coarser space than `trainsim search`, to rank a catalogue in seconds (SearchOptions::
  // coarse): no optimizer offload, the default rank order, at most 2 virtual stages.
  so.offload = false;
  so.orders = false;
  so.coarse = true;
  so.max_vpp = 2;
  return so;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double Score(const RecommendedPlan& p, PlanObjective o) {
  switch (o) {
    case PlanObjective::kCost:
      return p.cost_usd ? *p.cost_usd : kInf;
    case PlanObjective::kTime:
      return p.wall_time_s;
    case PlanObjective::kEnergy:
      return p.energy_kwh ? *p.energy_kwh : kInf;
  }
  return kInf;
}

// Best first: calibrated before uncalibrated (unless mixed), then the objective, then the
// wall time, then the fewest GPUs and the hardware id (a total order: the result is stable).
struct Ranking {
  PlanObjective o;
  bool mixed;
  bool operator()(const RecommendedPlan& a, const RecommendedPlan& b) const {
    if (!mixed && a.calibrated != b.calibrated) return a.calibrated;
    const double x = Score(a, o), y = Score(b, o);
    if (x != y) return x < y;
    if (a.wall_time_s != b.wall_time_s) return a.wall_time_s < b.wall_time_s;
    if (a.gpus != b.gpus) return a.gpus < b.gpus;
    return a.hardware < b.hardware;
  }
};

Status CheckOptions(const RecommendOptions& o) {
  if (!(o.tokens > 0) || !std::isfinite(o.tokens))
    return Status::Invalid("tokens", "give the run's tokens (> 0)");
  // A positive quantity at least 1e-6 of its unit, as plan's options (src/plan/plan.cc): a
  // denormal deadline was missed by every cluster without an error (issue 11).
  if (o.deadline_s && !(*o.deadline_s >= 1e-6 * 86400 && *o.deadline_s <= 1e30 * 86400))
    return Status::Invalid("deadline_days", "must be in [1e-06, 1e30] days, got " +
                                                detail::NumberText(*o.deadline_s / 86400));
  if (o.budget_usd && !(*o.budget_usd >= 1e-6 && *o.budget_usd <= 1e30))
    return Status::Invalid("budget_usd",
                           "must be in [1e-06, 1e30], got " + detail::NumberText(*o.budget_usd));
  if (o.gbs < 0) return Status::Invalid("gbs", "must be >= 1 (or absent: chosen)");
  if (o.top < 1) return Status::Invalid("top", "must be >= 1");
  for (int g : o.gpu_counts)
    if (g < 1) return Status::Invalid("gpus", "every count must be >= 1");
  if (o.plan.tokens || o.plan.epochs || o.plan.dataset_tokens)
    return Status::Invalid("tokens", "give the run's length as RecommendOptions::tokens");
  return Status::Ok();
}

struct Work {
  const ModelSpec& m;
  const RecommendOptions& o;
  double model_flops;  // 6 x active parameters x tokens: a lower bound of the run's FLOPs
  RecommendResult& r;
  std::vector<RecommendedPlan> all;
  // Of the clusters pruned by the deadline the least cost, of those pruned by the budget the
  // least time (lower bounds): what the pruned clusters might have offered.
  double pruned_cost_lb = kInf, pruned_time_lb = kInf;
};

// True when the cluster cannot meet a constraint even at 100 % MFU without failures; counted.
bool Pruned(Work& w, const HardwareSpec& hw, int gpus) {
  const double peak = hw.PeakFlops(w.o.dtype);
  if (!(peak > 0)) return true;
  const double lb_s = w.model_flops / (gpus * peak);
  const double price = w.o.plan.price_usd_per_gpu_hour.value_or(hw.price_usd_per_gpu_hour);
  const double lb_usd = price > 0 ? lb_s * gpus * price / 3600 : kInf;
  const bool late = w.o.deadline_s && lb_s > *w.o.deadline_s;
  const bool dear = w.o.budget_usd && price > 0 && lb_usd > *w.o.budget_usd;
  if (late) w.pruned_cost_lb = std::min(w.pruned_cost_lb, lb_usd);
  if (dear) w.pruned_time_lb = std::min(w.pruned_time_lb, lb_s);
  return late || dear;
}

// A plan's assumptions as they hold for every cluster: the per-cluster values (price, storage
// bandwidth, interval) described by their rule.
std::vector<Assumption> GeneralAssumptions(std::vector<Assumption> a) {
  for (Assumption& x : a) {
    if (x.field == "price_per_gpu_hour") x = {x.field, "each preset's", "data/hardware/*.json"};
    if (x.field == "storage_gbps") x.value = "0.122 per GPU";
    if (x.field == "checkpoint_interval_s") x.value = "per cluster";
  }
  return a;
}

// The cluster's fastest strategy and its plan; false when nothing fits or the run cannot finish.
bool PlanCluster(Work& w, const CatalogueEntry& e, int gpus, int gbs, RecommendedPlan& out) {
  auto res = Search(w.m, e.hw, RecommendSearchOptions(gpus, gbs, w.o));
  if (res.ok() && !res->complete) w.r.complete = false;
  if (!res.ok() || res->top.empty() || !res->complete) return false;
  w.r.evaluated += res->evaluated;
  const Candidate& best = res->top.front();
  SimOptions detail;
  detail.detail = true;
  auto step = Simulate(w.m, e.hw, best.strategy, detail);
  if (!step.ok()) return false;
  PlanOptions po = w.o.plan;
  po.tokens = w.o.tokens;
  auto plan = PlanRun(step.value(), w.m, e.hw, best.strategy, po);
  if (!plan.ok()) return false;
  if (w.r.assumed.empty()) w.r.assumed = GeneralAssumptions(plan->assumed);
  out.hardware = e.hw.id;
  out.calibrated = e.calibrated;
  out.gpus = gpus;
  out.strategy = best.strategy;
  out.variants = best.variants;
  out.step_time_s = best.step_time_s;
  out.wall_time_s = plan->wall_time_s;
  out.goodput = plan->goodput.fraction;
  out.cost_usd = plan->cost_usd;
  out.energy_kwh = plan->energy_kwh;
  out.meets_deadline = !w.o.deadline_s || plan->wall_time_s <= *w.o.deadline_s;
  out.meets_budget = !w.o.budget_usd || (plan->cost_usd && *plan->cost_usd <= *w.o.budget_usd);
  return true;
}

bool Stopped(const RecommendOptions& o) {
  return (o.cancel && o.cancel->load()) || std::chrono::steady_clock::now() >= o.deadline;
}

std::vector<int> GbsChoices(const RecommendOptions& o) {
  if (o.gbs > 0) return {o.gbs};
  // 2, 4, 8 and 16 M tokens per step (Llama 3 405B: 4M, then 8M and 16M tokens per batch).
  std::vector<int> out;
  for (double t : {2.0, 4.0, 8.0, 16.0}) {
    const int g = std::max(1, static_cast<int>(std::lround(t * (1 << 20) / o.seq)));
    if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  }
  return out;
}

std::string Describe(const RecommendedPlan& p) {
  return fmt::format("{} x {}", p.gpus, p.hardware);
}

// Which constraint keeps a better cluster out: the constraint the unconstrained best breaks.
std::string Binding(const Work& w) {
  const RecommendResult& r = w.r;
  const RecommendOptions& o = w.o;
  if (!o.deadline_s && !o.budget_usd) return "none given";
  if (!r.unconstrained_best) return "no cluster fits the model";
  const RecommendedPlan& u = *r.unconstrained_best;
  std::vector<std::string> why;
  if (!u.meets_deadline)
    why.push_back(fmt::format("the deadline ({} would take {:.1f} days > {:.1f})", Describe(u),
                              u.wall_time_s / 86400, *o.deadline_s / 86400));
  if (!u.meets_budget)
    why.push_back(u.cost_usd ? fmt::format("the budget ({} would cost ${:.0f} > ${:.0f})",
                                           Describe(u), *u.cost_usd, *o.budget_usd)
                             : fmt::format("the budget ({} has no price)", Describe(u)));
  // Clusters pruned unsearched can still have been better than the best one evaluated.
  const double best = Score(u, o.objective);
  if (u.meets_deadline && o.objective == PlanObjective::kCost && w.pruned_cost_lb < best)
    why.push_back(fmt::format(
        "perhaps the deadline (clusters it ruled out unsearched cost at least ${:.4g} at 100 % "
        "MFU, less than ${:.4g})",
        w.pruned_cost_lb, best));
  if (u.meets_budget && o.objective == PlanObjective::kTime && w.pruned_time_lb < best)
    why.push_back(fmt::format(
        "perhaps the budget (clusters it ruled out unsearched take at least {:.3g} days at 100 % "
        "MFU, less than {:.3g})",
        w.pruned_time_lb / 86400, best / 86400));
  std::string s = why.empty() ? "none: the best cluster meets every constraint"
                              : (why.size() == 2 ? why[0] + " and " + why[1] : why[0]);
  if (r.plans.empty()) s = "no cluster meets every constraint; " + s;
  if (r.pruned > 0)
    s += fmt::format(" ({} clusters pruned: they cannot meet a constraint even at 100 % MFU)",
                     r.pruned);
  return s;
}

}  // namespace

Result<RecommendResult> Recommend(const ModelSpec& m, const std::vector<CatalogueEntry>& catalogue,
                                  const RecommendOptions& o) {
  if (Status st = CheckOptions(o); !st.ok()) return st;
  if (Status st = ValidateModel(m); !st.ok()) return st;
  const auto t0 = std::chrono::steady_clock::now();
  RecommendResult r;
  Work w{m, o, 6.0 * static_cast<double>(CountParams(m).active) * o.tokens, r, {}};
  std::vector<int> counts = o.gpu_counts;
  if (counts.empty())
    for (int g = 8; g <= 16384; g *= 2) counts.push_back(g);
  const std::vector<int> gbs = GbsChoices(o);
  const Ranking rank{o.objective, o.include_uncalibrated};
  for (const CatalogueEntry& e : catalogue) {
    // A profile without a sourced peak for the run's precision is skipped, said once.
    if (Status st = CheckPeakSourced(e.hw, o.dtype); !st.ok()) {
      r.assumed.push_back({"hardware " + e.hw.id, "skipped", st.message()});
      continue;
    }
    for (int g : counts) {
      std::optional<RecommendedPlan> best;  // of this cluster over the batch choices
      for (int b : gbs) {
        if (Stopped(o)) r.complete = false;
        if (!r.complete) break;
        ++r.clusters;
        if (Pruned(w, e.hw, g)) {
          ++r.pruned;
          continue;
        }
        RecommendedPlan p;
        if (!PlanCluster(w, e, g, b, p)) {
          ++r.no_fit;
          continue;
        }
        const bool ok = p.meets_deadline && p.meets_budget;
        const bool best_ok = best && best->meets_deadline && best->meets_budget;
        if (!best || (ok && !best_ok) || (ok == best_ok && rank(p, *best))) best = p;
      }
      if (best) w.all.push_back(*best);
    }
  }
  std::sort(w.all.begin(), w.all.end(), rank);
  if (!w.all.empty()) r.unconstrained_best = w.all.front();
  for (const RecommendedPlan& p : w.all)
    if (p.meets_deadline && p.meets_budget && static_cast<int>(r.plans.size()) < o.top) {
      r.plans.push_back(p);
      r.collapsed += p.variants;
    }
  r.binding = Binding(w);
  if (o.gbs == 0)
    r.assumed.insert(r.assumed.begin(),
                     {"gbs", "2, 4, 8, 16 M tokens", "no --gbs: the best of these per cluster"});
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace trainsim

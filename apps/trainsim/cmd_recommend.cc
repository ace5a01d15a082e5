// `trainsim recommend`: which hardware, how many GPUs and which strategy, ranked by cost, time or
// energy under a deadline and a budget (include/trainsim/plan.h).
#include <iostream>

#include "cli_numbers.h"
#include "cli_util.h"
#include "commands.h"
#include "strategy_flags.h"
#include "trainsim/front_end.h"
#include "trainsim/plan.h"

namespace trainsim::cli {

void AddRecommend(CLI::App& app, RecommendArgs& a) {
  CLI::App* c = app.add_subcommand(
      "recommend", "rank hardware x GPU count x strategy for a run under a deadline and budget");
  c->add_option("--model", a.model, "model preset id or config.json path")->capture_default_str();
  c->add_option("--tokens", a.tokens, "training tokens of the run")->required();
  a.given["--deadline-days"] =
      c->add_option("--deadline-days", a.deadline_days, "the run must finish within (days)");
  a.given["--budget-usd"] = c->add_option("--budget-usd", a.budget_usd, "the run may cost at most");
  a.given["--price-per-gpu-hour"] = c->add_option(
      "--price-per-gpu-hour", a.price, "one price for every profile (default: each profile's)");
  c->add_option("--objective", a.objective, "cost | time | energy")->capture_default_str();
  AddSchemaOption(c, "global_batch_size", a.gbs)->check(Positive());
  AddSchemaOption(c, "seq_len", a.seq)->check(Positive())->capture_default_str();
  AddSchemaOption(c, "dtype", a.dtype)->capture_default_str();
  c->add_option("--gpus", a.gpus, "GPU counts (comma-separated; default 8, 16, ..., 16384)")
      ->delimiter(',');
  c->add_option("--top", a.top, "how many plans to list")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  c->add_option("--threads", a.threads, "search threads (0 = all cores)")
      ->check(CLI::Range(0, 1024));
  c->add_flag("--include-uncalibrated", a.include_uncalibrated,
              "rank uncalibrated profiles with the calibrated ones");
  c->add_flag("--json", a.json, "print the result as JSON");
}

int RunRecommend(const RecommendArgs& a) {
  auto model = LoadModelArg(a.model);
  if (!model.ok()) return Fail(model.status());
  RecommendRequest req;  // the request every front-end builds (front_end.h)
  req.tokens = a.tokens;
  req.objective = a.objective;
  req.dtype = a.dtype;
  req.gbs = a.gbs;
  req.seq = a.seq;
  req.gpus = a.gpus;
  req.top = a.top;
  req.threads = a.threads;
  req.include_uncalibrated = a.include_uncalibrated;
  if (a.given.at("--deadline-days")->count()) req.deadline_days = a.deadline_days;
  if (a.given.at("--budget-usd")->count()) req.budget_usd = a.budget_usd;
  if (a.given.at("--price-per-gpu-hour")->count()) req.price_per_gpu_hour = a.price;
  auto o = MakeRecommendOptions(req);
  if (!o.ok()) return Fail(o.status());
  auto catalogue = LoadCatalogue();
  if (!catalogue.ok()) return Fail(catalogue.status());
  auto r = Recommend(model.value(), catalogue.value(), o.value());
  if (!r.ok()) return Fail(r.status());
  std::cout << (a.json ? RecommendJson(r.value()) + "\n" : RecommendText(r.value(), o.value()));
  return 0;
}

}  // namespace trainsim::cli

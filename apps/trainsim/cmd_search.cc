#include "cmd_search.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_numbers.h"
#include "cli_util.h"
#include "strategy_flags.h"
#include "trainsim/results_json.h"
#include "trainsim/schema.h"
#include "trainsim/search.h"
#include "trainsim/sweep.h"
#include "trainsim/trainsim.h"

namespace trainsim::cli {

namespace {

// --gbs, --seq, --dtype: the workload both search and sweep need (flags from the schema).
void AddWorkloadOptions(CLI::App* c, int& gbs, int& seq, std::string& dtype) {
  AddSchemaOption(c, "global_batch_size", gbs)->required()->check(Positive());
  AddSchemaOption(c, "seq_len", seq)->check(Positive())->capture_default_str();
  AddSchemaOption(c, "dtype", dtype)->capture_default_str();
}

// The workload keys search takes besides gbs and seq (trainsim/search.h): what is trained.
void AddFinetuneOptions(CLI::App* c, std::map<std::string, std::string>& values) {
  for (const std::string& key : SearchWorkloadKeys()) {
    if (key == "master_weights") continue;  // --no-master-weights below
    std::string* slot = &values[key];
    AddSchemaOption(c, key, *slot);
  }
  c->add_flag_function(
      "--no-master-weights", [&values](std::int64_t) { values["master_weights"] = "false"; },
      "optimizer states in the parameter dtype, no fp32 master copy (pure bf16)");
}

// "lora" or, when methods or ranks are searched, "methods lora|qlora, ranks 8|64".
std::string MethodsText(const SearchOptions& o) {
  if (o.methods.empty() && o.lora_ranks.empty())
    return std::string(FtMethodName(o.workload.method));
  std::string m, r;
  for (FtMethod x : o.methods) m += (m.empty() ? "" : "|") + std::string(FtMethodName(x));
  for (int x : o.lora_ranks) r += (r.empty() ? "" : "|") + std::to_string(x);
  return "methods " + (m.empty() ? std::string(FtMethodName(o.workload.method)) : m) +
         (r.empty() ? "" : ", ranks " + r);
}

}  // namespace

void AddSearch(CLI::App& app, SearchArgs& a) {
  CLI::App* c =
      app.add_subcommand("search", "find the best legal strategies for a model on a cluster");
  c->add_option("--model", a.model, "model preset id or config.json path")->capture_default_str();
  c->add_option("--hardware", a.hardware, "hardware preset id or JSON path")->capture_default_str();
  c->add_option("--hw-override", a.hw_override, "JSON object of hardware fields to override");
  c->add_option("--gpus", a.gpus, "world size")->check(Positive())->capture_default_str();
  AddWorkloadOptions(c, a.gbs, a.seq, a.dtype);
  c->add_option("--top", a.top, "how many strategies to print")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  c->add_option("--objective", a.objective, "time | cost | memory")->capture_default_str();
  c->add_option("--memory-margin", a.margin, "fraction of HBM kept free")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  c->add_option("--threads", a.threads, "worker threads (0 = all cores)")
      ->check(CLI::Range(0, 1024));
  CLI::Option* json = c->add_flag("--json", a.json, "print the result as JSON");
  c->add_flag("--csv", a.csv, "print the top strategies as CSV")->excludes(json);
  c->add_flag("--megatron", a.megatron, "print the best strategy as Megatron-LM arguments");
  c->add_flag("--no-progress", a.no_progress, "no progress bar");
  AddFinetuneOptions(c, a.workload);
}

namespace {

void Progress(double f) {
  const int width = 40, filled = static_cast<int>(f * width);
  std::fprintf(stderr, "\r[%s%s] %3.0f%%", std::string(filled, '#').c_str(),
               std::string(width - filled, ' ').c_str(), 100 * f);
  std::fflush(stderr);
}

}  // namespace

int RunSearch(const SearchArgs& a, const SearchFn& fn, bool print) {
  auto model = LoadModelArg(a.model);
  if (!model.ok()) return Fail(model.status());
  auto hw = LoadHardwareWithOverride(a.hardware, a.hw_override);
  if (!hw.ok()) return Fail(hw.status());
  const HardwareSpec& h = hw.value();
  auto obj = ParseObjective(a.objective);
  if (!obj.ok()) return Fail(obj.status());
  auto dt = ParseDType(a.dtype);
  if (!dt.ok()) return Fail(dt.status());
  SearchOptions o;
  o.gpus = a.gpus;
  o.gbs = a.gbs;
  o.seq = a.seq;
  o.dtype = dt.value();
  o.top_k = a.top;
  o.objective = obj.value();
  o.memory_margin = a.margin;
  o.threads = a.threads;
  if (Status st = ApplySearchWorkload(a.workload, o, /*name_flags=*/true); !st.ok())
    return Fail(st);
  // A progress bar on a terminal, once the search has run for about a second.
  const bool tty = print && isatty(STDERR_FILENO) && !a.no_progress && !a.json && !a.csv;
  const auto start = std::chrono::steady_clock::now();
  bool shown = false;
  if (tty)
    o.progress = [&](const SearchProgress& p) {
      if (!shown && std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) return;
      shown = true;
      Progress(p.fraction);
    };
  auto res = fn(model.value(), h, o);
  if (shown) std::fprintf(stderr, "\n");
  if (!res.ok()) return print ? Fail(res.status()) : 2;
  if (!print) return 0;
  const SearchResult& r = res.value();
  const std::string stable = SearchSummaryLine(r);
  if (a.json) {
    std::cout << SearchResultJson(r, 2, &h) << "\n";
    return 0;
  }
  if (a.csv) {
    std::cout << SearchResultCsv(r) << stable << "\n";
    return 0;
  }
  std::printf("trainsim search: %s on %d x %s, gbs %d, seq %d, %s, %s %s, objective %s\n\n",
              model->name.c_str(), a.gpus, h.id.c_str(), a.gbs, a.seq, a.dtype.c_str(),
              std::string(TrainStageName(o.workload.stage)).c_str(), MethodsText(o).c_str(),
              a.objective.c_str());
  if (!h.calibrated) std::printf("  %s\n\n", UncalibratedNote(h).c_str());
  std::printf("  %-4s %-62s %9s %6s %9s %9s %9s\n", "rank", "strategy", "step s", "MFU",
              "tok/s/GPU", "peak GiB", "$/Mtok");
  int rank = 1;
  for (const Candidate& c : r.top)
    std::printf("  %-4d %-62s %9.3f %5.1f%% %9.0f %9.2f %9.3f\n", rank++,
                DescribeStrategy(c.strategy).c_str(), c.step_time_s, 100 * c.mfu,
                c.tokens_per_s_per_gpu, c.peak_mem_bytes / (1 << 30), c.usd_per_million_tokens);
  std::printf(
      "  (%llu more with the same step time and memory as a listed one collapsed into it:"
      " ZeRO 1/2, rank-order and other variants that change nothing ranked)\n",
      static_cast<unsigned long long>(r.collapsed));
  std::printf("\n  Pareto front (step time vs peak memory; %zu points%s):\n", r.pareto.size(),
              r.pareto.size() > 12 ? ", 12 shown" : "");
  std::vector<Candidate> shown_front;
  for (size_t i = 0; i < r.pareto.size(); ++i)
    if (r.pareto.size() <= 12 || i * 11 % (r.pareto.size() - 1) < 11 || i + 1 == r.pareto.size())
      shown_front.push_back(r.pareto[i]);
  if (shown_front.size() > 12) shown_front.resize(12), shown_front.back() = r.pareto.back();
  for (const Candidate& c : shown_front)
    std::printf("       %-62s %9.3f s %9.2f GiB\n", DescribeStrategy(c.strategy).c_str(),
                c.step_time_s, c.peak_mem_bytes / (1 << 30));
  std::printf("\n  rejected:\n");
  for (const auto& [reason, n] : r.rejected)
    std::printf("    %-40s %12llu\n", reason.c_str(), static_cast<unsigned long long>(n));
  if (a.megatron && !r.top.empty())
    std::printf("\n  best as Megatron-LM arguments:\n    %s\n",
                MegatronArgs(r.top.front().strategy).c_str());
  if (r.top.empty()) std::printf("\n  no strategy fits: see the rejection counts above\n");
  std::printf("%s\n", stable.c_str());
  return 0;
}

void AddSweep(CLI::App& app, SweepArgs& a) {
  CLI::App* c = app.add_subcommand(
      "sweep", "best strategy over GPU counts and hardware variations; CSV and SVG plots");
  c->add_option("--model", a.model, "model preset id or config.json path")->capture_default_str();
  c->add_option("--hardware", a.hardware, "hardware presets (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--gpus", a.gpus, "GPU counts (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--vary", a.vary,
                "hardware field=v1,v2 (repeatable), e.g. nic_gbps_per_gpu=200,400");
  AddWorkloadOptions(c, a.gbs, a.seq, a.dtype);
  c->add_option("--threads", a.threads, "worker threads (0 = all cores)")
      ->check(CLI::Range(0, 1024));
  c->add_option("--out", a.out,
                "output prefix: PREFIX.csv, PREFIX_scaling.svg, PREFIX_breakdown.svg")
      ->capture_default_str();
}

int RunSweep(const SweepArgs& a) {
  auto model = LoadModelArg(a.model);
  if (!model.ok()) return Fail(model.status());
  auto dt = ParseDType(a.dtype);
  if (!dt.ok()) return Fail(dt.status());
  for (int g : a.gpus)
    if (g < 1) return Fail(Status::Invalid("gpus: every count must be >= 1"));
  auto systems = ExpandSystems(a.hardware, a.vary);
  if (!systems.ok()) return Fail(systems.status());
  SearchOptions o;
  o.gbs = a.gbs;
  o.seq = a.seq;
  o.dtype = dt.value();
  o.threads = a.threads;
  auto points = Sweep(model.value(), systems.value(), a.gpus, o);
  if (!points.ok()) return Fail(points.status());
  const std::string title =
      fmt::format("{}: gbs {}, seq {}, {}", model->name, a.gbs, a.seq, a.dtype);
  const std::pair<std::string, std::string> files[] = {
      {a.out + ".csv", SweepCsv(points.value())},
      {a.out + "_scaling.svg", SweepScalingSvg(points.value(), title + " - best step time")},
      {a.out + "_breakdown.svg", SweepBreakdownSvg(points.value(), title + " - time breakdown")}};
  for (const auto& [path, text] : files) {
    if (Status st = WriteTextFile("--out", path, text); !st.ok()) return Fail(st);
  }
  uint64_t evaluated = 0;
  for (const SweepPoint& p : points.value()) {
    evaluated += p.evaluated;
    std::printf("%-40s %6d GPUs  %s\n", p.system.c_str(), p.gpus,
                p.feasible ? fmt::format("{:9.3f} s  MFU {:5.1f}%  {}", p.best.step_time_s,
                                         100 * p.best.mfu, DescribeStrategy(p.best.strategy))
                                 .c_str()
                           : "no strategy fits");
  }
  std::printf(
      "sweep: %zu points, %llu strategies evaluated; wrote %s.csv, %s_scaling.svg, "
      "%s_breakdown.svg\n",
      points->size(), static_cast<unsigned long long>(evaluated), a.out.c_str(), a.out.c_str(),
      a.out.c_str());
  return 0;
}

}  // namespace trainsim::cli

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cli_numbers.h"
#include "cli_util.h"
#include "commands.h"
#include "framework_files.h"
#include "megatron_input.h"
#include "simulate_inputs.h"
#include "strategy_flags.h"
#include "trainsim/front_end.h"
#include "trainsim/schema.h"
#include "trainsim/timeline.h"
#include "trainsim/trainsim.h"
#include "trainsim/uncertainty.h"

namespace trainsim::cli {

void AddSimulateInputs(CLI::App* c, SimulateArgs& a) {
  c->add_option("--model", a.model,
                "model preset id or config.json path (default llama3-8b; with a Megatron-LM "
                "input, the model its arguments describe)")
      ->each([&a](const std::string&) { a.model_given = true; });
  c->add_option("--hardware", a.hardware, "hardware preset id or JSON path")->capture_default_str();
  c->add_option("--strategy", a.strategy_file,
                "strategy JSON: SimuMax keys, or a report's \"strategy\" (flags override it)");
  c->add_option("--from-megatron-args", a.megatron_args,
                "a Megatron-LM argument string (quoted as the shell reads it)");
  c->add_option("--megatron-script", a.megatron_script,
                "a Megatron-LM launch script (torchrun ... pretrain_gpt.py ...): strategy, model "
                "and GPU count from its arguments");
  c->add_option("--megatron-script-args", a.megatron_script_args,
                "the launch script's own arguments ($1, $2, ...; quoted as the shell reads "
                "them), e.g. PAI-Megatron-Patch's \"dsw 8B 1 8 ...\"");
  c->add_option("--hw-override", a.hw_override, "JSON object of hardware fields to override");
  AddStrategyFlags(c, a.strategy, "Strategy (trainsim schema strategy)");
  c->add_flag("--no-overlap", a.no_overlap,
              "no DP overlap: --no-overlap-grad-reduce --no-overlap-param-gather")
      ->group("Strategy (trainsim schema strategy)");
  AddFrameworkFlags(c, a);
}

void AddSimulate(CLI::App& app, SimulateArgs& a) {
  CLI::App* c = app.add_subcommand("simulate", "predict one training step");
  AddSimulateInputs(c, a);
  c->add_flag("--json", a.json, "print the full report as JSON");
  c->add_flag("--detail", a.detail, "include the per-layer op table");
  c->add_option("--trace", a.trace, "write the event-driven step as Chrome trace JSON (Perfetto)");
  c->add_option("--timeline", a.timeline, "write the event-driven step as an SVG Gantt chart");
  c->add_option("--slowdown", a.slowdown,
                "STAGE:FACTOR, slow one pipeline stage's compute (repeatable; what-if)");
}

namespace {

// Struct defaults, then the --strategy file, then --from-megatron-args, then the flags; then the
// default batch and NormaliseStrategy. `given` receives the keys the sources gave.
Result<Strategy> BuildStrategy(const SimulateArgs& a, const FrameworkConfig& fw,
                               StrategyKeys& given, MegatronInput* mg) {
  Strategy s;
  if (Status st = ApplyStrategySettings(s, fw.settings, false); !st.ok()) return st;
  for (const auto& [key, value] : fw.settings) given.insert(key);
  if (!a.strategy_file.empty()) {
    auto text = ReadTextFile(a.strategy_file);
    if (!text.ok()) return Status::NotFound("strategy: " + text.status().message());
    if (Status st = ApplyStrategyJson(text.value(), a.strategy_file, s, &given); !st.ok())
      return st;
  }
  if (mg)
    if (Status st = ApplyMegatronJob(*mg, s, given); !st.ok())
      return st.WithContext(a.megatron_script.empty() ? "from-megatron-args" : a.megatron_script);
  std::map<std::string, std::string> flags = a.strategy;
  if (a.no_overlap) {
    flags.emplace("overlap_grad_reduce", "false");
    flags.emplace("overlap_param_gather", "false");
  }
  return FinishStrategy(s, flags, given);  // the flags, the default batch, normalised
}

// "--slowdown 3:1.5" (repeatable) into one factor per stage.
Result<std::vector<double>> ParseSlowdown(const std::vector<std::string>& items, int pp) {
  std::vector<double> f;
  if (items.empty()) return f;
  f.assign(pp, 1.0);
  for (const std::string& it : items) {
    const size_t colon = it.find(':');
    const std::optional<int> stage =
        colon == std::string::npos ? std::nullopt : ParseDecimalInt<int>(it.substr(0, colon));
    const std::optional<double> factor =
        colon == std::string::npos ? std::nullopt : ParseFiniteDouble(it.substr(colon + 1));
    if (!stage || !factor)
      return Status::Invalid("slowdown", "expected STAGE:FACTOR, e.g. 3:1.5, got '" + it + "'");
    if (*stage < 0 || *stage >= pp)
      return Status::Invalid("slowdown", "stage must be in 0.." + std::to_string(pp - 1) +
                                             ", got " + std::to_string(*stage));
    if (!(*factor >= 1e-6 && *factor <= 1e6))
      return Status::Invalid(
          "slowdown", "factor must be in [1e-06, 1e+06], got '" + it.substr(colon + 1) + "'");
    f[*stage] = *factor;
  }
  return f;
}

Status WriteFile(const char* flag, const std::string& path, const std::string& text) {
  return WriteTextFile(flag, path, text);
}

// The event-driven step, written to the --trace / --timeline files.
Result<Timeline> RunTimeline(const SimulateArgs& a, const StepReport& r, const ModelSpec& m,
                             const Strategy& s) {
  TimelineOptions o;
  auto slow = ParseSlowdown(a.slowdown, s.pp);
  if (!slow.ok()) return slow.status();
  o.stage_slowdown = slow.value();
  o.p2p_message_bytes = PipelineMessageBytes(m, s);
  auto t = SimulateTimeline(r, s, o);
  if (!t.ok()) return t.status();
  if (!a.trace.empty())
    if (Status st = WriteFile("trace", a.trace, TimelineToChromeTrace(t.value())); !st.ok())
      return st;
  if (!a.timeline.empty())
    if (Status st = WriteFile("timeline", a.timeline, TimelineToSvg(t.value())); !st.ok())
      return st;
  return t;
}

// Per-stage busy / bubble / exposed communication of the event-driven step.
void PrintTimeline(const SimulateArgs& a, const Timeline& tl) {
  std::printf(
      "\nEvent-driven step (%s, %d stages x %d micro-batches%s)\n",
      PipelineScheduleName(tl.schedule), tl.stages, tl.micro_batches,
      tl.chunks > 1 ? (", " + std::to_string(tl.chunks) + " chunks per stage").c_str() : "");
  std::printf(
      "  step time          %10.4f s = pipeline %.4f s + optimizer %.4f s + overhead "
      "%.4f s  (closed form %.4f s)\n",
      tl.step_time_s, tl.pipeline_s, tl.optimizer_s, tl.overhead_s, tl.closed_form_step_time_s);
  std::printf("  %5s %8s %10s %10s %15s %9s %17s\n", "stage", "slowdown", "busy s", "bubble s",
              "exposed comm s", "bubble %", "peak mem GiB (*)");
  for (const StageTimeline& st : tl.stage_stats)
    std::printf("  %5d %8.2f %10.4f %10.4f %15.4f %8.1f%% %17.2f\n", st.stage, st.slowdown,
                st.busy_s, st.bubble_s, st.exposed_comm_s,
                tl.pipeline_s > 0 ? 100 * st.bubble_s / tl.pipeline_s : 0.0,
                st.peak_mem_bytes / (1024.0 * 1024.0 * 1024.0));
  std::printf("  (*) static bytes + activations in flight, without the transient peak\n");
  if (!a.trace.empty())
    std::printf("  trace: %s (open in https://ui.perfetto.dev or chrome://tracing)\n",
                a.trace.c_str());
  if (!a.timeline.empty()) std::printf("  timeline: %s\n", a.timeline.c_str());
}

}  // namespace

// The model: --model, or the one a Megatron-LM input describes (checked against --model when
// both are given); resolves the strategy settings that need the model.
static Result<ModelSpec> BuildModel(const SimulateArgs& a, const MegatronInput* mg, Strategy& s) {
  if (!mg) return LoadModelArg(a.model);
  std::optional<ModelSpec> preset;
  if (a.model_given) {
    auto m = LoadModelArg(a.model);
    if (!m.ok()) return m.status();
    preset = std::move(m).value();
  }
  auto m = MegatronJobModel(*mg, preset ? &*preset : nullptr, s);
  if (!m.ok()) return a.model_given ? m.status().WithContext("--model " + a.model) : m.status();
  if (!a.model_given && !a.megatron_script.empty())  // named after the script
    m.value().name = a.megatron_script.substr(a.megatron_script.find_last_of('/') + 1);
  return m;
}

Result<SimulateInputs> ResolveSimulateInputs(const SimulateArgs& a) {
  auto hw = LoadHardwareWithOverride(a.hardware, a.hw_override);
  if (!hw.ok()) return hw.status();
  auto mg_in = LoadMegatronInput(a.megatron_args, a.megatron_script, a.megatron_script_args);
  if (!mg_in.ok()) return mg_in.status();
  SimulateInputs in;
  in.hw = std::move(hw).value();
  std::optional<MegatronInput>& mg = in.mg;
  mg = std::move(mg_in).value();
  std::optional<ModelSpec> fw_model;
  if (a.AnyFrameworkFile()) {  // framework files
    if (mg)
      return Status::Invalid("megatron-script",
                             "give Megatron-LM arguments or a DeepSpeed / torchtitan / "
                             "LLaMA-Factory / TRL file, not both");
    auto m = LoadModelArg(a.model);
    if (!m.ok()) return m.status();
    fw_model = std::move(m).value();
    auto read = ReadFrameworkFiles(a, *fw_model);
    if (!read.ok()) return read.status();
    in.fw = std::move(read).value();
  }
  auto strategy = BuildStrategy(a, in.fw, in.given, mg ? &*mg : nullptr);
  if (!strategy.ok()) return strategy.status();
  if (!a.framework.empty()) {
    auto profile = ApplyFrameworkProfile(a.framework, in.hw, strategy.value(), in.given);
    if (!profile.ok()) return profile.status();
    in.fw.assumed.insert(in.fw.assumed.end(), profile->begin(), profile->end());
  }
  if (Status st =
          ResolveFrameworkBatch(in.fw, strategy.value(), a.strategy.count("global_batch_size") > 0);
      !st.ok())
    return st;
  if (Status st = CheckFrameworkBatch(in.fw, strategy.value()); !st.ok()) return st;
  if (Status st = ResolveFrameworkLayout(in.fw, strategy.value(), in.hw.gpus_per_node,
                                         a.strategy.count("dist_opt_instances") > 0);
      !st.ok())
    return st;
  auto model = fw_model ? Result<ModelSpec>(*fw_model)
                        : BuildModel(a, mg ? &*mg : nullptr, strategy.value());
  if (!model.ok()) return model.status();
  if (mg) WarnIgnored(mg->reading);
  in.model = std::move(model).value();
  in.strategy = std::move(strategy).value();
  return in;
}

Result<PreparedStep> PrepareStep(const SimulateArgs& a, bool detail) {
  auto inputs = ResolveSimulateInputs(a);
  if (!inputs.ok()) return inputs.status();
  SimulateInputs& in = inputs.value();
  SimOptions opt;
  opt.detail = detail;
  auto rep = SimulateWithAssumptions(in.model, in.hw, in.strategy, in.given, opt);
  if (!rep.ok()) return rep.status();
  // No profile, framework file or Megatron script says which stack runs this: the band is the
  // one measured on runs whose stack had to be inferred (a named generic-* profile is a guess too).
  if ((a.framework.empty() || a.framework.rfind("generic-", 0) == 0) && !a.AnyFrameworkFile() &&
      !in.mg)
    WidenForInferredStack(rep.value(), in.strategy);
  // Settings the library found inert (MoE switches on a dense model); the model file's unread
  // keys were named when it was loaded (LoadModelArg).
  std::string keys;
  size_t inert = 0;
  for (const IgnoredInput& i : rep->ignored) {
    if (std::any_of(in.model.ignored_keys.begin(), in.model.ignored_keys.end(),
                    [&](const IgnoredModelKey& k) { return k.key == i.field; }))
      continue;
    keys += (keys.empty() ? "" : ", ") + i.field;
    ++inert;
  }
  if (inert > 0)
    std::fprintf(stderr,
                 "trainsim: warning: %zu settings have no effect: %s (the report's ignored list "
                 "says why)\n",
                 inert, keys.c_str());
  if (in.mg) AddMegatronNotes(*in.mg, rep.value());
  AddInputNotes(a, in.fw, rep.value());
  return PreparedStep{std::move(in.model), std::move(in.hw), std::move(in.strategy),
                      std::move(rep).value(), std::move(in.given)};
}

int RunSimulate(const SimulateArgs& a) {
  auto prepared = PrepareStep(a, a.detail);
  if (!prepared.ok()) return Fail(prepared.status());
  const PreparedStep& ps = prepared.value();
  const Strategy& s = ps.strategy;
  // The event-driven step runs when asked for (files, stragglers) and for the schedules that
  // only it distinguishes from 1F1B.
  const bool timeline = !a.trace.empty() || !a.timeline.empty() || !a.slowdown.empty() ||
                        s.schedule == PipelineSchedule::kZeroBubbleH1 ||
                        s.schedule == PipelineSchedule::kDualPipe;
  std::optional<Timeline> tl;
  if (timeline) {
    // Before printing anything, so that bad input prints one line only.
    auto t = RunTimeline(a, ps.report, ps.model, s);
    if (!t.ok()) return Fail(t.status());
    tl = std::move(t).value();
  }
  if (a.json)
    std::cout << FormatReportJson(ps.report, ps.model, ps.hw, s) << "\n";
  else
    std::cout << FormatReportText(ps.report, ps.model, ps.hw, s);
  if (tl && !a.json) {
    std::cout.flush();
    PrintTimeline(a, *tl);
  }
  return 0;
}

}  // namespace trainsim::cli

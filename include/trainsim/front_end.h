// What every front-end (the CLI, the HTTP service, the Python module) does with a simulate
// request, in one place so that they cannot disagree: strategy fields by the names people type,
// settings layered on a strategy the way the CLI's flags are, the default batch, and the
// report's list of assumptions.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/megatron.h"
#include "trainsim/plan.h"
#include "trainsim/schema.h"
#include "trainsim/status.h"
#include "trainsim/strategy.h"
#include "trainsim/trainsim.h"

namespace trainsim {

// The schema field that `name` names: its canonical key ("tp_size") or its CLI flag without the
// leading dashes, spelt with '-' or '_' ("tp", "main-grad-fp32", "main_grad_fp32"). No two
// fields share a name (a unit test checks). nullptr when no field has that name.
const StrategyField* FindStrategyFieldByName(std::string_view name);

// Applies `settings` (canonical key -> text) on top of `s` as the CLI's strategy flags are
// applied (errors name the field's flag, e.g. "--tp: must be >= 1, got 0"), then the default
// batch (ApplyDefaultBatch) and NormaliseStrategy. `given` gains the keys of `settings`.
Result<Strategy> FinishStrategy(Strategy s, const std::map<std::string, std::string>& settings,
                                StrategyKeys& given);

// The defaults that depend on the model, for settings no source gave (not in `given`), applied to
// `s`; returns them as the report's assumptions. An MoE model without an expert TP size gets
// etp 1, as the MoE performance recipes run it (Megatron-LM's own default, tp_size, stays for a
// Megatron-LM input, whose reader lists every argument as given).
std::vector<Assumption> ApplyModelDefaults(const ModelSpec& model, Strategy& s,
                                           const StrategyKeys& given);

// ApplyModelDefaults on `strategy` (the caller keeps the strategy simulated), Simulate, then the
// strategy's defaults that no source gave (AssumedStrategyDefaults of `given`) listed first among
// the report's assumptions: the report `simulate --json` prints.
Result<StepReport> SimulateWithAssumptions(const ModelSpec& model, const HardwareSpec& hw,
                                           Strategy& strategy, const StrategyKeys& given,
                                           const SimOptions& options = {});

// ---- framework profiles (`simulate --framework`) ----------------------------------------------

// The ids of the embedded framework profiles (data/frameworks.json), in file order.
std::vector<std::string> FrameworkProfileIds();
// Every name ApplyFrameworkProfile accepts: the ids, then the names of their `frameworks` lists
// not already listed (releases such as megatron-bridge-26.04.01), lower case, each once.
std::vector<std::string> FrameworkProfileNames();

// The profile `name` (an id of FrameworkProfileIds or a name of its `frameworks` list; its
// settings for hw's GPU class where it has them) fills the strategy settings no input gave (not in
// `given`): parallel habits, kernels (attention, fused cross-entropy), the host's launch rate and
// execution habits (optimizer implementation, element-wise fusion), as validate fills a case's
// null fields from its source's profile. Returns them as the report's assumptions;
// InvalidArgument (field "framework") names the profiles for an unknown name.
Result<std::vector<Assumption>> ApplyFrameworkProfile(std::string_view name, const HardwareSpec& hw,
                                                      Strategy& s, StrategyKeys& given);

// ---- Megatron-LM inputs -----------------------------------------------------------------------

// A Megatron-LM launch script or argument string as every front-end takes it: the CLI's
// --megatron-script / --from-megatron-args, the REST body's "megatron" object, the Python
// module's megatron_script.
struct MegatronJob {
  MegatronCommand command;
  MegatronReading reading;
};

// Parses `text` as a launch script (or a bare argument list), run with `script_args` (shell
// words: its $1, $2, ...). Errors carry `text_field` / `args_field` as context.
Result<MegatronJob> ParseMegatronJob(std::string_view text, std::string_view script_args,
                                     const std::string& text_field, const std::string& args_field);

// Reads the job's arguments onto `s` (over what it holds; Megatron-LM's defaults for what they
// leave out) and its launcher's GPU count (--nproc_per_node x --nnodes) as world_size; `given`
// receives the keys they set. The caller's own settings go on top (FinishStrategy).
Status ApplyMegatronJob(MegatronJob& job, Strategy& s, StrategyKeys& given);

// The job's model: built from its model-shape arguments, or `preset` checked against them; then
// what needs the model (vpp from --num-layers-per-virtual-pipeline-stage) and NormaliseStrategy.
Result<ModelSpec> MegatronJobModel(const MegatronJob& job, const ModelSpec* preset, Strategy& s);

// The arguments the job's reader ignored and what it assumed, into the report (its assumptions
// first, as the CLI lists them).
void AddMegatronNotes(const MegatronJob& job, StepReport& r);

// ---- plan (`trainsim plan`) -------------------------------------------------------------------

// What `trainsim plan` takes beyond the step. Every front-end fills it by the option names
// (SetPlanOption), so that the CLI, the REST service and the Python module read them alike.
struct PlanRequest {
  PlanOptions options;
  std::optional<double> flops, budget_usd;  // with compute_optimal only
  bool search = false;                      // plan the fastest strategy of the cluster instead
  bool compute_optimal = false;             // Chinchilla-optimal size and tokens
  bool detail = false;                      // keep the per-layer table in the step report
  // Bounds of the search that `search` runs (SearchOptions::cancel, deadline); a search they
  // stop is InvalidArgument with field "time_limit".
  const std::atomic<bool>* cancel = nullptr;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// The numeric options of `trainsim plan`, named as its flags without "--" and with '_' for '-':
// tokens, epochs, dataset_tokens, price_per_gpu_hour, pue, grid_kg_co2_per_kwh,
// host_w_per_node, gpus_per_node, idle_power_fraction, mtbf_gpu_hours, storage_gbps (GB/s),
// restart_s, checkpoint_interval_s, flops, budget_usd.
const std::vector<std::string_view>& PlanOptionNames();
// Sets one of them (InvalidArgument naming an unknown name; gpus_per_node must be a whole
// number >= 1). The values' other rules are PlanRun's.
Status SetPlanOption(PlanRequest& r, std::string_view name, double value);

// A planned run: the step planned (after the search, when asked) and its whole-run plan.
struct PlannedRun {
  Strategy strategy;
  StepReport step;
  RunPlan plan;
  std::optional<ComputeOptimal> optimal;
};
// The plan of `step` (the report of one step of `s` on `hw`, simulated with SimOptions::detail
// as SimulateWithAssumptions gives it), as `trainsim plan` computes it.
Result<PlannedRun> PlanStep(const ModelSpec& model, const HardwareSpec& hw, Strategy s,
                            StepReport step, const PlanRequest& r);
// `trainsim plan --json`'s document (without the trailing newline).
std::string PlannedRunJson(const PlannedRun& p, const ModelSpec& model, const HardwareSpec& hw);

// ---- recommend (`trainsim recommend`) ---------------------------------------------------------

// `trainsim recommend`'s options as its flags name them.
struct RecommendRequest {
  double tokens = 0;  // required (> 0)
  std::optional<double> deadline_days, budget_usd, price_per_gpu_hour;
  std::string objective = "cost";  // cost | time | energy
  std::string dtype = "bf16";
  int gbs = 0;  // 0 = tried at 2, 4, 8, 16 M tokens per step
  int seq = 4096;
  std::vector<int> gpus;  // empty = 8, 16, ..., 16384
  int top = 10;
  int threads = 0;
  bool include_uncalibrated = false;
};
// The library's options for `r`, with the CLI's rules (errors name the option).
Result<RecommendOptions> MakeRecommendOptions(const RecommendRequest& r);

}  // namespace trainsim

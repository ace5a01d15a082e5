// CLI verbs: each adds its options to the app and runs with the parsed values.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "trainsim/infer.h"
#include "trainsim/infer_front_end.h"
#include "trainsim/trainsim.h"

namespace trainsim {
struct ValidationCase;
}

namespace trainsim::cli {

struct SimulateArgs {
  std::string model = "llama3-8b";
  std::string hardware = "h100_sxm_80gb";
  std::string strategy_file, megatron_args, hw_override;
  std::string megatron_script;       // a Megatron-LM launch script (--megatron-script)
  std::string megatron_script_args;  // its command-line arguments (--megatron-script-args)
  bool model_given = false;  // --model appeared (else a Megatron-LM input describes the model)
  std::map<std::string, std::string> strategy;  // schema key -> flag value (strategy_flags.h)
  bool no_overlap = false;                      // both DP overlaps off (a shorthand)
  std::string trace;                            // Chrome trace JSON file
  std::string timeline;                         // SVG Gantt file
  std::vector<std::string> slowdown;            // STAGE:FACTOR, repeatable
  bool json = false, detail = false;
  std::string deepspeed_config, torchtitan_config;  // framework files (framework_files.h)
  std::string llamafactory, trl_args;               // LLaMA-Factory YAML, TRL arguments JSON
  std::string accelerate_config;                    // Hugging Face Accelerate config YAML
  std::string framework;  // --framework: a framework profile's defaults for unstated settings
  bool AnyFrameworkFile() const {
    return !deepspeed_config.empty() || !torchtitan_config.empty() || !llamafactory.empty() ||
           !trl_args.empty() || !accelerate_config.empty();
  }
};
void AddSimulate(CLI::App& app, SimulateArgs& a);
int RunSimulate(const SimulateArgs& a);
// The inputs of one step (model, hardware, strategy and framework flags), for `simulate` and
// `plan`.
void AddSimulateInputs(CLI::App* c, SimulateArgs& a);
// The step the inputs describe: model, hardware, strategy (defaults applied) and its report
// with the assumed defaults and input notes; `detail` fills the per-layer table.
struct PreparedStep {
  ModelSpec model;
  HardwareSpec hw;
  Strategy strategy;
  StepReport report;
  StrategyKeys given;  // strategy keys the inputs gave
};
Result<PreparedStep> PrepareStep(const SimulateArgs& a, bool detail);

// `plan`: the whole run of a step (cmd_plan.cc, include/trainsim/plan.h).
struct PlanArgs {
  SimulateArgs sim;
  // The numeric options by name (PlanOptionNames: the flag without "--", '_' for '-') and
  // their flags, to tell given from not.
  std::map<std::string, double> values;
  std::map<std::string, CLI::Option*> given;
  bool search = false, compute_optimal = false;
};
void AddPlan(CLI::App& app, PlanArgs& a);
int RunPlan(const PlanArgs& a);

// `recommend`: hardware x GPU count x strategy under a deadline and a budget (cmd_recommend.cc).
struct RecommendArgs {
  std::string model = "llama3-8b", objective = "cost", dtype = "bf16";
  double tokens = 0, deadline_days = 0, budget_usd = 0, price = 0;
  int gbs = 0, seq = 4096, top = 10, threads = 0;
  std::vector<int> gpus;
  bool include_uncalibrated = false, json = false;
  std::map<std::string, CLI::Option*> given;
};
void AddRecommend(CLI::App& app, RecommendArgs& a);
int RunRecommend(const RecommendArgs& a);

struct ListArgs {
  std::string what;
  bool json = false;
};
void AddList(CLI::App& app, ListArgs& a);
int RunList(const ListArgs& a);

struct ValidateArgs {
  std::vector<std::string> files;
  bool json = false;
  std::string family;
  std::string svg;
  bool markdown = false;
  std::string explain;  // a case id: print its full step report instead of the table
};
void AddValidate(CLI::App& app, ValidateArgs& a);
int RunValidate(const ValidateArgs& a);

struct CalibrateArgs {
  std::vector<std::string> files;
  std::string hardware;
  std::string write_dir;                // data/hardware directory to update in place
  int folds = 0;                        // k-fold cross-validation instead of a fit
  bool loso = false;                    // leave-one-source-out instead of a fit
  bool ablate = false;                  // LOSO with each parameter frozen in turn
  std::vector<std::string> freeze;      // kept at their nominal values; empty: library default
  std::string write_uncertainty;        // with loso: write the uncertainty table here
  std::vector<std::string> band_cases;  // with write_uncertainty: cases scored, not fitted
  bool source_blind = false;            // with loso: also score each family read source-blind
  bool json = false;
};
void AddCalibrate(CLI::App& app, CalibrateArgs& a);
int RunCalibrate(const CalibrateArgs& a);
// The held-out modes of `calibrate` (cmd_calibrate_heldout.cc), on cases with nominal
// efficiencies: --leave-one-source-out (with --write-uncertainty) and --ablate.
int RunLeaveOneSourceOut(const CalibrateArgs& a, const std::vector<ValidationCase>& cases);
int RunAblate(const CalibrateArgs& a, const std::vector<ValidationCase>& cases);
// --freeze as given; the library's default list when absent; nothing for "none".
std::vector<std::string> FrozenParameters(const CalibrateArgs& a);

// `schema strategy|strategy-aliases|efficiency [--markdown]`: the input schemas (docs/INPUTS.md).
struct SchemaArgs {
  std::string table;
  bool markdown = false;
};
void AddSchema(CLI::App& app, SchemaArgs& a);
int RunSchema(const SchemaArgs& a);

// `infer`: serving latency and throughput (cmd_infer.cc, include/trainsim/infer.h).
struct InferArgs {
  std::string model = "llama3-8b";
  std::string hardware = "h100_sxm_80gb";
  std::string hw_override, draft_model, export_format;
  bool json = false;
  InferRequest req;  // the options every front-end shares (trainsim/infer_front_end.h)
};
void AddInfer(CLI::App& app, InferArgs& a);
int RunInfer(const InferArgs& a);
// The text report of `trainsim infer` (also printed by `validate --explain` for inference cases).
void PrintInferenceText(const InferenceReport& r);
int RunInferSearch(const InferArgs& a, const ModelSpec& m, const HardwareSpec& hw);

// `export --format F`: a strategy (simulate's inputs, or the best of --search) as a framework
// config or launch command (cmd_export.cc, include/trainsim/export.h, docs/EXPORT.md).
struct ExportArgs {
  SimulateArgs in;  // simulate's input flags
  std::string format, out, model_path, objective = "time";
  int gpus_per_node = 0;  // 0 = from the hardware (DefaultGpusPerNode)
  int threads = 0;
  bool search = false;
};
void AddExport(CLI::App& app, ExportArgs& a);
int RunExport(const ExportArgs& a);

}  // namespace trainsim::cli

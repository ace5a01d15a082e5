// trainsim command line: a thin client of the library (include/trainsim/).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "cli_numbers.h"
#include "cli_util.h"
#include "cmd_search.h"
#include "cmd_serve.h"
#include "commands.h"
#include "trainsim/version.h"

int main(int argc, char** argv) {
  CLI::App app{"trainsim: predicts step time, MFU and memory of LLM training on GPU clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(trainsim::TrainsimVersion()));
  app.set_help_all_flag("--help-all", "all subcommands' help");
  trainsim::cli::SimulateArgs sim;
  trainsim::cli::AddSimulate(app, sim);
  trainsim::cli::ListArgs list;
  trainsim::cli::AddList(app, list);
  trainsim::cli::ValidateArgs val;
  trainsim::cli::AddValidate(app, val);
  trainsim::cli::SearchArgs search;
  trainsim::cli::AddSearch(app, search);
  trainsim::cli::SweepArgs sweep;
  trainsim::cli::AddSweep(app, sweep);
  trainsim::cli::CalibrateArgs cal;
  trainsim::cli::AddCalibrate(app, cal);
  trainsim::cli::SchemaArgs schema;
  trainsim::cli::AddSchema(app, schema);
  trainsim::cli::InferArgs infer;
  trainsim::cli::AddInfer(app, infer);
  trainsim::cli::ExportArgs exp;
  trainsim::cli::AddExport(app, exp);
  trainsim::cli::ServeArgs serve;
  trainsim::cli::AddServe(app, serve);
  trainsim::cli::PlanArgs plan;
  trainsim::cli::AddPlan(app, plan);
  trainsim::cli::RecommendArgs recommend;
  trainsim::cli::AddRecommend(app, recommend);
  // Integer flags are decimal: CLI11 alone would read `--gpus 010` as octal 8.
  trainsim::cli::RequireDecimalIntegers(app);
  trainsim::cli::RequireFiniteFloats(app);  // `--rate nan` is an error, not the default
  trainsim::cli::RejectRepeatsAndEmpties(app);
  std::string known;
  bool is_command = false;
  for (const CLI::App* sub : app.get_subcommands({})) {
    known += (known.empty() ? "" : ", ") + sub->get_name();
    is_command = is_command || (argc > 1 && sub->get_name() == argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !is_command) {
    return trainsim::cli::Fail(trainsim::Status::Invalid(
        "", "unknown command '" + std::string(argv[1]) + "' (commands: " + known + ")"));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return trainsim::cli::Fail(trainsim::Status::Invalid("", e.what()));
  }
  int rc = 2;
  if (app.got_subcommand("simulate")) rc = trainsim::cli::RunSimulate(sim);
  if (app.got_subcommand("list")) rc = trainsim::cli::RunList(list);
  if (app.got_subcommand("validate")) rc = trainsim::cli::RunValidate(val);
  if (app.got_subcommand("search")) rc = trainsim::cli::RunSearch(search);
  if (app.got_subcommand("sweep")) rc = trainsim::cli::RunSweep(sweep);
  if (app.got_subcommand("calibrate")) rc = trainsim::cli::RunCalibrate(cal);
  if (app.got_subcommand("schema")) rc = trainsim::cli::RunSchema(schema);
  if (app.got_subcommand("infer")) rc = trainsim::cli::RunInfer(infer);
  if (app.got_subcommand("export")) rc = trainsim::cli::RunExport(exp);
  if (app.got_subcommand("serve")) rc = trainsim::cli::RunServe(serve);
  if (app.got_subcommand("plan")) rc = trainsim::cli::RunPlan(plan);
  if (app.got_subcommand("recommend")) rc = trainsim::cli::RunRecommend(recommend);
  return trainsim::cli::CheckStdout(rc);
}

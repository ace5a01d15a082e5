// trainsim command line: a thin client of the library (include/trainsim/).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "cli_numbers.h"
#include "cmd_search.h"
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
  // Integer flags are decimal: CLI11 alone would read `--gpus 010` as octal 8.
  trainsim::cli::RequireDecimalIntegers(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "trainsim: %s\n", e.what());
    return 2;
  }
  if (app.got_subcommand("simulate")) return trainsim::cli::RunSimulate(sim);
  if (app.got_subcommand("list")) return trainsim::cli::RunList(list);
  if (app.got_subcommand("validate")) return trainsim::cli::RunValidate(val);
  if (app.got_subcommand("search")) return trainsim::cli::RunSearch(search);
  if (app.got_subcommand("sweep")) return trainsim::cli::RunSweep(sweep);
  if (app.got_subcommand("calibrate")) return trainsim::cli::RunCalibrate(cal);
  if (app.got_subcommand("schema")) return trainsim::cli::RunSchema(schema);
  if (app.got_subcommand("infer")) return trainsim::cli::RunInfer(infer);
  return 2;
}

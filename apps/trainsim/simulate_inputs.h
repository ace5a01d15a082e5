// The inputs of a step as `simulate` reads them (model, hardware, strategy from flags, a strategy
// file, Megatron-LM arguments or a framework file), shared by the verbs that take the same flags
// (`export`).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>

#include "commands.h"
#include "megatron_input.h"
#include "trainsim/formats.h"
#include "trainsim/trainsim.h"

namespace trainsim::cli {

struct SimulateInputs {
  HardwareSpec hw;
  ModelSpec model;
  Strategy strategy;                // normalised
  StrategyKeys given;               // the strategy keys some input gave (the rest are defaults)
  FrameworkConfig fw;               // --deepspeed-config / --torchtitan-config
  std::optional<MegatronInput> mg;  // --from-megatron-args / --megatron-script
};

// simulate's input options: model, hardware, strategy file, Megatron-LM and framework inputs,
// the strategy flags.
void AddSimulateInputs(CLI::App* c, SimulateArgs& a);
// Reads them; warns on stderr about Megatron-LM arguments it did not use.
Result<SimulateInputs> ResolveSimulateInputs(const SimulateArgs& a);

}  // namespace trainsim::cli

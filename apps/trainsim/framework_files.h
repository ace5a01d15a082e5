// --deepspeed-config / --torchtitan-config on simulate: framework files read as a strategy
// (trainsim/formats.h), and the report's notes on what the input files carried but trainsim
// does not simulate.
#pragma once

#include "commands.h"
#include "trainsim/formats.h"
#include "trainsim/trainsim.h"

namespace trainsim::cli {

void AddFrameworkFlags(CLI::App* c, SimulateArgs& a);
// Reads the file a flag names. A torchtitan TOML that names a model replaces `model` when
// --model was not given, and contradicts it when it was.
Result<FrameworkConfig> ReadFrameworkFiles(const SimulateArgs& a, ModelSpec& model);
// The report's ignored list (framework file, strategy JSON) and the SimuMax hardware file's
// assumptions; one warning line on stderr when something was ignored.
void AddInputNotes(const SimulateArgs& a, const FrameworkConfig& fw, StepReport& r);

}  // namespace trainsim::cli

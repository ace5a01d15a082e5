// The Megatron-LM input of `simulate`: --from-megatron-args or --megatron-script, read into the
// strategy, the model (from the shape arguments unless --model is given) and the list of
// arguments trainsim did not use (warned once per kind on stderr).
#pragma once

#include <optional>
#include <string>

#include "trainsim/front_end.h"

namespace trainsim::cli {

using MegatronInput = MegatronJob;  // read by the library's front-end functions

// Reads the script file (run with `script_args` as its $1, $2, ...) or the argument string (the
// one given; std::nullopt for neither).
Result<std::optional<MegatronInput>> LoadMegatronInput(const std::string& args,
                                                       const std::string& script_file,
                                                       const std::string& script_args = "");

// Prints one warning line per kind of ignored argument (not modelled / unknown) on stderr.
void WarnIgnored(const MegatronReading& r);

}  // namespace trainsim::cli

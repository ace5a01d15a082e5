// Training-framework configuration files read as a strategy: a DeepSpeed config JSON (the file
// HF Trainer and LLaMA-Factory point to) and a torchtitan training TOML. Also what a SimuMax file
// carried that trainsim did not simulate. docs/INPUTS.md lists every key read.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/report.h"
#include "trainsim/status.h"
#include "trainsim/strategy.h"

namespace trainsim {

// What a framework file says about the strategy, as canonical settings for
// ApplyStrategySettings (trainsim/schema.h), applied before the command line's own flags.
struct FrameworkConfig {
  std::map<std::string, std::string> settings;  // canonical strategy key -> canonical text
  std::string model;                            // a model preset id the file names; "" = none
  std::vector<Assumption> assumed;  // values the file leaves to its framework ("auto", defaults)
  std::vector<Assumption> ignored;  // keys read but not simulated (field = key, value, why)
  // A global batch the file states besides the micro-batch and the accumulation steps
  // (DeepSpeed train_batch_size); checked against the final strategy by CheckFrameworkBatch.
  int stated_global_batch = 0;
  std::string stated_global_batch_key;
};

// DeepSpeed config JSON: zero_optimization (stage, offload_optimizer, offload_param,
// overlap_comm), train_micro_batch_size_per_gpu, gradient_accumulation_steps, train_batch_size,
// bf16 / fp16. "auto" values (filled by HF Trainer from TrainingArguments) are unknown: listed
// in `assumed`, not set. Contradictions and what trainsim cannot represent are errors naming
// the key.
Result<FrameworkConfig> ParseDeepSpeedConfig(std::string_view text, std::string_view origin);

// torchtitan training TOML: [parallelism], [training], [activation_checkpoint], [float8] /
// [quantize], [model] name + flavor (mapped to a preset; unknown flavors refused), [compile].
// `model_layers`: the layer count of the model simulated when the TOML names none (selective
// checkpointing every N-th block needs it); 0 = unknown. `model_given`: the user named the model
// (--model), so a flavor without a preset is listed as ignored instead of refused.
Result<FrameworkConfig> ParseTorchtitanToml(std::string_view text, std::string_view origin,
                                            int model_layers = 0, bool model_given = false);

// The stated global batch against the final strategy: DeepSpeed's rule train_batch_size =
// micro-batch x accumulation steps x dp. Ok when the file states none.
Status CheckFrameworkBatch(const FrameworkConfig& c, const Strategy& s);

// The keys of a strategy JSON that are accepted and not simulated (SimuMax keys whose alias is
// "ignored ..."), with their values; for the report's ignored list. Empty on bad JSON.
std::vector<Assumption> IgnoredStrategyJsonKeys(std::string_view text);

// What a SimuMax system file given as hardware had no counterpart for (spec/simumax_system.cc);
// empty for trainsim's own hardware files.
std::vector<Assumption> HardwareFileAssumptions(std::string_view text, std::string_view origin);

}  // namespace trainsim

// A strategy written in the configuration language of a training framework or launcher
// (`trainsim export`, docs/EXPORT.md): Megatron-LM arguments, a Megatron-Bridge recipe override
// list, a DeepSpeed config JSON, a torchtitan TOML, a LLaMA-Factory YAML, a torchrun command and
// a Slurm batch script. What a format cannot say is listed, never dropped silently.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/hardware.h"
#include "trainsim/model.h"
#include "trainsim/status.h"
#include "trainsim/strategy.h"

namespace trainsim {

enum class ExportFormat {
  kMegatron,
  kBridge,
  kDeepSpeed,
  kTorchtitan,
  kLlamaFactory,
  kTorchrun,
  kSlurm
};

// "megatron", "bridge", "deepspeed", "torchtitan", "llamafactory", "torchrun", "slurm".
std::string_view ExportFormatName(ExportFormat f);
std::span<const ExportFormat> ExportFormats();
// The error names the formats.
Result<ExportFormat> ParseExportFormat(std::string_view name);

// Where the job runs, for the launch formats.
struct ExportTarget {
  int gpus_per_node = 8;  // processes per node (torchrun --nproc-per-node, #SBATCH)
  // What LLaMA-Factory loads (model_name_or_path); "" = the model's name.
  std::string model_path;
};

// GPUs per node when none is given: the scale-up domain up to 8 (an NVL72 rack is 18 trays of
// 4 GPUs: NVIDIA GB200 NVL72 datasheet), and never more than the job's GPUs.
int DefaultGpusPerNode(const HardwareSpec& hw, int world_size);

struct ExportFile {
  std::string text;  // the file or command, ending in a newline
  // One line per setting of the strategy the format cannot express (also written as comment
  // lines into `text` for every format except the DeepSpeed JSON, which has no comments).
  std::vector<std::string> notes;
};

// Writes the normalised strategy `s` of model `m` in format `f`. The formats trainsim also reads
// (Megatron-LM arguments and the launch commands around them, DeepSpeed JSON, torchtitan TOML)
// read back to `s` except in the settings listed in `notes`.
// REQUIRES: ValidateStrategy(s, m) is ok. Errors: the GPU count does not fill whole nodes
// (field "gpus-per-node").
Result<ExportFile> ExportStrategy(ExportFormat f, const ModelSpec& m, const Strategy& s,
                                  const ExportTarget& target);

// The Megatron-LM model-shape arguments of `m` (--num-layers, --hidden-size, ... MoE and MLA),
// which ModelFromMegatronShape reads back to the same architecture; `notes` receives what
// Megatron-LM arguments cannot describe (sliding windows, ...).
std::string MegatronModelArgs(const ModelSpec& m, std::vector<std::string>& notes);

}  // namespace trainsim

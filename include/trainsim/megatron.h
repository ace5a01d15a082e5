// Megatron-LM inputs as users have them: an argument string or a launch script as published
// (backslash continuations, shell variables and arrays, a torchrun / python / deepspeed launcher
// in front of pretrain_gpt.py), read into a Strategy, a ModelSpec built from the model-shape
// arguments, and the list of arguments trainsim did not use (docs/INPUTS.md, "Megatron-LM").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/model.h"
#include "trainsim/report.h"
#include "trainsim/status.h"
#include "trainsim/strategy.h"

namespace trainsim {

// The pretrain command of a launch script.
struct MegatronCommand {
  std::vector<std::string> args;  // its arguments, as the shell passes them to Python
  std::string program;            // "pretrain_gpt.py" (the file name); "" for a bare argument list
  int launcher_gpus = 0;          // --nproc_per_node x --nnodes of the launcher; 0 = not given
  int line = 0;                   // 1-based line where the command starts
};

// Reads a launch script the way bash would for the constructs launch scripts use: comments,
// quotes, backslash continuations, VAR=value / export VAR=value, ${VAR} / $VAR / ${VAR:-x},
// $((arithmetic)), arrays (A=(...), A+=(...), "${A[@]}"), if/elif/else on [[ ]] / [ ] string
// and integer tests (file tests count as true), and finds the pretrain_*.py command after its
// launcher. Loops, case and functions are skipped; $(command) stays as its text. A text with no
// pretrain_*.py command is read as one bare argument list ("--tensor-model-parallel-size 2 ...").
// Errors name the line: unmatched quotes, a condition it cannot evaluate, two pretrain commands.
// `args` are the script's own command-line arguments ($1, ${10}, "$@", $#: PAI-Megatron-Patch's
// run_mcore_*.sh take model size, batch and parallel sizes this way); without them those expand
// to nothing, as bash would.
Result<MegatronCommand> ParseMegatronScript(std::string_view text,
                                            const std::vector<std::string>& args = {});

// A command line's words as the shell splits them ("dsw 8B 1 '8' \"a b\"" -> dsw, 8B, 1, 8, a b):
// the arguments a launch script is run with. No variables are expanded.
Result<std::vector<std::string>> SplitShellWords(std::string_view text);

// What a Megatron-LM argument list says beyond the strategy.
struct MegatronReading {
  // Model-shape arguments given (flag -> value, lists joined with ','), e.g. "--num-layers".
  std::map<std::string, std::string> shape;
  // Arguments read but not used: performance-relevant ones trainsim does not model, and unknown
  // ones (possibly misspelled: `why` names the nearest known argument). Harmless ones (paths,
  // logging, data, tokenizer, checkpointing, seeds...) are not listed.
  std::vector<IgnoredInput> ignored;
  // What the reader decided for arguments Megatron-LM acts on without a strategy row (CUDA
  // graphs: no per-kernel host launch cost), for the report's `assumed` list.
  std::vector<Assumption> assumed;
  int layers_per_virtual_stage = 0;  // --num-layers-per-virtual-pipeline-stage
  // --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split: the
  // embedding / the loss counted as a layer of the first / last chunk when Megatron-LM divides
  // the layers over the stages (ResolveMegatronModel writes that split as the layout).
  bool split_embedding = false;
  bool split_loss = false;
  bool gave_gbs = false;  // --global-batch-size appeared
};

// Reads Megatron-LM arguments onto `s` (Megatron-LM's defaults for sp, ZeRO and the DP overlaps
// first), without normalising. Without --global-batch-size the batch is Megatron-LM's: one
// micro-batch per DP rank. `given` receives the strategy keys set (see ApplyMegatronArgs).
Status ReadMegatronArgs(const std::vector<std::string>& args, Strategy& s, StrategyKeys* given,
                        MegatronReading& out);

// The model of a Megatron-LM job. With `preset` (the user's --model), the shape arguments must
// agree with it (the error names both values); without, the model is built from the shape
// arguments (the error names the missing required ones). Then resolves what needs the model:
// --num-layers-per-virtual-pipeline-stage into vpp, and --account-for-*-in-pipeline-split into
// the pipeline layout Megatron-LM builds with them. (--pipeline-model-parallel-layout is a
// Strategy field, checked against the model by ValidateStrategy.)
Result<ModelSpec> ResolveMegatronModel(const MegatronReading& r, const ModelSpec* preset,
                                       Strategy& s);

// A ModelSpec from Megatron-LM model-shape arguments alone (the `shape` map of a reading).
Result<ModelSpec> ModelFromMegatronShape(const std::map<std::string, std::string>& shape);

// A --pipeline-model-parallel-layout string ("Et|(tt|)*30mL"), read as Megatron-Core's
// PipelineParallelLayerLayout reads it (megatron/core/transformer/
// pipeline_parallel_layer_layout.py): commas dropped, "(...)*n" then "x*n" unrolled, stages split
// at '|', each character E (embedding), t (decoder layer), m (MTP layer) or L (loss). Stage i of
// the list is chunk i: virtual rank i / pp of pipeline rank i % pp, so the stage count must be a
// multiple of pp and vpp = stages / pp. The error names the flag and the rule Megatron applies.
struct PipelineLayout {
  std::vector<int> chunk_layers;  // decoder layers (t) per chunk, chunk j*pp + stage
  std::vector<int> chunk_mtp;     // MTP layers (m) per chunk
  int embedding_chunk = -1;       // the chunk holding E (-1: none), and L
  int loss_chunk = -1;
  int embeddings = 0, losses = 0;  // how many E and L
  char first = 0, last = 0;        // the first and last layer in layer order (0: none)
  bool decoder_after_mtp = false;  // a t after the first m (Megatron refuses it)
  int vpp = 1;
  int mtp_layers = 0;
  int layers() const;
};
// The layout string of a split: chunk i holds chunk_layers[i] decoder layers (chunk j*pp + stage,
// as PipelineChunkLayers gives them), the embedding in the first chunk, `mtp_layers` MTP
// modules and the loss in the last: {7, 8, 8, 8}, 0 -> "Et*7|t*8|t*8|t*8L".
std::string PipelineLayoutOfChunks(const std::vector<int>& chunk_layers, int mtp_layers);
// The grammar only: the stage list, whatever pp. Errors name `field`.
inline constexpr char kPipelineLayoutFlag[] = "--pipeline-model-parallel-layout";
Result<PipelineLayout> ParsePipelineLayoutStages(std::string_view layout,
                                                 std::string_view field = kPipelineLayoutFlag);
// The grammar and pp: vpp = stages / pp.
Result<PipelineLayout> ParsePipelineLayout(std::string_view layout, int pp,
                                           std::string_view field = kPipelineLayoutFlag);
// Megatron-Core's validate_layer_layout against the model: E first and L last in layer order,
// once each; as many t as num_layers and m as mtp_num_layers; no t after an m; every m in the
// last virtual chunk of its pipeline rank, all in one chunk. `field` names the flag or key.
Status CheckPipelineLayout(const PipelineLayout& l, int pp, int layers, int mtp_layers,
                           std::string_view field);

// The figures Megatron-LM's own log prints for this step, in its convention: "elapsed time per
// iteration (ms)" and "throughput per GPU (TFLOP/s/GPU)" = num_floating_point_operations(args,
// global batch) / (iteration time * 1e12 * world size), with the FLOP count of Megatron-LM's
// megatron/training/training.py (which counts 3x forward GEMMs and no recompute).
struct MegatronLogFigures {
  double elapsed_ms_per_iteration = 0;
  double tflops_per_gpu = 0;
  double flops_per_iteration = 0;
};
MegatronLogFigures MegatronConventionFigures(const StepReport& r, const ModelSpec& m,
                                             const Strategy& s);

}  // namespace trainsim

// CUDA graph capture as trainsim costs it, shared by the readers that see it (Megatron-LM
// --cuda-graph-impl / --enable-cuda-graph, SimuMax's enable_cuda_graph, torch.compile modes of
// Accelerate's dynamo_config and HF TrainingArguments).
#pragma once

#include <string>

#include "trainsim/strategy.h"

namespace trainsim::detail {

// Kernels replayed from a CUDA graph cost no host launch each, so the host issue floor
// (docs/MODEL.md, "Launch floor and host issue") is 0. Returns the `assumed` note for it:
// `source` names what asked for the graphs; `whole` is false for a partial capture scope, which
// is costed as if every kernel were captured. The graphs' static buffers are not counted.
inline std::string ApplyCudaGraphs(Strategy& s, const std::string& source, bool whole) {
  s.exec.host_issue_us_per_kernel = 0;
  return "CUDA graphs (" + source + "): no per-kernel host launch cost" +
         (whole ? "" : "; the partial scope is costed as if every kernel were captured") +
         "; the graphs' static buffers are not counted in memory";
}

// torch.compile replays CUDA graphs with backend "cudagraphs", and with Inductor in mode
// "reduce-overhead" or "max-autotune" (PyTorch torch.compile docs; "max-autotune-no-cudagraphs"
// does not). `backend` in upper case ("INDUCTOR", "CUDAGRAPHS"), `mode` as given.
inline bool CompileCapturesGraphs(const std::string& backend, const std::string& mode) {
  return backend == "CUDAGRAPHS" ||
         (backend == "INDUCTOR" && (mode == "reduce-overhead" || mode == "max-autotune"));
}

}  // namespace trainsim::detail

#include "memory/optimizer_states.h"

namespace trainsim::memory {
namespace {

// State bytes per parameter besides the weights, with states in fp32 (`wide`) or in the
// parameter dtype (pure 16-bit training keeps the states in bf16: torch.optim creates them
// like the parameter).
double StateBytes(OptimizerKind k, bool wide) {
  const double word = wide ? 4.0 : 2.0;
  switch (k) {
    case OptimizerKind::kAdam:
    case OptimizerKind::kPagedAdamW32bit:
      return 2 * word;  // m and v
    case OptimizerKind::kMuon:
      // Muon keeps one momentum on the hidden matrices and Adam's two states elsewhere; the
      // memory model counts Adam's two on every parameter (kept as before Muon's split).
      return 2 * word;
    case OptimizerKind::kAdamW8bit:
    case OptimizerKind::kPagedAdamW8bit:
      // m and v in 8 bits plus one fp32 absmax per 2048-value block each (bitsandbytes
      // block-wise quantisation, Dettmers et al. 2022, "8-bit Optimizers via Block-wise
      // Quantization", section 2).
      return 2 * (1.0 + 4.0 / 2048);
    case OptimizerKind::kAdafactor:
      // Factored second moment: a row and a column vector per matrix, (rows + cols) / (rows *
      // cols) of a full state, well under 1 % for hidden sizes >= 1024 (Shazeer and Stern
      // 2018); no first moment (HF Adafactor beta1=None).
      return 0.01 * word;
    case OptimizerKind::kSgd:
    case OptimizerKind::kLion:
      return word;  // one momentum (Chen et al. 2023, "Symbolic Discovery": Lion keeps m only)
  }
  return 2 * word;
}

bool Paged(OptimizerKind k) {
  return k == OptimizerKind::kPagedAdamW8bit || k == OptimizerKind::kPagedAdamW32bit;
}

}  // namespace

double OptimizerBytesPerParam(const Strategy& s) {
  const OptimizerKind k = s.exec.optimizer;
  // Mixed-precision Adam's bytes are a strategy field: 12 by default, fewer with Megatron-LM's
  // precision-aware optimizer (--exp-avg-dtype and friends).
  if (k == OptimizerKind::kAdam && s.master_weights) return s.optimizer_state_bytes;
  const double master = s.master_weights ? 4.0 : 0.0;
  return master + (Paged(k) ? 0.0 : StateBytes(k, s.master_weights));
}

double PagedOptimizerBytesPerParam(const Strategy& s) {
  return Paged(s.exec.optimizer) ? StateBytes(s.exec.optimizer, s.master_weights) : 0.0;
}

double OptimizerTrafficBytesPerParam(const Strategy& s) {
  const OptimizerKind k = s.exec.optimizer;
  const double states = StateBytes(k, s.master_weights);
  // Master: read and write the fp32 weight, write the 16-bit copy, and read the gradient as
  // fp32 (Megatron's main-gradient buffer; 16-bit gradients are copied into fp32 main
  // gradients before the step); else read and write the 16-bit weight and gradient.
  if (s.master_weights) return 4.0 + 2 * states + 4.0 + 4.0 + 2.0;
  return 2.0 + 2 * states + 2.0 + 2.0;
}

}  // namespace trainsim::memory

// Log figures of torchtitan and the Hugging Face Trainer for a predicted step
// (trainsim/log_conventions.h).
#include "trainsim/log_conventions.h"

namespace trainsim {

TorchtitanLogFigures TorchtitanConventionFigures(const StepReport& r, const ModelSpec& m,
                                                 const HardwareSpec& hw, const Strategy& s) {
  TorchtitanLogFigures f;
  // torchtitan subtracts the nn.Embedding parameters (the input table only).
  const double embedding = static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
  const double q = m.heads > 0 ? static_cast<double>(m.hidden / m.heads) : 0.0;
  f.flops_per_token = 6 * (r.params_active - embedding) + 12.0 * m.layers * m.heads * q * s.seq;
  f.tps = r.tokens_per_s_per_gpu;
  const double peak = hw.peak_bf16_flops > 0 ? hw.peak_bf16_flops : hw.peak_fp16_flops;
  if (peak > 0) f.mfu_percent = 100 * f.flops_per_token * f.tps / peak;
  return f;
}

HfTrainerLogFigures HfTrainerConventionFigures(const StepReport& r, const Strategy& s) {
  HfTrainerLogFigures f;
  if (r.step_time_s <= 0) return f;
  const double batch = s.gbs > 0 ? s.gbs : 1.0 * s.num_micro_batches() * s.mbs * s.dp();
  f.steps_per_second = 1.0 / r.step_time_s;
  f.samples_per_second = batch / r.step_time_s;
  return f;
}

}  // namespace trainsim

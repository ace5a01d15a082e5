// The figures other training tools print in their logs for a predicted step, each in that tool's
// own convention, so a user can compare a prediction with the log line they already have
// (Megatron-LM's are in trainsim/megatron.h).
#pragma once

#include "trainsim/hardware.h"
#include "trainsim/model.h"
#include "trainsim/report.h"
#include "trainsim/strategy.h"

namespace trainsim {

// torchtitan's metrics logger (torchtitan/train.py and models/utils.py): "tps" = tokens per
// second per GPU; "mfu" = 100 * num_flops_per_token * tps / peak, with num_flops_per_token =
// 6 * (parameters - embedding parameters) + 12 * layers * heads * (dim / heads) * seq (causal
// attention not halved, recompute not counted; MoE models count the active experts) and the
// peak its get_peak_flops hard-codes per device name: the dense bf16 peak, whatever the training
// precision (here the hardware preset's).
struct TorchtitanLogFigures {
  double tps = 0;
  double mfu_percent = 0;
  double flops_per_token = 0;
};
TorchtitanLogFigures TorchtitanConventionFigures(const StepReport& r, const ModelSpec& m,
                                                 const HardwareSpec& hw, const Strategy& s);

// Hugging Face Trainer's speed metrics (transformers trainer_utils.speed_metrics):
// train_samples_per_second = samples / runtime and train_steps_per_second = steps / runtime over
// the whole world, here for steady-state steps (the log's runtime also holds start-up, evaluation
// and checkpointing, which lower its figures).
struct HfTrainerLogFigures {
  double samples_per_second = 0;
  double steps_per_second = 0;
};
HfTrainerLogFigures HfTrainerConventionFigures(const StepReport& r, const Strategy& s);

}  // namespace trainsim

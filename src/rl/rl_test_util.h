// Shared fixtures of the RL tests (rl_test.cc, host_memory_test.cc).
#pragma once

#include "trainsim/strategy.h"

namespace trainsim::rl_test {

// GRPO on one 8-GPU node, FSDP (ZeRO-3) over its 8 GPUs: 64 prompts x 8 responses of 1024
// tokens (cap 4096 - 256), full recompute, the rollout at TP 1.
inline Strategy Grpo() {
  Strategy s;
  s.world_size = 8;
  s.stage = TrainStage::kGrpo;
  s.seq = 4096;
  s.gbs = 64;
  s.group_size = 8;
  s.response_len = 1024;
  s.rollout_tp = 1;
  s.zero = 3;
  s.fsdp = true;
  s.recompute = Recompute::kFull;
  return s;
}

}  // namespace trainsim::rl_test

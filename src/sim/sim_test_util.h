// Strategies shared by the step tests of src/sim.
#pragma once

#include "trainsim/strategy.h"

namespace trainsim::test {

// One GPU, one sequence of `seq` tokens per step, no parallelism and no ZeRO.
inline Strategy OneGpu(int seq) {
  Strategy s;
  s.world_size = 1;
  s.seq = seq;
  s.mbs = 1;
  s.gbs = 1;
  s.zero = 0;
  return s;
}

}  // namespace trainsim::test

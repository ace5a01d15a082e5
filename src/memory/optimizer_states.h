// Bytes per trained parameter of each optimizer: what stays resident (memory) and what one
// update reads and writes (the step is memory-bound; src/sim/optimizer.cc).
#pragma once

#include "trainsim/strategy.h"

namespace trainsim::memory {

// Optimizer states per trained parameter in HBM, including the fp32 master weight when
// Strategy::master_weights. Paged states (bitsandbytes paged optimizers) live in CUDA unified
// memory outside the PyTorch allocator and are paged out to host memory under pressure: 0 here
// (their bytes are PagedOptimizerBytesPerParam).
double OptimizerBytesPerParam(const Strategy& s);
// The paged states' bytes per trained parameter (0 for the other optimizers).
double PagedOptimizerBytesPerParam(const Strategy& s);
// HBM traffic of one element-wise update per trained parameter: the gradient read, every state
// read and written, the master weight read and written and the 16-bit weight written (30 bytes
// for mixed-precision AdamW).
double OptimizerTrafficBytesPerParam(const Strategy& s);

}  // namespace trainsim::memory

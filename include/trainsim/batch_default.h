// The default batch of a strategy that names neither a global batch nor a micro-batch count.
#pragma once

#include "trainsim/strategy.h"

namespace trainsim {

constexpr int kDefaultMicroBatchesPerDpRank = 8;

// When s.gbs and s.micro_batch_num are both 0: 8 micro-batches per DP rank, as
// s.gbs = 8 * mbs * dp; as s.micro_batch_num = 8 when that global batch overflows int. Does
// nothing otherwise. Safe on a strategy not validated yet (tp * pp * cp may overflow int or not
// divide world_size: dp is then taken as 1); ValidateStrategy still judges the result.
void ApplyDefaultBatch(Strategy& s);

}  // namespace trainsim

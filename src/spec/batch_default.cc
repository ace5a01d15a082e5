#include "trainsim/batch_default.h"

#include <limits>

namespace trainsim {

void ApplyDefaultBatch(Strategy& s) {
  if (s.gbs != 0 || s.micro_batch_num != 0) return;
  // In 64 bits: tp*pp*cp is not validated yet and may overflow int (s.dp() would divide by 0).
  // In double: the product of three unvalidated ints can pass even 2^63.
  const double par = static_cast<double>(s.tp) * s.pp * s.cp;
  const long long dp =
      par >= 1 && par <= s.world_size ? s.world_size / static_cast<long long>(par) : 1;
  const long long gbs = 1LL * kDefaultMicroBatchesPerDpRank * s.mbs * dp;
  if (gbs <= std::numeric_limits<int>::max())
    s.gbs = static_cast<int>(gbs);
  else
    s.micro_batch_num = kDefaultMicroBatchesPerDpRank;
}

}  // namespace trainsim

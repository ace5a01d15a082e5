#include "trainsim/batch_default.h"

#include <gtest/gtest.h>

#include <limits>

namespace trainsim {
namespace {

TEST(ApplyDefaultBatch, EightMicroBatchesPerDpRank) {
  Strategy s;
  s.gbs = 0;
  s.micro_batch_num = 0;
  s.world_size = 64;
  s.tp = 4;
  s.pp = 2;
  s.mbs = 2;
  ApplyDefaultBatch(s);
  EXPECT_EQ(s.gbs, 8 * 2 * 8);  // dp = 64 / 8
  EXPECT_EQ(s.micro_batch_num, 0);
}

TEST(ApplyDefaultBatch, LeavesAGivenBatchAlone) {
  Strategy s;
  s.gbs = 100;
  s.micro_batch_num = 0;
  ApplyDefaultBatch(s);
  EXPECT_EQ(s.gbs, 100);
  s.gbs = 0;
  s.micro_batch_num = 3;
  ApplyDefaultBatch(s);
  EXPECT_EQ(s.gbs, 0);
  EXPECT_EQ(s.micro_batch_num, 3);
}

TEST(ApplyDefaultBatch, UnvalidatedOrHugeStrategiesDoNotOverflow) {
  Strategy s;
  s.gbs = 0;
  s.micro_batch_num = 0;
  s.world_size = 8;
  s.tp = 65536;
  s.pp = 65536;  // tp*pp overflows int: dp taken as 1
  ApplyDefaultBatch(s);
  EXPECT_EQ(s.gbs, 8 * s.mbs);
  Strategy big;
  big.gbs = 0;
  big.micro_batch_num = 0;
  big.world_size = std::numeric_limits<int>::max();
  big.tp = big.pp = big.cp = 1;
  big.mbs = 16;  // 8 * 16 * dp overflows int: a micro-batch count instead
  ApplyDefaultBatch(big);
  EXPECT_EQ(big.gbs, 0);
  EXPECT_EQ(big.micro_batch_num, kDefaultMicroBatchesPerDpRank);
}

}  // namespace
}  // namespace trainsim

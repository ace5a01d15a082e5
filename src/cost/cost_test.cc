#include "cost/cost.h"

#include <gtest/gtest.h>

#include <cmath>

#include "trainsim/trainsim.h"

namespace trainsim::cost {
namespace {

using graph::Coll;

HardwareSpec Hw() {
  return LoadHardware("h100_sxm_80gb").value();
}

TEST(Placement, StridesOverTheDomain) {
  EXPECT_EQ(Place(8, 1, 8).local, 8);   // TP 8 inside a node
  EXPECT_EQ(Place(16, 8, 8).local, 1);  // DP over nodes when tp = 8
  EXPECT_EQ(Place(64, 1, 8).local, 8);  // 64 ranks, 8 per node
  EXPECT_EQ(Place(4, 2, 8).local, 4);   // stride 2: 4 members in one node
  EXPECT_EQ(Place(8, 2, 72).local, 8);  // NVL72 holds the whole group
}

TEST(Collectives, AllReduceFollowsBusBandwidthFormula) {
  // nccl-tests PERFORMANCE.md: busbw = algbw * 2(n-1)/n for all-reduce.
  HardwareSpec hw = Hw();
  hw.scaleup_latency_s = 0;
  hw.scaleup_hop_latency_s = 0;
  const double bytes = 1e9, n = 8;
  const double bus = hw.scaleup_bw_bytes_per_s * hw.eff.scaleup_bus;
  EXPECT_NEAR(CollectiveTime(hw, Coll::kAllReduce, Place(8, 1, 8), bytes),
              2 * (n - 1) / n * bytes / bus, 1e-12);
  EXPECT_NEAR(CollectiveTime(hw, Coll::kAllGather, Place(8, 1, 8), bytes),
              (n - 1) / n * bytes / bus, 1e-12);
}

TEST(Collectives, CrossingNodesUsesTheNics) {
  const HardwareSpec hw = Hw();
  const double intra = CollectiveTime(hw, Coll::kAllReduce, Place(8, 1, 8), 1e9);
  const double inter = CollectiveTime(hw, Coll::kAllReduce, Place(8, 8, 8), 1e9);
  EXPECT_GT(inter, 4 * intra);  // 50 GB/s NIC vs 450 GB/s NVLink
  EXPECT_EQ(CollectiveTime(hw, Coll::kAllReduce, Place(1, 1, 8), 1e9), 0);
}

TEST(Gemm, EfficiencyGrowsWithSizeAndStaysBelowMax) {
  const HardwareSpec hw = Hw();
  double last = 0;
  for (double d : {128.0, 512.0, 2048.0, 8192.0}) {
    const double e = GemmEfficiency(hw, d, d, d, 1);
    EXPECT_GT(e, last);
    EXPECT_LE(e, hw.eff.gemm_max);
    last = e;
  }
}

TEST(Gemm, Fp8IsFasterThanBf16OnHopper) {
  const HardwareSpec hw = Hw();
  EXPECT_LT(GemmTime(hw, DType::kFp8, 8192, 8192, 8192, 1),
            GemmTime(hw, DType::kBf16, 8192, 8192, 8192, 1));
}

}  // namespace
}  // namespace trainsim::cost

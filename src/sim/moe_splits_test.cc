// The MoE dispatchers' split-count exchange ("ep_splits", docs/MODEL.md "MoE layer"): before each
// forward dispatch the EP ranks all-gather one int64 token count per expert and the host reads
// them. Closed form: a ring all-gather of ep x experts x 8 bytes inside the scale-up domain,
// scaleup_latency + (ep-1) hops + (ep-1)/ep of the bytes at the bus bandwidth; no backward.
#include <gtest/gtest.h>

#include "trainsim/presets.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

const OpReport* FindOp(const StepReport& r, const std::string& name) {
  for (const LayerReport& l : r.layers)
    for (const OpReport& op : l.ops)
      if (op.name == name) return &op;
  return nullptr;
}

Strategy Ep8() {
  Strategy s;
  s.world_size = 8;
  s.ep = 8;
  s.seq = 4096;
  s.mbs = 1;
  s.gbs = 8;
  return s;
}

TEST(MoeSplits, AllGatherOfTheCountsBeforeTheDispatchForwardOnly) {
  const ModelSpec m = LoadModel("mixtral-8x7b").value();  // 8 experts
  const HardwareSpec hw = LoadHardwarePreset("h100_sxm_80gb").value();
  const StepReport r = Simulate(m, hw, Ep8(), SimOptions{true}).value();
  const OpReport* op = FindOp(r, "ep_splits");
  ASSERT_NE(op, nullptr);
  const double bytes = 8.0 * 8 * 8;  // ep ranks x experts x int64
  EXPECT_DOUBLE_EQ(op->bytes, bytes);
  const double bus = hw.scaleup_bw_bytes_per_s * hw.ScaleupBusEfficiency(8);
  const double expect = hw.scaleup_latency_s + 7 * hw.scaleup_hop_latency_s + 7.0 / 8 * bytes / bus;
  EXPECT_NEAR(op->fwd_s, expect, 1e-12);
  EXPECT_DOUBLE_EQ(op->bwd_s, 0);  // the backward reuses the splits
}

TEST(MoeSplits, NoExchangeWithoutExpertParallelism) {
  const ModelSpec m = LoadModel("mixtral-8x7b").value();
  const HardwareSpec hw = LoadHardwarePreset("h100_sxm_80gb").value();
  Strategy s = Ep8();
  s.ep = 1;
  const StepReport r = Simulate(m, hw, s, SimOptions{true}).value();
  EXPECT_EQ(FindOp(r, "ep_splits"), nullptr);
}

}  // namespace
}  // namespace trainsim

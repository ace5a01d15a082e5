// DeepSpeed ZeRO-2 reduce-scatters its partitioned gradients in every micro-batch's backward
// (deepspeed/runtime/engine.py, allreduce_gradients), where Megatron-LM's distributed optimizer
// and DeepSpeed ZeRO-1 reduce once per step.
#include <gtest/gtest.h>

#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

// Exposed DP time of Llama-3-8B fully fine-tuned on two 8-GPU H100 nodes (DP 16) with the
// collectives not overlapped, so that it is the collectives themselves: one reduce per
// micro-batch or per step, plus one parameter all-gather per step. gbs 16 is one micro-batch
// per rank, gbs 128 eight.
double ExposedDp(int zero, double deepspeed_buckets, int gbs) {
  Strategy s;
  s.world_size = 16;
  s.zero = zero;
  s.gbs = gbs;
  s.overlap_grad_reduce = false;
  s.overlap_param_gather = false;
  s.exec.zero_reduce_bucket_elems = deepspeed_buckets;
  auto r = Simulate(LoadModel("llama3-8b").value(), LoadHardware("h100_sxm_80gb").value(), s);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->time.exposed_dp_comm_s : 0;
}

TEST(Zero2Reduce, DeepSpeedReducesEveryMicroBatch) {
  const double one = ExposedDp(2, 5e8, 16), eight = ExposedDp(2, 5e8, 128);
  // eight = 8 reduce + gather, one = reduce + gather: both parts come out positive (were the
  // gather repeated too, the gather would come out 0).
  const double reduce = (eight - one) / 7, gather = one - reduce;
  EXPECT_GT(reduce, 0);
  EXPECT_GT(gather, 0.1 * reduce);
  // At one micro-batch a ZeRO-1 step does the same: one reduce-scatter and one gather.
  EXPECT_NEAR(ExposedDp(1, 5e8, 16), one, 1e-12);
}

TEST(Zero2Reduce, OncePerStepWithoutTheDeepSpeedZero2Engine) {
  // DeepSpeed ZeRO-1, and ZeRO-2 without DeepSpeed's buckets (not a DeepSpeed engine): the
  // exposed DP time does not grow with the micro-batches.
  EXPECT_DOUBLE_EQ(ExposedDp(1, 5e8, 128), ExposedDp(1, 5e8, 16));
  EXPECT_DOUBLE_EQ(ExposedDp(2, 0, 128), ExposedDp(2, 0, 16));
  // At one micro-batch per step the two engines do the same.
  EXPECT_DOUBLE_EQ(ExposedDp(2, 5e8, 16), ExposedDp(2, 0, 16));
}

}  // namespace
}  // namespace trainsim

// Passes (phase, shape, frozen weights) and parameter groups of the graph.
#include <gtest/gtest.h>

#include "graph/graph.h"
#include "layer_cost.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

const graph::Op* FindOp(const std::vector<graph::Op>& ops, const char* name) {
  for (const graph::Op& op : ops)
    if (std::string(op.name) == name) return &op;
  return nullptr;
}

double SumGroups(const ModelSpec& m, const Strategy& s, bool expert) {
  graph::StageLayers sl;
  for (int i = 0; i < m.layers; ++i) (m.layer_is_moe(i) ? sl.moe : sl.dense)++;
  sl.first = sl.last = true;
  double n = 0;
  for (const graph::ParamGroup& g : graph::StageParamGroups(m, s, sl))
    if (g.expert == expert) n += g.count;
  return n;
}

TEST(ParamGroups, OneStageHoldsTheWholeModel) {
  for (const char* id : {"llama3-8b", "mixtral-8x7b", "qwen3-30b-a3b"}) {
    const ModelSpec m = LoadModel(id).value();
    const Strategy s;  // tp 1, ep 1
    const double total = SumGroups(m, s, false) + SumGroups(m, s, true);
    EXPECT_NEAR(total / static_cast<double>(CountParams(m).total), 1.0, 1e-9) << id;
  }
}

TEST(ParamGroups, ExpertsSplitOverEpAndTrainedInTheTrainingPrecision) {
  const ModelSpec m = LoadModel("mixtral-8x7b").value();
  Strategy s;
  s.world_size = 8;
  const double one = SumGroups(m, s, true);
  s.ep = 8;
  EXPECT_NEAR(SumGroups(m, s, true) * 8 / one, 1.0, 1e-12);
  graph::StageLayers sl{2, 0, true, false};
  for (const graph::ParamGroup& g : graph::StageParamGroups(m, s, sl)) {
    EXPECT_TRUE(g.trainable);
    EXPECT_EQ(g.bytes_per_param, 2.0) << g.name;
  }
}

TEST(Pass, TrainingAttentionIsHalvedByTheCausalMask) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  Strategy s;
  s.seq = 4096;
  s.mbs = 2;
  std::vector<graph::Op> ops;
  graph::BuildLayer(m, s, false, ops);
  const graph::Op* a = FindOp(ops, "core_attention");
  ASSERT_NE(a, nullptr);
  const double dh = static_cast<double>(m.head_dim);
  EXPECT_DOUBLE_EQ(a->flops, 2.0 * 2 * 4096 * 4096 * m.heads * 2 * dh * 0.5);
}

TEST(Pass, DecodeAttendsTheWholeCacheAndSavesNothing) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  Strategy s;
  const double batch = 8, context = 2048;
  std::vector<graph::Op> ops;
  graph::BuildLayer(m, s, graph::Pass{graph::MakeDecodeShape(s, batch, context), false}, false,
                    ops);
  const graph::Op* a = FindOp(ops, "core_attention");
  ASSERT_NE(a, nullptr);
  const double dh = static_cast<double>(m.head_dim);
  // One query per sequence sees context - 1/2 keys on average (the new token is the last).
  EXPECT_DOUBLE_EQ(a->flops, 2.0 * batch * (context - 0.5) * m.heads * 2 * dh);
  // It reads every cached key and value (GQA: kv_heads of them, 16 bits).
  EXPECT_DOUBLE_EQ(a->bytes, batch * context * m.kv_heads * 2 * dh * 2);
  const graph::Op* qkv = FindOp(ops, "qkv_proj");
  ASSERT_NE(qkv, nullptr);
  EXPECT_DOUBLE_EQ(qkv->m, batch);
  for (const graph::Op& op : ops) EXPECT_EQ(op.saved_bytes + op.saved_extra_bytes, 0) << op.name;
}

TEST(Pass, PrefillOverACacheSeesTheCachedKeys) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  Strategy s;
  std::vector<graph::Op> ops;
  graph::BuildLayer(m, s, graph::Pass{graph::MakePrefillShape(s, 1, 1000, 3000), false}, false,
                    ops);
  const graph::Op* a = FindOp(ops, "core_attention");
  ASSERT_NE(a, nullptr);
  const double dh = static_cast<double>(m.head_dim);
  EXPECT_DOUBLE_EQ(a->flops, 2.0 * 1000 * (4000 - 500) * m.heads * 2 * dh);
}

TEST(Pass, FrozenWeightsSkipTheWeightGradient) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  Strategy s;
  const Placements pl = PlaceGroups(s, hw.scaleup_domain);
  std::vector<graph::Op> trained, frozen;
  graph::BuildLayer(m, s, false, trained);
  graph::BuildLayer(m, s, graph::Pass{graph::MakeShape(m, s), false}, false, frozen);
  const LayerCost t = CostOps(trained, hw, s, pl, false, nullptr);
  const LayerCost f = CostOps(frozen, hw, s, pl, false, nullptr);
  EXPECT_GT(t.wgrad_s, 0);
  EXPECT_EQ(f.wgrad_s, 0);
  EXPECT_EQ(f.wgrad_flops, 0);
  EXPECT_DOUBLE_EQ(f.fwd_compute_s, t.fwd_compute_s);
  EXPECT_NEAR(f.bwd_compute_s, t.bwd_compute_s - t.wgrad_s, 1e-12);
  EXPECT_DOUBLE_EQ(t.bwd_flops - f.bwd_flops, t.wgrad_flops);
}

// TE's TP overlap hides a TP collective behind the GEMM beside it, so never more than the
// layer's GEMM time: a short layer (512 tokens at tp 8) keeps most of its TP traffic exposed,
// a long one (2 x 8192 tokens) hides all but the (1 - comm_overlap) share.
TEST(Pass, TpOverlapHidesNoMoreThanTheGemms) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  const double keep = 1 - hw.eff.comm_overlap;
  auto tp_comm = [&](int seq, int mbs, bool overlap) {
    Strategy s;
    s.tp = 8;
    s.sp = true;
    s.seq = seq;
    s.mbs = mbs;
    s.tp_comm_overlap = overlap;
    std::vector<graph::Op> ops;
    graph::BuildLayer(m, s, false, ops);
    return CostOps(ops, hw, s, PlaceGroups(s, hw.scaleup_domain), false, nullptr).tp_comm_s;
  };
  const double short_off = tp_comm(512, 1, false), short_on = tp_comm(512, 1, true);
  EXPECT_LT(short_on, short_off);
  EXPECT_GT(short_on, 2 * keep * short_off);
  const double long_off = tp_comm(8192, 2, false), long_on = tp_comm(8192, 2, true);
  EXPECT_NEAR(long_on / long_off, keep, 1e-9);
}

}  // namespace
}  // namespace trainsim

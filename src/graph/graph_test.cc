// Per-op FLOPs and bytes of graph::BuildLayer / BuildEmbedding / BuildHead against hand formulas
// written from the published architectures (not from the parsed ModelSpec), for Llama-3-8B (GQA,
// SwiGLU), Mixtral-8x7B (top-2 MoE) and DeepSeek-V3 (MLA, top-8 MoE with a shared expert), at
// tp 1 and tp 8 (with sequence parallelism).
//
//   GEMM                 2·m·n·k per GEMM (per rank: the TP-split dimension divided by t)
//   QKV with GQA         2·T·h·(a + 2·g)·d / t
//   attention core       4·b·s²·(a·d/t)·0.5 (causal), MLA: 2·b·s²·(a/t)·(dqk + dv)·0.5
//   SwiGLU MLP           three h×f GEMMs: fc1 (gate and up, 2f/t wide) and fc2 (f/t)
//   MoE                  router 2·T_sp·h·E; grouped expert GEMMs over top_k·T tokens
//   MLA                  q_down 2·T·h·q_lora, q_up 2·T·q_lora·(a/t)·(dn + dr),
//                        kv_down 2·T·h·(kv_lora + dr), kv_up 2·T·kv_lora·(a/t)·(dn + dv)
// (T = b·s tokens, T_sp = T/t with sequence parallelism, a heads, g kv heads, d head dim.)
#include "graph/graph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trainsim/presets.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

using graph::Coll;
using graph::Op;
using graph::OpKind;

// The only calls into the graph builders. When BuildLayer gains an argument (a phase or shape),
// this is the one line to change.
std::vector<Op> Layer(const ModelSpec& m, const Strategy& s, bool moe) {
  std::vector<Op> ops;
  graph::BuildLayer(m, s, moe, ops);
  return ops;
}
std::vector<Op> Embedding(const ModelSpec& m, const Strategy& s) {
  std::vector<Op> ops;
  graph::BuildEmbedding(m, s, ops);
  return ops;
}
std::vector<Op> Head(const ModelSpec& m, const Strategy& s) {
  std::vector<Op> ops;
  graph::BuildHead(m, s, ops);
  return ops;
}

constexpr double kSeq = 4096;  // tokens per sequence; mbs 1, cp 1: T = 4096
constexpr double kT = kSeq;

Strategy Tp(int tp) {
  Strategy s;
  s.world_size = 8;
  s.tp = tp;
  s.sp = true;
  s.seq = static_cast<int>(kSeq);
  s.mbs = 1;
  s.gbs = 64;
  return s;
}

ModelSpec Preset(const char* id) {
  auto m = LoadModel(id);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? m.value() : ModelSpec{};
}

const Op* Find(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& op : ops)
    if (name == op.name) return &op;
  return nullptr;
}

// Asserts that `name` exists, is of `kind` and has forward FLOPs `flops`.
void ExpectFlops(const std::vector<Op>& ops, const char* name, OpKind kind, double flops) {
  const Op* op = Find(ops, name);
  ASSERT_NE(op, nullptr) << name;
  EXPECT_EQ(op->kind, kind) << name;
  EXPECT_DOUBLE_EQ(op->flops, flops) << name;
  if (kind == OpKind::kGemm) {  // the GEMM's own shape agrees with its FLOPs
    EXPECT_DOUBLE_EQ(2 * op->m * op->n * op->k * op->batch, flops) << name;
  }
}

void ExpectBytes(const std::vector<Op>& ops, const char* name, double bytes) {
  const Op* op = Find(ops, name);
  ASSERT_NE(op, nullptr) << name;
  EXPECT_EQ(op->kind, OpKind::kMemory) << name;
  EXPECT_DOUBLE_EQ(op->bytes, bytes) << name;
}

void ExpectComm(const std::vector<Op>& ops, const char* name, Coll fwd, Coll bwd, double bytes) {
  const Op* op = Find(ops, name);
  ASSERT_NE(op, nullptr) << name;
  EXPECT_EQ(op->kind, OpKind::kComm) << name;
  EXPECT_EQ(op->fwd_coll, fwd) << name;
  EXPECT_EQ(op->bwd_coll, bwd) << name;
  EXPECT_DOUBLE_EQ(op->comm_bytes, bytes) << name;
}

double SumFlops(const std::vector<Op>& ops) {
  double f = 0;
  for (const Op& op : ops) f += op.flops;
  return f;
}

// ---------------------------------------------------------------------------------------------
// Llama-3-8B: h 4096, 32 heads, 8 kv heads, head dim 128, SwiGLU ffn 14336, vocab 128256.

class LlamaGraphTest : public ::testing::TestWithParam<int> {};

TEST_P(LlamaGraphTest, DenseLayerOps) {
  const int t = GetParam();
  const ModelSpec m = Preset("llama3-8b");
  const auto ops = Layer(m, Tp(t), false);
  const double h = 4096, a = 32, g = 8, d = 128, f = 14336, tsp = kT / t;
  ExpectFlops(ops, "qkv_proj", OpKind::kGemm, 2 * kT * h * (a + 2 * g) * d / t);
  ExpectFlops(ops, "core_attention", OpKind::kAttention, 4 * 1 * kSeq * kSeq * (a * d / t) * 0.5);
  ExpectFlops(ops, "attn_out_proj", OpKind::kGemm, 2 * kT * (a * d / t) * h);
  ExpectFlops(ops, "fc1", OpKind::kGemm, 2 * kT * h * (2 * f / t));  // gate and up
  ExpectFlops(ops, "fc2", OpKind::kGemm, 2 * kT * (f / t) * h);
  // RMSNorm reads and writes T_sp·h bf16; bias-dropout-add reads two, writes one; SwiGLU reads
  // gate and up (2f) and writes f.
  ExpectBytes(ops, "attn_norm", 2 * tsp * h * 2);
  ExpectBytes(ops, "mlp_norm", 2 * tsp * h * 2);
  ExpectBytes(ops, "attn_residual", 3 * tsp * h * 2);
  ExpectBytes(ops, "mlp_residual", 3 * tsp * h * 2);
  ExpectBytes(ops, "mlp_act", 3 * (f / t) * kT * 2);
  // The layer's GEMM + attention FLOPs are the per-token formula times T, split over t.
  const double per_token = 2 * h * (a + 2 * g) * d + 2 * a * d * h + 3 * 2 * h * f;
  EXPECT_DOUBLE_EQ(SumFlops(ops), (kT * per_token + 2 * kSeq * kSeq * a * d) / t);
  if (t == 1) {
    for (const Op& op : ops) EXPECT_NE(op.kind, OpKind::kComm) << op.name;
  } else {
    // Sequence parallel: all-gather T·h bf16 into each column-parallel block, reduce-scatter out.
    for (const char* in : {"attn_tp_gather", "mlp_tp_gather"})
      ExpectComm(ops, in, Coll::kAllGather, Coll::kReduceScatter, kT * h * 2);
    for (const char* out : {"attn_tp_scatter", "mlp_tp_scatter"})
      ExpectComm(ops, out, Coll::kReduceScatter, Coll::kAllGather, kT * h * 2);
  }
}

TEST_P(LlamaGraphTest, EmbeddingAndHead) {
  const int t = GetParam();
  const ModelSpec m = Preset("llama3-8b");
  const double h = 4096, v = 128256, tsp = kT / t;
  const auto emb = Embedding(m, Tp(t));
  ExpectBytes(emb, "embedding", 2 * kT * h * 2);
  const auto head = Head(m, Tp(t));
  ExpectBytes(head, "final_norm", 2 * tsp * h * 2);
  ExpectFlops(head, "lm_head", OpKind::kGemm, 2 * kT * h * (v / t));
  // Unfused vocab-parallel cross-entropy: bf16 logits in, three fp32 passes.
  ExpectBytes(head, "cross_entropy", kT * (v / t) * (2 + 3 * 4));
  if (t > 1) {
    ExpectComm(emb, "embedding_tp_reduce", Coll::kReduceScatter, Coll::kNone, kT * h * 2);
    ExpectComm(head, "head_tp_gather", Coll::kAllGather, Coll::kReduceScatter, kT * h * 2);
    ExpectComm(head, "loss_tp_allreduce", Coll::kAllReduce, Coll::kNone, 3 * kT * 4);
  } else {
    EXPECT_EQ(Find(emb, "embedding_tp_reduce"), nullptr);
    EXPECT_EQ(Find(head, "loss_tp_allreduce"), nullptr);
  }
}

INSTANTIATE_TEST_SUITE_P(Tp, LlamaGraphTest, ::testing::Values(1, 8));

TEST(GraphTest, FusedCrossEntropyMovesOnePass) {
  const ModelSpec m = Preset("llama3-8b");
  Strategy s = Tp(1);
  s.fused_cross_entropy = true;
  ExpectBytes(Head(m, s), "cross_entropy", kT * 128256 * 2 * 2);
}

// ---------------------------------------------------------------------------------------------
// Mixtral-8x7B: Llama-like attention, 8 experts of ffn 14336, top-2.

class MixtralGraphTest : public ::testing::TestWithParam<int> {};

TEST_P(MixtralGraphTest, MoeLayerOps) {
  const int t = GetParam();
  const ModelSpec m = Preset("mixtral-8x7b");
  const auto ops = Layer(m, Tp(t), true);
  const double h = 4096, a = 32, g = 8, d = 128, f = 14336, experts = 8, k = 2, tsp = kT / t;
  ExpectFlops(ops, "qkv_proj", OpKind::kGemm, 2 * kT * h * (a + 2 * g) * d / t);
  ExpectFlops(ops, "core_attention", OpKind::kAttention, 4 * 1 * kSeq * kSeq * (a * d / t) * 0.5);
  // The router runs on this rank's sequence shard, replicated over TP.
  ExpectFlops(ops, "router", OpKind::kGemm, 2 * tsp * h * experts);
  // ep 1, etp = tp: all 8 experts local; each rank computes top_k·T token-expert pairs (the
  // ETP all-gather collects the whole sequence) on an f/t slice of every expert.
  ExpectFlops(ops, "expert_fc1", OpKind::kGemm, 2 * (k * kT) * h * (2 * f / t));
  ExpectFlops(ops, "expert_fc2", OpKind::kGemm, 2 * (k * kT) * (f / t) * h);
  const Op* fc1 = Find(ops, "expert_fc1");
  ASSERT_NE(fc1, nullptr);
  EXPECT_DOUBLE_EQ(fc1->batch, experts);  // one grouped GEMM problem per local expert
  EXPECT_DOUBLE_EQ(fc1->m, k * kT / experts);
  // Dispatch: top_k copies of the rank's T_sp tokens (bf16).
  const double dispatch = tsp * k * h * 2;
  ExpectBytes(ops, "permute", 2 * dispatch);
  ExpectBytes(ops, "unpermute", 2 * dispatch);
  ExpectBytes(ops, "expert_act", 3 * (f / t) * (k * kT) * 2);
  ExpectComm(ops, "ep_dispatch_a2a", Coll::kAllToAll, Coll::kAllToAll, dispatch);
  ExpectComm(ops, "ep_combine_a2a", Coll::kAllToAll, Coll::kAllToAll, dispatch);
  if (t > 1) {
    ExpectComm(ops, "etp_gather", Coll::kAllGather, Coll::kReduceScatter, dispatch * t);
    ExpectComm(ops, "etp_scatter", Coll::kReduceScatter, Coll::kAllGather, dispatch * t);
  } else {
    EXPECT_EQ(Find(ops, "etp_gather"), nullptr);
  }
  EXPECT_EQ(Find(ops, "fc1"), nullptr);  // no dense MLP in an MoE layer without shared experts
  // Megatron-Core's all-to-all dispatcher regroups the received rows by local expert
  // (sort_chunks_by_idxs) and back: one read and write of every received row each way.
  ExpectBytes(ops, "sort_chunks", 2 * (k * kT) * h * 2);
  ExpectBytes(ops, "unsort_chunks", 2 * (k * kT) * h * 2);
}

TEST(MoeDispatchTest, SortChunksOnlyForAllToAllWithSeveralLocalExperts) {
  const ModelSpec m = Preset("mixtral-8x7b");
  Strategy s = Tp(1);
  s.ep = 8;  // one local expert: the received rows are already grouped
  EXPECT_EQ(Find(Layer(m, s, true), "sort_chunks"), nullptr);
  s.ep = 4;  // two local experts
  EXPECT_NE(Find(Layer(m, s, true), "sort_chunks"), nullptr);
  s.moe_dedup_dispatch = true;  // flex / DeepEP: its one local permute groups by expert
  EXPECT_EQ(Find(Layer(m, s, true), "sort_chunks"), nullptr);
  EXPECT_EQ(Find(Layer(m, s, true), "unsort_chunks"), nullptr);
}

TEST(MoeDispatchTest, SplitCountsAreAllGatheredBeforeEitherDispatcher) {
  const ModelSpec m = Preset("mixtral-8x7b");
  Strategy s = Tp(1);
  s.ep = 4;
  for (const bool dedup : {false, true}) {
    s.moe_dedup_dispatch = dedup;  // MCore's all-to-all dispatcher, DeepEP's notify_dispatch
    const std::vector<Op> ops = Layer(m, s, true);
    // ep ranks x 8 experts x one int64 count; forward only, before the dispatch.
    ExpectComm(ops, "ep_splits", Coll::kAllGather, Coll::kNone, 4.0 * 8 * 8);
    size_t splits = ops.size(), dispatch = ops.size();
    for (size_t i = 0; i < ops.size(); ++i) {
      if (std::string(ops[i].name) == "ep_splits") splits = i;
      if (std::string(ops[i].name) == "ep_dispatch_a2a") dispatch = i;
    }
    EXPECT_LT(splits, dispatch);
  }
}

// Megatron-Core MoE arguments that change the work (one test each; they were once read as
// no-ops). Mixtral-8x7B at tp 1, ep 2: four local experts, R = top_k·T received rows.
TEST(MoeArgumentsTest, SequentialMlpWithoutGroupedGemm) {
  const ModelSpec m = Preset("mixtral-8x7b");
  Strategy s = Tp(1);
  s.ep = 2;
  const auto grouped = Layer(m, s, true);
  EXPECT_EQ(Find(grouped, "expert_cat"), nullptr);
  EXPECT_EQ(Find(grouped, "expert_fc1")->fwd_kernels, 1);
  s.moe_grouped_gemm = false;  // SequentialMLP: a GEMM set per local expert, then torch.cat
  const auto seq = Layer(m, s, true);
  const Op* fc1 = Find(seq, "expert_fc1");
  ASSERT_NE(fc1, nullptr);
  EXPECT_TRUE(fc1->sequential);
  EXPECT_EQ(fc1->fwd_kernels, 4);
  EXPECT_EQ(fc1->bwd_kernels, 8);
  EXPECT_EQ(Find(seq, "expert_act")->fwd_kernels, 4);
  ExpectBytes(seq, "expert_cat", 2 * (2 * kT) * 4096 * 2);
  EXPECT_DOUBLE_EQ(SumFlops(seq), SumFlops(grouped));  // same FLOPs, more launches
}

TEST(MoeArgumentsTest, UnfusedPermuteSortsAndScatterAdds) {
  const ModelSpec m = Preset("mixtral-8x7b");
  Strategy s = Tp(1);
  s.ep = 2;
  EXPECT_EQ(Find(Layer(m, s, true), "permute_sort"), nullptr);
  s.moe_permute_fusion = false;
  const auto ops = Layer(m, s, true);
  const double h = 4096, E = 8, R = 2 * kT;
  // argsort of the [experts, tokens] routing map (1 + 36 bytes an entry) and the probs' transpose.
  ExpectBytes(ops, "permute_sort", kT * E * (2 + 36 + 2 * 2));
  // bf16 probs: rows·h·(2 + 2) + T·h·2 + rows·h·2 + 2·T·h·2 + T·h·(2 + 2).
  ExpectBytes(ops, "unpermute_unfused", h * (R * 4 + kT * 2 + R * 2 + 2 * kT * 2 + kT * 4));
  EXPECT_EQ(Find(ops, "unpermute"), nullptr);
  s.moe_router_bytes = 8;  // fp64 probs promote the weighted rows and the scatter-add
  ExpectBytes(Layer(m, s, true), "unpermute_unfused",
              h * (R * 10 + kT * 8 + R * 8 + 2 * kT * 8 + kT * 10));
}

TEST(MoeArgumentsTest, RouterDtypeRunsTheGatingGemmInFp32OrFp64) {
  const ModelSpec m = Preset("mixtral-8x7b");
  Strategy s = Tp(1);
  EXPECT_FALSE(Find(Layer(m, s, true), "router")->fp32_gemm);
  EXPECT_EQ(Find(Layer(m, s, true), "router_cast"), nullptr);
  s.moe_router_bytes = 8;
  const auto ops = Layer(m, s, true);
  EXPECT_TRUE(Find(ops, "router")->fp32_gemm);
  ExpectBytes(ops, "router_cast", kT * 4096 * (2 + 8));
  ExpectBytes(ops, "router_scores", 6 * kT * 8 * 8);
}

TEST(MoeArgumentsTest, CapacityFactorDropsOrPads) {
  const ModelSpec m = Preset("mixtral-8x7b");
  Strategy s = Tp(1);
  s.ep = 2;
  const double base = Find(Layer(m, s, true), "expert_fc1")->flops;
  s.moe_capacity_factor = 1.5;  // balanced routing never exceeds a capacity above 1
  EXPECT_DOUBLE_EQ(Find(Layer(m, s, true), "expert_fc1")->flops, base);
  s.moe_capacity_factor = 0.5;  // half of each expert's balanced load dropped
  EXPECT_DOUBLE_EQ(Find(Layer(m, s, true), "expert_fc1")->flops, 0.5 * base);
  s.moe_capacity_factor = 1.5;
  s.moe_pad_to_capacity = true;  // every expert padded to 1.5x: GEMMs and all-to-all carry it
  const auto ops = Layer(m, s, true);
  EXPECT_DOUBLE_EQ(Find(ops, "expert_fc1")->flops, 1.5 * base);
  EXPECT_DOUBLE_EQ(Find(ops, "ep_dispatch_a2a")->comm_bytes, 1.5 * (2 * kT) * 4096 * 2);
}

TEST(MoeArgumentsTest, Fp8PaddingCopiesUnlessTheRouterPads) {
  const ModelSpec m = Preset("mixtral-8x7b");
  Strategy s = Tp(1);
  s.ep = 2;
  EXPECT_EQ(Find(Layer(m, s, true), "fp8_padding"), nullptr);  // bf16: no alignment
  s.dtype = DType::kFp8;
  const auto padded = Layer(m, s, true);
  ExpectBytes(padded, "fp8_padding", 2 * (2 * kT) * 4096 * 2);
  ExpectBytes(padded, "fp8_unpadding", 2 * (2 * kT) * 4096 * 2);
  s.moe_router_padding = true;  // the router pads each expert to 16 rows: 8 more on average
  const auto ops = Layer(m, s, true);
  EXPECT_EQ(Find(ops, "fp8_padding"), nullptr);
  EXPECT_DOUBLE_EQ(Find(ops, "expert_fc1")->m, (2 * kT + 4 * 8) / 4);
}

TEST_P(MixtralGraphTest, ExpertParallelSplitsExpertsNotTokens) {
  const int t = GetParam();
  const ModelSpec m = Preset("mixtral-8x7b");
  Strategy s = Tp(t);
  s.ep = 8 / t;  // tp·cp·dp = 8 ranks = ep·etp
  const auto ops = Layer(m, s, true);
  const double h = 4096, f = 14336, experts = 8, k = 2;
  // Every EP rank receives top_k·T_sp·etp tokens in balance, over experts/ep local experts.
  const double tokens = (kT / t) * k * t;
  ExpectFlops(ops, "expert_fc1", OpKind::kGemm, 2 * tokens * h * (2 * f / t));
  const Op* fc1 = Find(ops, "expert_fc1");
  ASSERT_NE(fc1, nullptr);
  EXPECT_DOUBLE_EQ(fc1->batch, experts / s.ep);
}

INSTANTIATE_TEST_SUITE_P(Tp, MixtralGraphTest, ::testing::Values(1, 8));

// ---------------------------------------------------------------------------------------------
// DeepSeek-V3: h 7168, 128 heads, MLA (q_lora 1536, kv_lora 512, nope 128, rope 64, v 128),
// 3 dense layers of ffn 18432, then 256 experts of 2048 (top-8) plus one shared expert of 2048.

class DeepSeekGraphTest : public ::testing::TestWithParam<int> {};

TEST_P(DeepSeekGraphTest, MlaProjectionsAndCore) {
  const int t = GetParam();
  const ModelSpec m = Preset("deepseek-v3");
  const auto ops = Layer(m, Tp(t), false);
  const double h = 7168, a = 128, ql = 1536, kvl = 512, dn = 128, dr = 64, dv = 128;
  // Down-projections are replicated over TP (full T after the SP all-gather); up-projections and
  // the output projection are split by heads.
  ExpectFlops(ops, "q_down_proj", OpKind::kGemm, 2 * kT * h * ql);
  ExpectFlops(ops, "q_up_proj", OpKind::kGemm, 2 * kT * ql * (a / t) * (dn + dr));
  ExpectFlops(ops, "kv_down_proj", OpKind::kGemm, 2 * kT * h * (kvl + dr));
  ExpectFlops(ops, "kv_up_proj", OpKind::kGemm, 2 * kT * kvl * (a / t) * (dn + dv));
  ExpectFlops(ops, "core_attention", OpKind::kAttention,
              2 * 1 * kSeq * kSeq * (a / t) * ((dn + dr) + dv) * 0.5);
  ExpectFlops(ops, "attn_out_proj", OpKind::kGemm, 2 * kT * (a / t) * dv * h);
  ExpectBytes(ops, "q_norm", 2 * kT * ql * 2);
  ExpectBytes(ops, "kv_norm", 2 * kT * kvl * 2);
  EXPECT_EQ(Find(ops, "qkv_proj"), nullptr);
  // Dense layers (the first three) use the 18432-wide SwiGLU MLP.
  ExpectFlops(ops, "fc1", OpKind::kGemm, 2 * kT * h * (2 * 18432.0 / t));
  ExpectFlops(ops, "fc2", OpKind::kGemm, 2 * kT * (18432.0 / t) * h);
}

TEST_P(DeepSeekGraphTest, MoeLayerWithSharedExpert) {
  const int t = GetParam();
  const ModelSpec m = Preset("deepseek-v3");
  const auto ops = Layer(m, Tp(t), true);
  const double h = 7168, experts = 256, k = 8, f = 2048, tsp = kT / t;
  ExpectFlops(ops, "router", OpKind::kGemm, 2 * tsp * h * experts);
  ExpectFlops(ops, "expert_fc1", OpKind::kGemm, 2 * (k * kT) * h * (2 * f / t));
  ExpectFlops(ops, "expert_fc2", OpKind::kGemm, 2 * (k * kT) * (f / t) * h);
  // One shared expert: a dense SwiGLU MLP of width 2048 over all T tokens, split over TP.
  ExpectFlops(ops, "shared_fc1", OpKind::kGemm, 2 * kT * h * (2 * f / t));
  ExpectFlops(ops, "shared_fc2", OpKind::kGemm, 2 * kT * (f / t) * h);
  ExpectBytes(ops, "shared_act", 3 * (f / t) * kT * 2);
  EXPECT_EQ(Find(ops, "fc1"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Tp, DeepSeekGraphTest, ::testing::Values(1, 8));

// ---------------------------------------------------------------------------------------------
// Invariants across tp: TP splits the work, it does not change it.

TEST(GraphTest, TensorParallelSplitsEveryTpShardedOpEvenly) {
  for (const char* id : {"llama3-8b", "mixtral-8x7b", "deepseek-v3"}) {
    const ModelSpec m = Preset(id);
    for (bool moe : {false, true}) {
      if (moe && !m.is_moe()) continue;
      const auto one = Layer(m, Tp(1), moe);
      const auto eight = Layer(m, Tp(8), moe);
      for (const Op& op : one) {
        if (op.kind != OpKind::kGemm && op.kind != OpKind::kAttention) continue;
        const Op* split = Find(eight, op.name);
        ASSERT_NE(split, nullptr) << id << " " << op.name;
        const std::string name = op.name;
        // Replicated over TP: MLA's down-projections (full tokens, full width). The router is
        // split too, by tokens (it runs on the 1/8 sequence shard at full width).
        const bool replicated = name == "q_down_proj" || name == "kv_down_proj";
        const double expected = replicated ? op.flops : op.flops / 8;
        EXPECT_DOUBLE_EQ(split->flops, expected) << id << " " << name;
      }
    }
  }
}

TEST(GraphTest, Fp8SavesGemmInputsInOneByte) {
  const ModelSpec m = Preset("llama3-8b");
  Strategy s = Tp(1);
  const Op* bf16 = nullptr;
  const auto ops_bf16 = Layer(m, s, false);
  bf16 = Find(ops_bf16, "fc2");
  s.dtype = DType::kFp8;
  const auto ops_fp8 = Layer(m, s, false);
  const Op* fp8 = Find(ops_fp8, "fc2");
  ASSERT_NE(bf16, nullptr);
  ASSERT_NE(fp8, nullptr);
  EXPECT_DOUBLE_EQ(bf16->saved_bytes, kT * 14336 * 2);
  EXPECT_DOUBLE_EQ(fp8->saved_bytes, kT * 14336 * 1);
  EXPECT_DOUBLE_EQ(fp8->flops, bf16->flops);  // FLOPs do not depend on the precision
}

}  // namespace
}  // namespace trainsim

// End-to-end properties of Simulate(): FLOP accounting, invariants, errors as values.
#include <gtest/gtest.h>

#include <cmath>

#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

HardwareSpec H100() {
  return LoadHardware("h100_sxm_80gb").value();
}

// torchtitan's Llama-3.1-8B FSDP rows: 8 GPUs, local batch 2 of 8192 tokens.
Strategy FsdpLlama8b() {
  Strategy s;
  s.world_size = 8;
  s.fsdp = true;
  s.zero = 3;
  s.mbs = 2;
  s.gbs = 16;
  s.seq = 8192;
  return s;
}

TEST(Flops, GptModelFlopsMatchNarayananWithoutRecompute) {
  // Narayanan et al. SC21 eq. 3 without the recompute pass: 72*B*s*l*h^2*(1 + s/(6h) +
  // V/(12*l*h)); trainsim halves attention for causality, so s/(12h) instead of s/(6h).
  const ModelSpec m = LoadModel("gpt3-175b").value();
  Strategy s;
  s.world_size = 1024;
  s.tp = 8;
  s.pp = 16;
  s.seq = 2048;
  s.gbs = 1536;
  auto r = Simulate(m, LoadHardware("a100_sxm_80gb").value(), s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double B = 1536, sq = 2048, l = 96, h = 12288, V = 51200;
  const double expected = 72 * B * sq * l * h * h * (1 + sq / (12 * h) + V / (12 * l * h));
  EXPECT_NEAR(r->model_flops / expected, 1.0, 0.003);
}

TEST(Flops, SixNTokensPlusAttention) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  Strategy s;
  s.world_size = 8;
  s.gbs = 32;
  auto r = Simulate(m, H100(), s);
  ASSERT_TRUE(r.ok());
  const ParamCounts pc = CountParams(m);
  const double tokens = 32.0 * 4096;
  // Input embedding is a lookup (no FLOPs); norms are not matmuls.
  const double n_matmul = pc.total - m.vocab * m.hidden - (2 * m.layers + 1) * m.hidden;
  const double attn = 6.0 * m.layers * 4096 * m.hidden;  // 3 x (2*s*h causal) per token-layer
  EXPECT_NEAR(r->model_flops / (tokens * (6 * n_matmul + attn)), 1.0, 1e-9);
}

TEST(Flops, FullRecomputeAddsOneForwardPass) {
  const ModelSpec m = LoadModel("llama3-70b").value();
  Strategy s;
  s.world_size = 64;
  s.tp = 8;
  s.pp = 2;
  s.gbs = 64;
  s.recompute = Recompute::kFull;
  auto r = Simulate(m, H100(), s);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->hardware_flops / r->model_flops, 4.0 / 3.0, 0.02);
  EXPECT_GT(r->hfu, r->mfu);
}

// torchtitan's per-op checkpointing reruns wk, wo and w3 of every block (the even aten.mm calls)
// and the element-wise work, and keeps q, v, w1, w2 and attention's output: between Megatron's
// selective (core attention only) and full recompute in time and in memory. For Llama-3-8B the
// three rerun GEMMs are 36.5 % of a block's GEMM FLOPs.
TEST(Flops, TorchtitanOpSacRerunsEverySecondMatmul) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  const Strategy s = FsdpLlama8b();
  auto run = [&](Recompute r, int modules) {
    Strategy t = s;
    t.recompute = r;
    t.recompute_modules = modules;
    auto rep = Simulate(m, H100(), t);
    EXPECT_TRUE(rep.ok()) << rep.status().message();
    return rep.value();
  };
  const StepReport sel = run(Recompute::kSelective, kRecomputeCoreAttn);
  const StepReport sac = run(Recompute::kSelective, kRecomputeOpSac);
  const StepReport full = run(Recompute::kFull, kRecomputeCoreAttn);
  const double h = 4096, kv = 1024, f = 14336;
  const double gemm = 2 * h * h + 2 * h * kv + 3 * h * f, rerun = h * kv + h * h + h * f;
  const double tokens = 16.0 * 8192, layers = 32;
  const double expected = 2 * rerun * tokens * layers;  // forward FLOPs of the rerun GEMMs
  EXPECT_NEAR((sac.hardware_flops - sac.model_flops) / expected, 1.0, 0.01);
  EXPECT_NEAR(rerun / gemm, 0.365, 0.005);
  EXPECT_GT(sac.step_time_s, sel.step_time_s);
  EXPECT_LT(sac.step_time_s, full.step_time_s);
  EXPECT_LT(sac.stages[0].activation_bytes, sel.stages[0].activation_bytes);
  EXPECT_GT(sac.stages[0].activation_bytes, full.stages[0].activation_bytes);
}

// Per-op SAC reruns the element-wise chains, so eager modules keep nothing more than fused ones:
// the eager RMSNorm's fp32 copy and SiLU's output were kept (11 GiB too much for torchtitan's
// eager Llama-3.1-8B row, mbs 2 x 8192), while without recompute they are kept.
TEST(Memory, OpSacKeepsNoEagerIntermediates) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  const Strategy s = FsdpLlama8b();
  auto act = [&](Recompute r, int modules, bool eager) {
    Strategy t = s;
    t.recompute = r;
    t.recompute_modules = modules;
    t.exec.eager_modules = eager;
    auto rep = Simulate(m, H100(), t);
    EXPECT_TRUE(rep.ok()) << rep.status().message();
    return rep->stages[0].activation_bytes;
  };
  // Only the final norm, outside the checkpointed blocks, keeps its fp32 copy (2 B more per
  // element of its bf16 input).
  EXPECT_DOUBLE_EQ(act(Recompute::kSelective, kRecomputeOpSac, true) -
                       act(Recompute::kSelective, kRecomputeOpSac, false),
                   2.0 * 2 * 8192 * 4096);
  EXPECT_GT(act(Recompute::kNone, kRecomputeCoreAttn, true),
            act(Recompute::kNone, kRecomputeCoreAttn, false));
  // Megatron's core_attn recompute drops attention's extras only; the eager chains' stay.
  EXPECT_GT(act(Recompute::kSelective, kRecomputeCoreAttn, true),
            act(Recompute::kSelective, kRecomputeCoreAttn, false));
}

TEST(Simulate, ReportsAreConsistent) {
  const ModelSpec m = LoadModel("llama3-70b").value();
  Strategy s;
  s.world_size = 1024;
  s.tp = 8;
  s.pp = 4;
  s.gbs = 1024;
  s.seq = 8192;
  auto r = Simulate(m, H100(), s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stages.size(), 4u);
  EXPECT_GT(r->mfu, 0.2);
  EXPECT_LT(r->mfu, 0.8);
  EXPECT_NEAR(r->tokens_per_s_per_gpu, 1024.0 * 8192 / r->step_time_s / 1024, 1e-6);
  double peak = 0;
  for (const StageReport& st : r->stages) {
    EXPECT_NEAR(st.peak_mem_bytes,
                st.weight_bytes + st.grad_bytes + st.optimizer_bytes + st.activation_bytes +
                    st.transient_bytes,
                1.0);
    peak = std::max(peak, st.peak_mem_bytes);
  }
  EXPECT_DOUBLE_EQ(r->peak_mem_bytes, peak);
}

// --optimizer-offload-fraction: the host steps its share while the GPU steps the rest, so a
// partial offload's optimizer phase lies between none and all, and its HBM states in proportion.
TEST(Simulate, PartialOptimizerOffloadSitsBetweenNoneAndAll) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  Strategy s;
  s.world_size = 8;
  s.gbs = 32;
  s.seq = 4096;
  auto run = [&](bool offload, double fraction) {
    s.offload_optimizer = offload;
    s.optimizer_offload_fraction = fraction;
    return Simulate(m, H100(), s).value();
  };
  const StepReport none = run(false, 1), half = run(true, 0.5), all = run(true, 1);
  EXPECT_LT(none.time.optimizer_s, half.time.optimizer_s);
  EXPECT_LT(half.time.optimizer_s, all.time.optimizer_s);
  EXPECT_NEAR(half.stages[0].optimizer_bytes, none.stages[0].optimizer_bytes / 2, 1.0);
  EXPECT_EQ(all.stages[0].optimizer_bytes, 0);
}

TEST(Simulate, MoreMicroBatchesShrinkTheBubbleFraction) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  Strategy s;
  s.world_size = 8;
  s.pp = 8;
  double last = 1;
  for (int gbs : {8, 16, 64}) {
    s.gbs = gbs;
    auto r = Simulate(m, H100(), s);
    ASSERT_TRUE(r.ok());
    const double frac = r->time.bubble_s / r->step_time_s;
    EXPECT_LT(frac, last);
    last = frac;
  }
}

TEST(Simulate, MoeWithExpertParallel) {
  const ModelSpec m = LoadModel("mixtral-8x7b").value();
  Strategy s;
  s.world_size = 64;
  s.tp = 2;
  s.pp = 2;
  s.ep = 8;
  s.etp = 1;
  s.gbs = 128;
  auto r = Simulate(m, H100(), s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->time.exposed_ep_comm_s, 0);
  EXPECT_NEAR(r->params_active / 1e9, 12.9, 0.1);
}

TEST(Simulate, ErrorsAreValuesNamingTheField) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  Strategy s;
  s.world_size = 8;
  s.tp = 3;
  s.gbs = 8;
  auto r = Simulate(m, H100(), s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("tp"), std::string::npos);
  s.tp = 1;
  s.dtype = DType::kFp8;
  auto a100 = Simulate(m, LoadHardware("a100_sxm_80gb").value(), s);
  ASSERT_FALSE(a100.ok());
  EXPECT_NE(a100.status().message().find("dtype"), std::string::npos);
}

TEST(Simulate, DoesNotFitIsAnOrdinaryOutcome) {
  const ModelSpec m = LoadModel("llama3-70b").value();
  Strategy s;
  s.world_size = 8;
  s.gbs = 8;
  s.zero = 0;
  auto r = Simulate(m, H100(), s);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->fits);
}

TEST(Simulate, CostIsIndependentOfClusterSize) {
  // One representative rank per stage: the report of 16,384 GPUs has as many stages as 64.
  const ModelSpec m = LoadModel("llama3.1-405b").value();
  Strategy s;
  s.tp = 8;
  s.pp = 16;
  s.vpp = 1;
  s.seq = 8192;
  s.uneven_pipeline = true;
  s.world_size = 16384;
  s.gbs = 2048;
  auto big = Simulate(m, H100(), s);
  ASSERT_TRUE(big.ok()) << big.status().message();
  EXPECT_EQ(big->stages.size(), 16u);
}

}  // namespace
}  // namespace trainsim

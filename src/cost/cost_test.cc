#include "cost/cost.h"

#include <gtest/gtest.h>

#include <cmath>

#include "finetune/method.h"
#include "graph/graph.h"
#include "layer_cost.h"
#include "trainsim/trainsim.h"

namespace trainsim::cost {
namespace {

using graph::Coll;

HardwareSpec Hw() {
  return LoadHardware("h100_sxm_80gb").value();
}

// TF32 GEMMs run on the tensor cores at the TF32 peak (half BF16's on A100: 156 vs 312 TFLOP/s)
// with BF16's shape efficiency; a GPU without TF32 tensor cores runs them on its fp32 units.
// TF32 keeps fp32 weights.
TEST(Gemm, Tf32RunsOnTheTensorCoresAtTheTf32Peak) {
  HardwareSpec hw = LoadHardware("a100_sxm_80gb").value();
  const double bf16 = GemmTime(hw, DType::kBf16, 4096, 4096, 4096, 1);
  const double tf32 = GemmTime(hw, DType::kTf32, 4096, 4096, 4096, 1);
  EXPECT_NEAR(tf32 / bf16, 312.0 / 156.0, 1e-9);
  EXPECT_LT(tf32, GemmTime(hw, DType::kFp32, 4096, 4096, 4096, 1) / 4);
  hw.peak_tf32_flops = 0;
  EXPECT_DOUBLE_EQ(GemmTime(hw, DType::kTf32, 4096, 4096, 4096, 1),
                   GemmTime(hw, DType::kFp32, 4096, 4096, 4096, 1));
  static_assert(WeightBytes(DType::kTf32) == 4.0 && WeightBytes(DType::kBf16) == 2.0);
}

// FlashAttention-2 without a fitted pair of its own runs at 0.62 of the fused kernel on Hopper
// (FA3 paper, Fig. 5-6) and at the fused kernel's speed on Ampere; a fitted pair wins.
TEST(Attention, Fa2WithoutAFitRunsAtItsMeasuredShareOfTheFusedKernel) {
  for (const char* id : {"h100_sxm_80gb", "aws_p5_48xlarge", "a100_sxm_80gb"}) {
    HardwareSpec hw = LoadHardware(id).value();
    hw.eff.attn_fa2_fwd = hw.eff.attn_fa2_bwd = -1;
    hw.eff.attn_fwd = 0.5;  // low enough that no cap binds
    const double fused = AttentionTime(hw, 1e12, 4096, 4096, 64, false, AttnKernel::kFused);
    const double fa2 = AttentionTime(hw, 1e12, 4096, 4096, 64, false, AttnKernel::kFa2);
    const double expected = std::string(id).rfind("a100", 0) == 0 ? 1.0 : 0.62;
    EXPECT_NEAR(fused / fa2, expected, 1e-9) << id;
    hw.eff.attn_fa2_fwd = 0.25;
    EXPECT_NEAR(AttentionTime(hw, 1e12, 4096, 4096, 64, false, AttnKernel::kFa2) / fused, 2.0, 1e-9)
        << id;
  }
}

// FlashAttention 1 (and the Triton flash kernels) run at half FlashAttention-2's speed
// (FA2 paper, arXiv 2307.08691), whether FA2's efficiency is fitted or derived.
TEST(Attention, Fa1RunsAtHalfFa2Speed) {
  for (const double fitted : {-1.0, 0.3}) {
    HardwareSpec hw = LoadHardware("a100_sxm_80gb").value();
    hw.eff.attn_fa2_fwd = hw.eff.attn_fa2_bwd = fitted;
    hw.eff.attn_fwd = hw.eff.attn_bwd = 0.5;
    for (const bool bwd : {false, true}) {
      const double fa2 = AttentionTime(hw, 1e12, 4096, 4096, 64, bwd, AttnKernel::kFa2);
      const double fa1 = AttentionTime(hw, 1e12, 4096, 4096, 64, bwd, AttnKernel::kFa1);
      EXPECT_NEAR(fa1 / fa2, 2.0, 1e-9) << fitted << " " << bwd;
    }
  }
}

TEST(Placement, StridesOverTheDomain) {
  EXPECT_EQ(Place(8, 1, 8).local, 8);   // TP 8 inside a node
  EXPECT_EQ(Place(16, 8, 8).local, 1);  // DP over nodes when tp = 8
  EXPECT_EQ(Place(64, 1, 8).local, 8);  // 64 ranks, 8 per node
  EXPECT_EQ(Place(4, 2, 8).local, 4);   // stride 2: 4 members in one node
  EXPECT_EQ(Place(8, 2, 72).local, 8);  // NVL72 holds the whole group
}

TEST(Collectives, PcieSwitchTreeSlowsDownWithTheGroupSize) {
  // A100-PCIe: measured bus efficiency per group size (SimuMax a100_pcie system file): rings over
  // 8 GPUs cross the CPU socket link and get ~0.39 of nominal, pairs ~0.63.
  const HardwareSpec pcie = LoadHardware("a100_pcie_80gb").value();
  EXPECT_EQ(pcie.scaleup_topology, "pcie");
  EXPECT_DOUBLE_EQ(pcie.ScaleupBusEfficiency(8), 0.386);
  EXPECT_DOUBLE_EQ(pcie.ScaleupBusEfficiency(2), 0.633);
  EXPECT_DOUBLE_EQ(pcie.ScaleupBusEfficiency(3), 0.646);  // between entries: the next larger
  const double bytes = 1e9;
  const double t8 = CollectiveTime(pcie, Coll::kAllReduce, Placement{8, 8}, bytes);
  const double t2 = CollectiveTime(pcie, Coll::kAllReduce, Placement{2, 2}, bytes);
  // Per byte of bus traffic, 8 GPUs are 0.633/0.386 = 1.64x slower than 2.
  EXPECT_NEAR((t8 / (2 * 7.0 / 8)) / (t2 / (2 * 1.0 / 2)), 0.633 / 0.386, 0.01);
  // NVLink presets keep one fitted bus efficiency for every group size.
  const HardwareSpec sxm = LoadHardware("a100_sxm_80gb").value();
  EXPECT_EQ(sxm.scaleup_topology, "nvlink");
  EXPECT_DOUBLE_EQ(sxm.ScaleupBusEfficiency(8), sxm.eff.scaleup_bus);
}

// On a PCIe switch tree a ring runs at its slowest hop: a group whose members sit far apart
// crosses the socket link like the 8-GPU ring and gets its measured efficiency (tp 2 x dp 4: the
// DP ring over GPUs 0, 2, 4, 6; tp 4 x dp 2: the DP pair 0, 4), while the contiguous TP group
// keeps its own. NVLink and fully connected meshes (MI300X xGMI) go by the member count.
TEST(Collectives, PcieRingsThatCrossTheSocketGetTheCrossSocketEfficiency) {
  const HardwareSpec pcie = LoadHardware("a100_pcie_80gb").value();
  Strategy s;
  s.world_size = 8;
  s.tp = 2;
  Placements pl = PlaceGroups(s, pcie.scaleup_domain);
  EXPECT_EQ(pl.tp.span, 2);
  EXPECT_EQ(pl.dp_cp.local, 4);
  EXPECT_EQ(pl.dp_cp.span, 7);
  EXPECT_EQ(ScaleupTableGroup(pcie, pl.tp), 2);
  EXPECT_EQ(ScaleupTableGroup(pcie, pl.dp_cp), 7);  // the table's 8-GPU entry
  const double bytes = 1e9;
  const double spread = CollectiveTime(pcie, Coll::kAllReduce, pl.dp_cp, bytes);
  const double adjacent = CollectiveTime(pcie, Coll::kAllReduce, Placement{4, 4}, bytes);
  const double lat = CollectiveLatency(pcie, Coll::kAllReduce, pl.dp_cp);
  EXPECT_NEAR((spread - lat) / (adjacent - lat), 0.646 / 0.386, 1e-9);
  s.tp = 4;
  pl = PlaceGroups(s, pcie.scaleup_domain);
  EXPECT_EQ(pl.dp_cp.span, 5);
  EXPECT_DOUBLE_EQ(pcie.ScaleupBusEfficiency(ScaleupTableGroup(pcie, pl.dp_cp)), 0.386);
  EXPECT_DOUBLE_EQ(pcie.ScaleupBusEfficiency(ScaleupTableGroup(pcie, pl.tp)), 0.646);
  // xGMI: a pair uses one link wherever its members sit.
  const HardwareSpec mi300 = LoadHardware("mi300x_192gb").value();
  EXPECT_EQ(ScaleupTableGroup(mi300, Placement{2, 2, 5}), 2);
}

// Every PCIe preset costs its collectives with a measured switch-tree table, never with the
// NVLink-fitted scaleup_bus of the efficiency block it borrows (bug: rtx4090_24gb had none).
TEST(Collectives, EveryPciePresetHasASwitchTreeTable) {
  int pcie = 0;
  for (const std::string& id : ListHardwarePresets()) {
    const HardwareSpec hw = LoadHardware(id).value();
    if (hw.scaleup_topology != "pcie") continue;
    ++pcie;
    EXPECT_FALSE(hw.scaleup_bus_by_group.empty()) << id;
    EXPECT_FALSE(hw.scaleup_a2a_by_group.empty()) << id;
  }
  EXPECT_GE(pcie, 10);
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

// A deduplicating MoE dispatcher (DeepEP) sends a token once per destination rank: top-8 over 8
// ranks reaches 8(1 - (7/8)^8) = 5.25 ranks, so the NVLink bytes are 5.25/8 of the k copies.
TEST(Collectives, DedupDispatchSendsOneCopyPerDestinationRank) {
  HardwareSpec hw = Hw();
  hw.scaleup_latency_s = hw.scaleup_hop_latency_s = 0;
  const double bytes = 8e9;  // 8 copies of 1e9 bytes of tokens
  const double plain = CollectiveTime(hw, Coll::kAllToAll, Place(8, 1, 8), bytes);
  const double dedup = CollectiveTime(hw, Coll::kAllToAll, Place(8, 1, 8), bytes, 8);
  const double reached = 1 - std::pow(7.0 / 8.0, 8);  // per remote rank
  EXPECT_NEAR(dedup / plain, (7 * reached * 1e9) / (7.0 / 8.0 * bytes), 1e-9);
  // top-1 has nothing to deduplicate.
  EXPECT_NEAR(CollectiveTime(hw, Coll::kAllToAll, Place(8, 1, 8), 1e9, 1),
              CollectiveTime(hw, Coll::kAllToAll, Place(8, 1, 8), 1e9), 1e-15);
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

// The low-precision speed-up is stated at the usual peak ratio (FP8 2x, FP4 4x BF16) and carried
// to another ratio by Amdahl's law: FP8 at an equal peak runs no faster than BF16 (was 1.5x), and
// FP4 on a GPU whose FP4 peak is 6x BF16 (Blackwell Ultra) runs at 2.54x, not the 2.2x of 4x.
TEST(Gemm, LowPrecisionSpeedupFollowsThePeakRatio) {
  HardwareSpec hw = Hw();
  hw.eff.fp4_gemm_speedup = 2.2;
  const double m = 8192, n = 8192, k = 8192;
  const double bf16 = GemmTime(hw, DType::kBf16, m, n, k, 1);
  auto matmul = [&](DType d, double cast_bytes) {  // the GEMM without its input cast
    return GemmTime(hw, d, m, n, k, 1) - MemoryTime(hw, cast_bytes * m * k);
  };
  hw.peak_fp8_flops = hw.peak_bf16_flops;
  EXPECT_NEAR(matmul(DType::kFp8, 3.0), bf16, 1e-9 * bf16);
  hw.peak_fp4_flops = 4 * hw.peak_bf16_flops;
  EXPECT_NEAR(bf16 / matmul(DType::kFp4, 2.5), 2.2, 1e-9);
  hw.peak_fp4_flops = 6 * hw.peak_bf16_flops;
  const double phi = (1 - 1 / 2.2) / (1 - 1 / 4.0);
  EXPECT_NEAR(bf16 / matmul(DType::kFp4, 2.5), 1 / ((1 - phi) + phi / 6), 1e-9);
}

// A batched GEMM op of `batch` (m x k) * (k x n) products and its FLOPs.
graph::Op GemmOp(double m, double k, double n, int batch) {
  graph::Op op;
  op.kind = graph::OpKind::kGemm;
  op.m = m;
  op.k = k;
  op.n = n;
  op.batch = batch;
  op.flops = 2 * m * k * n * batch;
  return op;
}

// --moe-router-dtype fp32/fp64 (graph::Op::fp32_gemm): a large gating GEMM is compute-bound at
// the fp32 peak x gemm_max; a small one is never faster than its bf16 shape.
TEST(MoeGemmCost, RouterInFp32IsComputeBoundAtTheFp32Peak) {
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  Strategy s;
  graph::Op op = GemmOp(65536, 4096, 128, 1);
  const Placements pl = PlaceGroups(s, hw.scaleup_domain);
  const double bf16 = CostOps({op}, hw, s, pl, false, nullptr).fwd_compute_s;
  op.fp32_gemm = true;
  const double fp32 = CostOps({op}, hw, s, pl, false, nullptr).fwd_compute_s;
  EXPECT_NEAR(fp32, op.flops / (hw.peak_fp32_flops * hw.eff.gemm_max), 1e-12);
  EXPECT_GT(fp32, bf16);
  op.m = 16;  // a few tokens: latency-bound either way
  op.flops = 2 * op.m * op.k * op.n;
  op.fp32_gemm = false;
  const double small_bf16 = CostOps({op}, hw, s, pl, false, nullptr).fwd_compute_s;
  op.fp32_gemm = true;
  EXPECT_GE(CostOps({op}, hw, s, pl, false, nullptr).fwd_compute_s, small_bf16);
}

// SequentialMLP (graph::Op::sequential): the batch runs as separate dense GEMMs, one launch each.
TEST(MoeGemmCost, SequentialExpertsSumTheirDenseGemms) {
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  Strategy s;
  graph::Op op = GemmOp(512, 2048, 1536, 16);
  op.sequential = true;
  op.fwd_kernels = 16;
  const Placements pl = PlaceGroups(s, hw.scaleup_domain);
  const double t = CostOps({op}, hw, s, pl, false, nullptr).fwd_compute_s;
  EXPECT_NEAR(t,
              std::max(16 * GemmTime(hw, DType::kBf16, 512, 1536, 2048, 1),
                       16 * hw.eff.kernel_floor_us * 1e-6),
              1e-12);
}

}  // namespace
}  // namespace trainsim::cost

namespace trainsim {
namespace {

// Whole-layer offload moves exactly what the recompute policy keeps, whatever the policy: an
// eager layer under core_attn recompute (attention's extras dropped, the eager chains' kept)
// keeps nothing in HBM, and its offloaded bytes are what it would have saved.
TEST(OffloadCost, OffloadsExactlyWhatThePolicyKeeps) {
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  const ModelSpec m = LoadModel("llama3-8b").value();
  Strategy s;
  s.world_size = 1;
  s.seq = 4096;
  s.recompute = Recompute::kSelective;
  s.recompute_modules = kRecomputeCoreAttn;
  s.exec.eager_modules = true;
  std::vector<graph::Op> ops;
  finetune::BuildTrainLayer(m, s, false, ops);
  const Placements pl = PlaceGroups(s, hw.scaleup_domain);
  const LayerCost kept = CostOps(ops, hw, s, pl, false, nullptr);
  s.exec.offload_activations = true;
  const LayerCost off = CostOps(ops, hw, s, pl, false, nullptr);
  EXPECT_GT(kept.saved_selective, 0);
  EXPECT_NEAR(off.saved_selective, 0, 1e-6 * kept.saved_selective);
  EXPECT_NEAR(off.offload_bytes, kept.saved_selective, 1e-6 * kept.saved_selective);
}

}  // namespace
}  // namespace trainsim

#include "cost/cost.h"

#include <algorithm>
#include <cmath>

#include "util/units.h"

namespace trainsim::cost {

using graph::Coll;

namespace {

// Model constants (docs/MODEL.md, "Cost model"). Hardware-specific, fitted quantities live in
// the preset's `efficiency` block (data/hardware/*.json); these are structural constants of the
// kernels being modelled and are the same for every GPU.

// Output tile of a tensor-core GEMM: 128x128 is the common CTA tile of the cuBLAS / CUTLASS
// BF16 and FP8 kernels on Ampere, Hopper and Blackwell; one tile per SM per wave.
// (docs/MODEL.md, GEMM.)
constexpr double kGemmTile = 128.0;
// SMs assumed when a spec gives none (H100 SXM5: 132; parsed presets always set sm_count).
constexpr double kDefaultSmCount = 132.0;
// Fused attention (FlashAttention-2/3, cuDNN) runs one thread block per tile of 128 queries of
// one (batch, head) pair, the usual query-block size for head_dim 128. (docs/MODEL.md, Attention.)
constexpr double kAttnQueryTile = 128.0;
// Short key ranges leave the softmax / PV pipeline underused: efficiency scales by
// sk / (sk + kAttnHalfKeys), halving at 256 keys. Provenance: a modelling choice made with the
// first cost model (commit 671a62e, documented in docs/MODEL.md, Attention); no measurement is
// recorded for it, and it is not calibrated per GPU. Candidate for the efficiency block.
constexpr double kAttnHalfKeys = 256.0;
// Upper bound on attention efficiency, so calibrated attn_fwd / attn_bwd times the shape factors
// never exceed peak (FlashAttention-3 reports about 75 % of H100 BF16 peak forward, so real
// kernels stay well below it). Provenance: docs/MODEL.md, Attention.
constexpr double kAttnMaxEfficiency = 0.95;
// FP32 without tensor cores when a preset lists no fp32 peak: 1/16 of the BF16 tensor peak
// (A100: 19.5 vs 312 TFLOP/s; H100 SXM: 67 vs 989).
constexpr double kFp32PeakFraction = 1.0 / 16.0;
// Quantizing the activation input of a low-precision GEMM is memory-bound: read it in BF16,
// write it in FP8 (3 bytes per element) or FP4 (2.5 bytes per element; scales ignored).
constexpr double kFp8CastBytes = units::kBf16Bytes + units::kFp8Bytes;
constexpr double kFp4CastBytes = units::kBf16Bytes + units::kFp4Bytes;

double SmCount(const HardwareSpec& hw) {
  return hw.sm_count > 0 ? hw.sm_count : kDefaultSmCount;
}

// A low-precision GEMM speed-up over BF16 (Efficiency::fp8_gemm_speedup, fp4_gemm_speedup) is
// stated for the usual peak ratio (FP8 2x BF16, FP4 4x: H100, B200, GB200 datasheets). Read as
// Amdahl's law, a part phi of the BF16 GEMM time runs at the low-precision peak ratio and the
// rest (prologue, epilogue, scale handling) does not: 1/s = (1 - phi) + phi/ratio. phi from the
// stated speed-up at the reference ratio carries it to another ratio: 1.0 at equal peaks
// (Gaudi 3, Trainium 1), 2.54 instead of 2.2 for FP4 on Blackwell Ultra (the B300 and GB300
// presets' dense FP4 peak is 6x their BF16 one, B200's and GB200's 4x).
double LowPrecisionSpeedup(double speedup, double ref_ratio, double ratio) {
  // Datasheet peaks round (H100: 1979 / 989 = 2.001, L40S 2.02, Trainium 2 1.95): within 3 % of
  // the reference ratio the stated speed-up stands.
  if (!(ratio > 0) || std::fabs(ratio / ref_ratio - 1) < 0.03) return speedup;
  const double phi = std::clamp((1 - 1 / speedup) / (1 - 1 / ref_ratio), 0.0, 1.0);
  return 1 / ((1 - phi) + phi / ratio);
}

}  // namespace

Placement Place(int size, int stride, int domain) {
  Placement p;
  p.size = size;
  if (stride >= domain) {
    p.local = 1;
  } else {
    p.local = std::max(1, std::min(size, domain / std::max(stride, 1)));
  }
  return p;
}

double GemmEfficiency(const HardwareSpec& hw, double m, double n, double k, double batch) {
  const Efficiency& e = hw.eff;
  auto dim = [&](double x) { return e.gemm_half_dim > 0 ? x / (x + e.gemm_half_dim) : 1.0; };
  // The main loop of a tile runs over k; its fixed prologue/epilogue costs about gemm_k_half
  // steps of it (measured, data/measurements/h100_small_kernels.csv).
  const double depth = k / (k + e.gemm_k_half);
  // Wave quantization over the SMs with 128x128 output tiles.
  const double tiles = std::ceil(m / kGemmTile) * std::ceil(n / kGemmTile) * batch;
  const double sms = SmCount(hw);
  const double waves = std::ceil(tiles / sms);
  const double util = tiles / (waves * sms);
  // Grouped GEMMs (one problem per local expert) lose to scheduling and uneven tiles:
  // SimuMax's B200 measurements give 0.30 grouped vs 0.49 dense on the same shapes.
  const double grouped = batch > 1 ? e.grouped_gemm : 1.0;
  return e.gemm_max * grouped * dim(m) * dim(n) * depth * util;
}

double GemmTime(const HardwareSpec& hw, DType d, double m, double n, double k, double batch) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const double flops = 2.0 * m * n * k * batch;
  const double base_peak = hw.peak_bf16_flops > 0 ? hw.peak_bf16_flops : hw.peak_fp16_flops;
  double t = flops / (base_peak * GemmEfficiency(hw, m, n, k, batch));
  // Low precision: the achieved speed-up over BF16 (peak ratio is 2x per halving) plus the
  // memory-bound quantization of the activation input (read 2 bytes, write 1).
  if ((d == DType::kFp8 || d == DType::kMxfp8) && hw.peak_fp8_flops > 0) {
    const double mx = hw.eff.mxfp8_gemm_speedup;
    const double speedup = d == DType::kMxfp8 && mx > 0 ? mx : hw.eff.fp8_gemm_speedup;
    t = t / LowPrecisionSpeedup(speedup, 2.0, hw.peak_fp8_flops / base_peak) +
        MemoryTime(hw, kFp8CastBytes * m * k * batch);
  } else if (d == DType::kFp4 && hw.peak_fp4_flops > 0) {
    t = t / LowPrecisionSpeedup(hw.eff.fp4_gemm_speedup, 4.0, hw.peak_fp4_flops / base_peak) +
        MemoryTime(hw, kFp4CastBytes * m * k * batch);
  } else if (d == DType::kTf32 && hw.peak_tf32_flops > 0) {
    // TF32 runs on the tensor cores at their TF32 peak (half the BF16 one on Ampere and Hopper,
    // datasheets); cuBLAS tiles it like BF16, so the same shape efficiency is assumed.
    t = flops / (hw.peak_tf32_flops * GemmEfficiency(hw, m, n, k, batch));
  } else if (d == DType::kFp32 || d == DType::kTf32) {
    t = flops / (hw.peak_fp32_flops > 0 ? hw.peak_fp32_flops : base_peak * kFp32PeakFraction);
  }
  return t;
}

double Fa2RelativeSpeed(const HardwareSpec& hw) {
  // Shah et al., "FlashAttention-3" (arXiv 2407.08608), Fig. 5-6, H100 SXM5, head dim 128,
  // sequence 512-16k: FlashAttention-2 runs at 0.59-0.63 of cuDNN's TFLOP/s in forward (causal
  // and not) and 0.61-0.70 in backward; 0.62 is the typical ratio. Blackwell datacenter parts:
  // FA2 runs its sm80 code there too; unmeasured, the Hopper ratio is assumed.
  constexpr double kMeasuredH100 = 0.62;
  constexpr std::string_view kFusedOutrunsFa2[] = {"h100", "h200", "h800",  "h20",  "gh200",
                                                   "b200", "b300", "gb200", "gb300"};
  for (std::string_view id : {std::string_view(hw.id), std::string_view(hw.instance_of),
                              std::string_view(hw.efficiency_from)})
    for (std::string_view prefix : kFusedOutrunsFa2)
      if (id.substr(0, prefix.size()) == prefix) return kMeasuredH100;
  return 1.0;
}

double AttentionTime(const HardwareSpec& hw, double flops, double sq, double sk, double batch_heads,
                     bool backward, AttnKernel kernel) {
  const double base_peak = hw.peak_bf16_flops > 0 ? hw.peak_bf16_flops : hw.peak_fp16_flops;
  // Short key ranges leave the softmax pipeline underused.
  const double shape = sk / (sk + kAttnHalfKeys);
  // (A head-dimension factor d/(d+32) was tried and did not improve the held-out error.)
  // One thread block per 128 queries of one (batch, head): wave quantization over the SMs
  // (SimuMax's B200 measurements: 16 heads reach 0.67x the efficiency of 64 heads at s 4096).
  const double blocks = std::ceil(sq / kAttnQueryTile) * batch_heads;
  const double sms = SmCount(hw);
  const double util = blocks / (std::ceil(blocks / sms) * sms);
  const Efficiency& e = hw.eff;
  double base = backward ? e.attn_bwd : e.attn_fwd;
  if (kernel == AttnKernel::kFa2 || kernel == AttnKernel::kFa1) {
    const double f = backward ? e.attn_fa2_bwd : e.attn_fa2_fwd;
    base = f > 0 ? f : base * Fa2RelativeSpeed(hw);
    if (kernel == AttnKernel::kFa1) base *= kFa1RelativeToFa2;
  } else if (kernel == AttnKernel::kFlex) {
    const double f = backward ? e.attn_flex_bwd : e.attn_flex_fwd;
    if (f > 0) base = f;
  }
  const double eff = std::min(kAttnMaxEfficiency, base * shape * util);
  return flops / (base_peak * eff);
}

double MemoryTime(const HardwareSpec& hw, double bytes) {
  return bytes / (hw.hbm_bw_bytes_per_s * hw.eff.mem);
}

double CollectiveLatency(const HardwareSpec& hw, Coll c, Placement p) {
  const int n = p.size;
  if (n <= 1 || c == Coll::kNone) return 0;
  // NCCL rings: all-gather and reduce-scatter take n-1 steps, all-reduce 2(n-1) (a
  // reduce-scatter then an all-gather); all-to-all and p2p pay the start-up only.
  const bool ring = c == Coll::kAllReduce || c == Coll::kAllGather || c == Coll::kReduceScatter;
  const double per_ring = c == Coll::kAllReduce ? 2.0 : 1.0;
  if (p.local >= n) {
    const double steps = ring ? per_ring * (n - 1) : 0.0;
    return hw.scaleup_latency_s + steps * hw.scaleup_hop_latency_s;
  }
  if (!ring) return hw.nic_latency_s;
  // A ring over N domains crosses a NIC N-1 times and stays inside a domain n-N times.
  const double nodes = std::ceil(static_cast<double>(n) / std::max(1, p.local));
  const double t_ring = hw.nic_latency_s + per_ring * ((nodes - 1) * hw.nic_hop_latency_s +
                                                       (n - nodes) * hw.scaleup_hop_latency_s);
  if (c != Coll::kAllReduce || hw.nic_tree_level_latency_s <= 0) return t_ring;
  // Small all-reduces across nodes use NCCL's tree: up and down a log2(N)-deep tree.
  const double t_tree = hw.nic_latency_s + 2 * std::log2(nodes) * hw.nic_tree_level_latency_s;
  return std::min(t_ring, t_tree);
}

int ScaleupTableGroup(const HardwareSpec& hw, Placement p) {
  const int members = std::max(1, std::min(p.size, p.local));
  // A PCIe switch tree (A100-PCIe servers: GPUs in pairs or fours under a switch, four per CPU
  // socket) runs a ring at the pace of its slowest hop, the highest switch or socket link it
  // crosses: its efficiency is the measured one of the contiguous group that spans the same
  // GPUs (a DP pair of GPUs 0 and 4 crosses the sockets like the 8-GPU ring). On NVLink and on
  // fully connected meshes (xGMI) each member has its own links: the member count decides.
  if (hw.scaleup_topology != "pcie" || members <= 1 || p.span <= members) return members;
  return std::min(p.span, std::max(hw.scaleup_domain, members));
}

double CollectiveTime(const HardwareSpec& hw, Coll c, Placement p, double bytes, double dedup_k) {
  const int n = p.size;
  if (n <= 1 || bytes <= 0 || c == Coll::kNone) return 0;
  const Efficiency& e = hw.eff;
  const bool intra = p.local >= n;
  // Bus efficiency of the scale-up part of the group: one figure on NVLink/NVSwitch, measured
  // per group size on PCIe switch trees (HardwareSpec::scaleup_bus_by_group).
  const int su_group = ScaleupTableGroup(hw, p);
  const double su_bw = hw.scaleup_bw_bytes_per_s * hw.ScaleupBusEfficiency(su_group);
  // NCCL rings across nodes use one NIC per local member: bus bandwidth = local * NIC
  // (nccl-tests PERFORMANCE.md), never above the scale-up fabric.
  const double bus = intra ? su_bw : std::min(su_bw, p.local * hw.nic_bw_bytes_per_s * e.nic_bus);
  const double alpha = CollectiveLatency(hw, c, p);
  const double frac = static_cast<double>(n - 1) / n;
  // Ring algorithms (NCCL): all-reduce = reduce-scatter + all-gather, each moving (n-1)/n of
  // the buffer.
  switch (c) {
    case Coll::kAllReduce:
      return 2 * frac * bytes / bus + alpha;
    case Coll::kAllGather:
    case Coll::kReduceScatter:
      return frac * bytes / bus + alpha;
    case Coll::kAllToAll: {
      const double su = hw.scaleup_bw_bytes_per_s * hw.ScaleupA2aEfficiency(su_group);
      const double local = std::min(n, std::max(1, p.local));
      double on = bytes * (local - 1) / n;
      double off = bytes * (n - local) / n;
      if (dedup_k > 1) {
        // A deduplicating dispatcher (DeepEP, Megatron's flex dispatcher) sends a token once per
        // destination rank (DeepEP's is_token_in_rank layout) and, across nodes, once per node:
        // k experts drawn over N equal parts reach N(1 - (1-1/N)^k) distinct parts on average
        // (uniform routing, drawn with replacement; balanced experts per rank).
        const double per_token = bytes / dedup_k;
        const double reached = 1 - std::pow(1 - 1.0 / n, dedup_k);
        on = std::min(on, per_token * (local - 1) * reached);
        if (!intra) {
          const double nodes = static_cast<double>(n) / local;
          const double remote = (nodes - 1) * (1 - std::pow(1 - 1 / nodes, dedup_k));
          off = std::min(off, per_token * remote);
        }
      }
      if (intra) return on / su + alpha;
      return std::max(on / su, off / (hw.nic_bw_bytes_per_s * e.a2a_nic)) + alpha;
    }
    case Coll::kP2P: {
      const double bw = intra ? su_bw : hw.nic_bw_bytes_per_s * e.nic_bus;
      return bytes / bw + alpha;
    }
    case Coll::kNone:
      break;
  }
  return 0;
}

}  // namespace trainsim::cost

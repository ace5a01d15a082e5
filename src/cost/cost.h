// Seconds for one op on one GPU type: roofline with shape-aware GEMM efficiency, bandwidth-bound
// memory ops, and alpha-beta collectives per network tier.
#pragma once

#include "graph/graph.h"
#include "trainsim/hardware.h"

namespace trainsim::cost {

// Where a communication group sits: `size` ranks, `local` of them inside one scale-up domain.
// `span`: the GPUs of that domain from its first to its last local member (rank stride x
// (local - 1) + 1, summed over the group's dimensions); 0 when unknown, taken as `local`
// (adjacent members). On a PCIe switch tree the span, not the member count, says which switch
// and socket links the ring crosses.
struct Placement {
  int size = 1;
  int local = 1;
  int span = 0;
};

// Members of a group of `size` ranks with rank stride `stride` that share one scale-up domain.
Placement Place(int size, int stride, int domain);

// The group size whose measured scale-up efficiency (scaleup_bus_by_group, scaleup_a2a_by_group)
// a collective over `p` gets: its local members, or on a PCIe switch tree the span of GPUs its
// ring crosses.
int ScaleupTableGroup(const HardwareSpec& hw, Placement p);

// GEMM efficiency (fraction of the dtype's peak) for batch x [m x k]*[k x n].
double GemmEfficiency(const HardwareSpec& hw, double m, double n, double k, double batch);
// Seconds for a GEMM of `flops` in dtype `d` (FP8/FP4 through the achieved speed-up factor).
double GemmTime(const HardwareSpec& hw, DType d, double m, double n, double k, double batch);
// The attention kernel family, which selects the efficiency pair of the preset.
enum class AttnKernel : uint8_t {
  kFused,  // TE / cuDNN / FlashAttention-3 fused attention (attn_fwd, attn_bwd)
  kFa2,    // FlashAttention-2 (attn_fa2_fwd, attn_fa2_bwd)
  kFlex,   // FlexAttention block-sparse Triton kernels (attn_flex_fwd, attn_flex_bwd)
  kFa1,    // FlashAttention 1 / Triton flash kernels: FA2's efficiency x kFa1RelativeToFa2
};
// FlashAttention-1's speed relative to FlashAttention-2 on the same GPU: Dao, "FlashAttention-2"
// (arXiv 2307.08691), abstract and Sec. 4.1 (A100, forward + backward, head dim 64/128, causal
// and not, 512-16k): FA2 is about 2x FlashAttention 1 (FA1 reaches 25-40 % of the A100's peak,
// FA2 50-73 %) and 1.3-2.5x the Triton implementation. No Hopper-specific path in either.
constexpr double kFa1RelativeToFa2 = 0.5;
// Eager PyTorch kernels per kernel of the cost graph (graph/graph.h, where it is measured).
constexpr double kEagerKernelsPerGraphKernel = graph::kEagerKernelsPerGraphKernel;
// FlashAttention-2's speed relative to the fused (cuDNN / TE) attention kernel on `hw`'s silicon:
// FA2 has no Hopper (wgmma, TMA) or datacenter-Blackwell (tcgen05) code path. 0.62 on H100,
// measured; the same assumed on B200/B300/GB200/GB300; 1 elsewhere (FA2 is the native kernel).
double Fa2RelativeSpeed(const HardwareSpec& hw);
// Flash attention over `batch_heads` (batch x heads) of sq queries x sk keys (sk: the kernel's
// key loop, twice the mean keys per query; see graph.cc core_attention).
double AttentionTime(const HardwareSpec& hw, double flops, double sq, double sk, double batch_heads,
                     bool backward, AttnKernel kernel);
double MemoryTime(const HardwareSpec& hw, double bytes);
// Seconds for one collective over `bytes` (the full buffer; per-rank shard = bytes/size for
// all-gather and reduce-scatter, the send buffer for all-to-all and p2p).
// `dedup_k` > 1: the all-to-all buffer holds k copies of each token (MoE top-k) and the dispatcher
// sends a token once per destination rank inside a node and once per destination node across
// nodes (DeepEP / hierarchical all-to-all).
double CollectiveTime(const HardwareSpec& hw, graph::Coll c, Placement p, double bytes,
                      double dedup_k = 1);
// The latency part of CollectiveTime: a start-up plus a cost per ring step, growing with the
// group (docs/MODEL.md, "Collective latency"; fitted to nccl-tests in tools/fit_nccl_latency.py).
double CollectiveLatency(const HardwareSpec& hw, graph::Coll c, Placement p);

}  // namespace trainsim::cost

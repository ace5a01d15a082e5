// Strategy: how one training step is laid over the GPUs (Megatron-LM / torchtitan semantics).
#pragma once

#include <string>
#include <string_view>

#include "trainsim/execution.h"
#include "trainsim/hardware.h"
#include "trainsim/status.h"

namespace trainsim {

struct ModelSpec;

enum class Recompute { kNone, kSelective, kFull };

// Modules recomputed by Recompute::kSelective (Megatron-LM --recompute-modules names).
enum RecomputeModule : int {
  kRecomputeCoreAttn = 1,       // core_attn: attention scores/softmax (the default)
  kRecomputeLayerNorm = 2,      // layernorm: norm outputs feeding QKV / FC1
  kRecomputeMlaUpProj = 4,      // mla_up_proj: MLA q/kv up-projections (q, k, v not kept)
  kRecomputeMlp = 8,            // mlp: dense MLP (activation and FC2 input)
  kRecomputeMoeAct = 16,        // moe_act: expert activation function
  kRecomputeMoe = 32,           // moe: the whole routed-expert block
  kRecomputeSharedExperts = 64  // shared_experts
};
// Parses "core_attn,layernorm,..." into a RecomputeModule mask; the error names the module.
Result<int> ParseRecomputeModules(std::string_view list);
// kZeroBubbleH1: ZB-H1 of Qi et al. 2023 (backward split into B and W, 1F1B memory);
// kDualPipe: DeepSeek-V3's bidirectional schedule (two chunks per rank, two model copies).
// Both have closed forms in Simulate and are simulated event by event (trainsim/timeline.h).
enum class PipelineSchedule { k1F1B, kInterleaved, kGPipe, kZeroBubbleH1, kDualPipe };

// How ranks are laid over the GPUs, innermost first (Megatron-Core `order`); the innermost groups
// get the scale-up domain (NVLink / NVL72).
enum class RankOrder { kTpCpDpPp, kTpDpCpPp, kTpCpPpDp, kTpPpCpDp };
std::string_view RankOrderName(RankOrder o);  // "tp-cp-dp-pp", ...
Result<RankOrder> ParseRankOrder(std::string_view s);

struct Strategy {
  int world_size = 8;
  int tp = 1;               // tensor parallel
  int pp = 1;               // pipeline parallel
  int vpp = 1;              // virtual pipeline chunks per stage (interleaving); 1 = none
  int cp = 1;               // context parallel
  int ep = 1;               // expert parallel
  int etp = 0;              // expert tensor parallel; 0 = same as tp
  bool sp = true;           // sequence parallel (meaningful when tp > 1)
  int seq = 4096;           // sequence length in tokens
  int mbs = 1;              // micro-batch size in sequences
  int gbs = 0;              // global batch in sequences; 0 = derive from micro_batch_num
  int micro_batch_num = 0;  // micro-batches per step per DP rank; 0 = derive from gbs
  int zero = 1;             // ZeRO stage 0-3 over the DP group (1 = Megatron distributed optimizer)
  bool fsdp = false;        // FSDP / Megatron-FSDP (parameter sharding, implies zero 3)
  Recompute recompute = Recompute::kNone;
  int recompute_layers = -1;                   // with kFull: layers per stage recomputed; -1 = all
  int recompute_modules = kRecomputeCoreAttn;  // with kSelective: RecomputeModule mask
  DType dtype = DType::kBf16;      // training GEMM precision (kFp8, kMxfp8, kFp4 for low precision)
  bool main_grad_fp32 = true;      // fp32 gradient buffers (Megatron default for bf16)
  bool offload_optimizer = false;  // optimizer states in host memory, Adam step on the CPU
  bool overlap_grad_reduce = true;   // DP gradient reduce overlapped with backward
  bool overlap_param_gather = true;  // ZeRO parameter all-gather overlapped with forward
  bool tp_comm_overlap = false;      // TP collectives overlapped with GEMMs (TE userbuffers)
  // Fraction of the EP all-to-all hidden behind other micro-batches' compute (Megatron-LM
  // --overlap-moe-expert-parallel-comm / shared-expert overlap); 0 = fully exposed.
  double ep_comm_overlap = 0;
  // MoE dispatch sends each token once per destination node and fans out over the scale-up
  // fabric (DeepEP, Megatron's "flex" dispatcher) instead of once per selected expert.
  bool moe_dedup_dispatch = false;
  bool flash_attention = true;
  bool fa2_attention = false;  // FlashAttention-2 kernels instead of TE/cuDNN fused attention
  bool cp_a2a = false;         // context parallel via all-to-all (Ulysses) instead of ring p2p
  bool fused_cross_entropy = false;  // TE fused cross-entropy: no fp32 logits copy
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  RankOrder order = RankOrder::kTpCpDpPp;  // Megatron-LM's default tp-cp-ep-dp-pp
  // Layers not divisible by pp*vpp: balance them over the virtual chunks, counting the
  // embedding and the loss (and MTP modules) as one layer each, as Megatron-LM's
  // --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split do.
  bool uneven_pipeline = false;
  Execution exec;  // host issue rate and optimizer (trainsim/execution.h)

  int dp() const { return world_size / (tp * pp * cp); }
  int expert_tp() const { return etp > 0 ? etp : tp; }
  int expert_dp() const { return world_size / (pp * ep * expert_tp()); }
  int num_micro_batches() const {
    return micro_batch_num > 0 ? micro_batch_num : gbs / (mbs * dp());
  }
};

// Checks the strategy against the model: divisibility and ranges. The message names the field
// and the rule, e.g. "tp: num_attention_heads (32) must be divisible by tp (3)".
Status ValidateStrategy(const Strategy& s, const ModelSpec& m);

// Parses a SimuMax strategy JSON (its field names) plus trainsim's extensions (cp_size, zero 2/3,
// fsdp, global_batch_size, offload and overlap switches). Unknown keys are errors.
Result<Strategy> ParseStrategyJson(std::string_view text, std::string_view origin);

// Reads a Megatron-LM command line ("--tensor-model-parallel-size 8 --pipeline-... ").
Result<Strategy> ParseMegatronArgs(std::string_view args, Strategy base);

}  // namespace trainsim

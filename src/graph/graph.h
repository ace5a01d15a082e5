// The work of one rank for one micro-batch: the ops of each distinct layer kind and of the
// first/last stage extras, with shapes, FLOPs, bytes, collectives and saved activations.
#pragma once

#include <cstdint>
#include <vector>

#include "trainsim/model.h"
#include "trainsim/strategy.h"

namespace trainsim::graph {

enum class OpKind : uint8_t { kGemm, kAttention, kMemory, kComm };
enum class Group : uint8_t { kTp, kCp, kEp, kEtp, kDp, kEdp, kPp };
enum class Coll : uint8_t { kNone, kAllReduce, kAllGather, kReduceScatter, kAllToAll, kP2P };

// Eager PyTorch kernels per kernel of the cost graph: a 12-layer, 64-wide GPT launches 829
// kernels per forward + backward in eager mode (data/measurements/h100_small_kernels.csv,
// tiny12_fwd_bwd_step) where its cost graph counts 372 (data/frameworks.json, "about").
// Execution::host_issue_us_per_kernel is per graph kernel; ops that count eager kernels one by
// one are charged 1 / this per kernel (Op::host_weight).
constexpr double kEagerKernelsPerGraphKernel = 829.0 / 372.0;

struct Op {
  const char* name = "";
  OpKind kind = OpKind::kMemory;
  // GEMM shape: batch x [m x k] * [k x n]; grouped GEMMs have batch = local experts.
  double m = 0, n = 0, k = 0, batch = 1;
  double flops = 0;             // forward FLOPs (GEMM, attention)
  double bwd_flops_factor = 2;  // backward FLOPs / forward FLOPs
  double bytes = 0;             // forward HBM traffic (memory-bound ops)
  double bwd_bytes_factor = 2;
  // Collectives (kind == kComm): forward and backward may differ (e.g. all-gather /
  // reduce-scatter).
  Group group = Group::kTp;
  Coll fwd_coll = Coll::kNone, bwd_coll = Coll::kNone;
  double comm_bytes = 0;      // buffer size of the collective per rank
  bool overlappable = false;  // can hide behind compute (CP ring, TP overlap)
  double dedup_k = 1;         // MoE dispatch: top-k copies per token (see CollectiveTime)
  // Activations saved for backward, per micro-batch.
  double saved_bytes = 0;
  double saved_extra_bytes =
      0;  // attention-core state (softmax stats / scores), core_attn drops it
  // Under torchtitan's per-op checkpointing (kRecomputeOpSac): the share of the forward rerun in
  // backward and the bytes kept for backward (MarkOpSac in graph.cc).
  double sac_rerun = 0, sac_saved = 0;
  int rerun = 0;           // RecomputeModule mask whose recomputation reruns this op's forward
  int drop = 0;            // RecomputeModule mask whose recomputation frees saved_bytes
  bool keep_bf16 = false;  // GEMM stays in BF16 under FP8 training (LM head)
  // GEMM in fp32 or fp64 without tensor cores (the MoE router under --moe-router-dtype): timed at
  // the hardware's fp32 peak (fp64 tensor-core peaks match it on A100/H100: datasheets).
  bool fp32_gemm = false;
  // The `batch` problems run as separate GEMMs, one launch each (Megatron-Core SequentialMLP:
  // no --moe-grouped-gemm), not as one grouped GEMM.
  bool sequential = false;
  bool trainable = true;  // GEMM weights receive gradients (false: frozen, no weight-gradient GEMM)
  bool block_sparse = false;  // attention through a block-sparse kernel (FlexAttention)
  // Attention without a flash kernel (Strategy::flash_attention false): the keys of each query
  // the score matrix spans (all of them: masks are applied after the matmul) and the value
  // head dimension, for its two batched GEMMs (layer_cost.cc, UnfusedAttention).
  double unfused_keys = 0, value_dim = 0;
  bool fwd_only = false;  // a detached computation: no backward work (DoRA's weight norm)
  // GPU kernels the op launches in forward and in backward (docs/MODEL.md, "Launch floor and
  // host issue"): one per GEMM, attention, memory-bound op and collective; the backward of a
  // GEMM is two (data and weight gradient), of attention and memory-bound ops about two.
  int fwd_kernels = 1, bwd_kernels = 2;
  // Host-issue weight of each of those kernels, in cost-graph kernels of the base model (the
  // unit of Execution::host_issue_us_per_kernel). 1 for the model's own ops, each of which stands
  // for several eager PyTorch kernels; ops that count their eager kernels one by one (the PEFT
  // adapters, auto-gptq's unpack chain, Execution::eager_modules' chains) take
  // 1 / kEagerKernelsPerGraphKernel.
  double host_weight = 1;
  // Weight matrices the op owns, gathered per use under ZeRO-3: a GEMM owns at least `batch`
  // (a gated fc1 two: gate and up are separate modules in Hugging Face models); the adapters'
  // thin GEMMs, costed as memory ops, set it.
  double weight_matrices = 0;
  // Trained parameter tensors the op owns (a GEMM's weight and bias, a norm's weight and bias,
  // the embedding table): the optimizer launches per tensor.
  double param_tensors = 0;
};

// What a pass over the model computes: a training step (forward, backward, weight gradients), a
// prompt prefill or one decode step over a KV cache (forward only, nothing saved for backward).
enum class Phase : uint8_t { kTrain, kPrefill, kDecode };

// Per-rank shape facts for one micro-batch.
struct Shape {
  Phase phase = Phase::kTrain;
  double batch = 1;      // sequences per micro-batch
  double q_len = 0;      // query positions per sequence (the whole sequence, before CP)
  double tokens = 0;     // b*q_len/cp: query tokens of this rank's sequence shard
  double tokens_sp = 0;  // tokens after sequence-parallel sharding (tokens/tp with SP)
  double seq_kv = 0;     // key/value positions per sequence: the queries are its last q_len
  int tp = 1;
};

// Training shape of a strategy: q_len = seq_kv = seq, batch = mbs.
Shape MakeShape(const ModelSpec& m, const Strategy& s);
// Inference shapes: a prefill of `prompt` tokens over `cached` earlier ones, and one decode step
// (one new token per sequence) over a KV cache of `context` positions. REQUIRES: batch >= 1.
Shape MakePrefillShape(const Strategy& s, double batch, double prompt, double cached = 0);
Shape MakeDecodeShape(const Strategy& s, double batch, double context);

// One pass over a layer: its shape and phase, and whether its weights are trained (false: a
// frozen base, e.g. under LoRA, whose GEMMs compute only input gradients).
struct Pass {
  Shape shape;
  bool trainable = true;
};

// Applies the pass to the ops appended to `out` from `first` on: frozen GEMM weights (data
// gradient only), nothing saved and no backward when the phase is not training.
void ApplyPass(const Pass& pass, std::vector<Op>& out, size_t first);

// Appends the ops of one transformer layer (moe = routed-expert MLP) to `out`.
void BuildLayer(const ModelSpec& m, const Strategy& s, const Pass& pass, bool moe,
                std::vector<Op>& out);
// The training pass of the strategy's shape with trained weights.
void BuildLayer(const ModelSpec& m, const Strategy& s, bool moe, std::vector<Op>& out);
// Ops of the input embedding (first stage) and of the output head + loss (last stage).
void BuildEmbedding(const ModelSpec& m, const Strategy& s, std::vector<Op>& out);
void BuildHead(const ModelSpec& m, const Strategy& s, std::vector<Op>& out);

// Parameters of one layer held by one rank, split by how they are sharded.
struct LayerParams {
  double tp_sharded = 0;  // split over tp (attention, dense MLP, shared experts)
  double replicated = 0;  // norms, router, MLA down-projections
  double expert = 0;      // routed experts on this rank (split over ep*etp)
};
LayerParams RankLayerParams(const ModelSpec& m, const Strategy& s, bool moe);

// Parameters one rank of a pipeline stage holds, by how they are stored and sharded. Memory,
// data-parallel communication and the optimizer consume the groups: weights of every group,
// gradients, optimizer states and gradient reduction only of trainable ones.
struct ParamGroup {
  const char* name = "";       // layers | experts | embedding | head | mtp
  double count = 0;            // parameters held by one rank (before ZeRO/FSDP sharding)
  bool expert = false;         // sharded over the expert-DP group (else DP x CP)
  bool trainable = true;       // receives gradients and optimizer states
  double bytes_per_param = 2;  // stored weight precision
};

// Transformer layers of a stage, by kind, and whether it holds the embedding / head (+ MTP).
struct StageLayers {
  int dense = 0, moe = 0;
  // Of them, frozen and run forward only (method freeze: the first layers of the model).
  int frozen_dense = 0, frozen_moe = 0;
  // first: holds the embedding; last: the output layer and the loss.
  bool first = false, last = false;
  // MTP modules run here (PipelineMtpStage), each with an embedding and an output layer.
  int mtp = 0;
};

// The parameter groups of one rank of a stage under the strategy (weights in the training
// dtype's storage precision: 4 bytes for fp32, else 2).
std::vector<ParamGroup> StageParamGroups(const ModelSpec& m, const Strategy& s,
                                         const StageLayers& layers);

}  // namespace trainsim::graph

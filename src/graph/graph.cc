// Per-layer op lists in Megatron-LM's layout (column-parallel QKV/FC1, row-parallel proj/FC2,
// sequence parallel all-gather / reduce-scatter around them). Saved-activation bytes follow
// Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
// section 4: with no parallelism they add up to s*b*h*(34 + 5*a*s/h) per GPT layer.
#include "graph/graph.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "graph/attention_pattern.h"
#include "util/units.h"

namespace trainsim::graph {
namespace {

constexpr double kAct = units::kBf16Bytes;  // bytes per activation element (bf16/fp16)
// One int64 token count per expert (the dispatchers' split-size metadata, "ep_splits").
constexpr double kSplitCountBytes = 8;

struct Ctx {
  const ModelSpec& m;
  const Strategy& s;
  Shape sh;
  double h;
  double t;
  bool sp;   // sequence parallel active (tp > 1)
  bool low;  // fp8/fp4 GEMMs (TE saves GEMM inputs in 1 byte)
  std::vector<Op>& out;
};

double GemmInputBytes(const Ctx& c) {
  return c.low ? units::kFp8Bytes : kAct;
}

void Gemm(Ctx& c, const char* name, double m, double k, double n, double batch, double saved_elems,
          int rerun = 0, int drop = 0) {
  Op op;
  op.name = name;
  op.kind = OpKind::kGemm;
  op.m = m;
  op.k = k;
  op.n = n;
  op.batch = batch;
  op.flops = 2.0 * m * n * k * batch;
  op.param_tensors = batch * (c.m.linear_bias ? 2 : 1);
  op.saved_bytes = saved_elems * GemmInputBytes(c);
  op.rerun = rerun;
  op.drop = drop;
  c.out.push_back(op);
}

void Mem(Ctx& c, const char* name, double bytes, double saved_bytes, int rerun = 0, int drop = 0) {
  Op op;
  op.name = name;
  op.kind = OpKind::kMemory;
  op.bytes = bytes;
  op.saved_bytes = saved_bytes;
  op.rerun = rerun;
  op.drop = drop;
  c.out.push_back(op);
}

void Comm(Ctx& c, const char* name, Group g, Coll fwd, Coll bwd, double bytes, bool overlappable,
          int rerun = 0) {
  if (fwd == Coll::kNone && bwd == Coll::kNone) return;
  Op op;
  op.name = name;
  op.kind = OpKind::kComm;
  op.group = g;
  op.fwd_coll = fwd;
  op.bwd_coll = bwd;
  op.comm_bytes = bytes;
  op.overlappable = overlappable;
  op.rerun = rerun;
  op.fwd_kernels = fwd == Coll::kNone ? 0 : 1;
  op.bwd_kernels = bwd == Coll::kNone ? 0 : 1;
  c.out.push_back(op);
}

// Entering a column-parallel region: all-gather with SP (reduce-scatter in backward); without SP
// an identity forward and all-reduce backward.
void EnterTp(Ctx& c, const char* name, double tokens) {
  if (c.t <= 1) return;
  const double bytes = tokens * c.h * kAct;
  if (c.sp)
    Comm(c, name, Group::kTp, Coll::kAllGather, Coll::kReduceScatter, bytes, c.s.tp_comm_overlap);
  else
    Comm(c, name, Group::kTp, Coll::kNone, Coll::kAllReduce, bytes, c.s.tp_comm_overlap);
}

// Leaving a row-parallel region: reduce-scatter with SP (all-gather backward), else all-reduce.
void LeaveTp(Ctx& c, const char* name, double tokens) {
  if (c.t <= 1) return;
  const double bytes = tokens * c.h * kAct;
  if (c.sp)
    Comm(c, name, Group::kTp, Coll::kReduceScatter, Coll::kAllGather, bytes, c.s.tp_comm_overlap);
  else
    Comm(c, name, Group::kTp, Coll::kAllReduce, Coll::kNone, bytes, c.s.tp_comm_overlap);
}

// Execution::eager_modules: the model code's element-wise chains as eager PyTorch runs them,
// one kernel per operation, each counted as an eager kernel for the host (Op::host_weight).
bool Eager(const Ctx& c) {
  return c.s.exec.eager_modules && c.sh.phase == Phase::kTrain;
}

void EagerChain(Op& op, double fwd_bytes, double bwd_bytes, int fwd_kernels, int bwd_kernels) {
  op.bytes = fwd_bytes;
  op.bwd_bytes_factor = bwd_bytes / fwd_bytes;
  op.fwd_kernels = fwd_kernels;
  op.bwd_kernels = bwd_kernels;
  op.host_weight = 1 / kEagerKernelsPerGraphKernel;
}

void Norm(Ctx& c, const char* name) {
  const double n = c.sh.tokens_sp * c.h, x = n * kAct;
  Mem(c, name, 2 * x, x, kRecomputeLayerNorm);
  c.out.back().param_tensors = c.m.layernorm ? 2 : 1;  // weight (and bias)
  if (!Eager(c) || c.m.layernorm) return;              // nn.LayerNorm is one kernel either way
  // Eager RMSNorm (transformers LlamaRMSNorm.forward; torchtune's RMSNorm alike), bytes per
  // element: x.to(float32) (read 2, write 4), pow(2) (4 + 4), mean(-1) (4), + eps and rsqrt
  // (per row), x * rsqrt (4 + 4), .to(bf16) (4 + 2), weight * x (2 + 2): 36 bytes in 8 kernels.
  // Backward (autograd of the same ops): weight * x (4), the two casts (6 + 6), x * rsqrt (8 for
  // x, 16 for rsqrt's row sums), pow (12) and the sum of x's two gradient paths (12): 64 bytes
  // in 10 kernels. Autograd keeps the fp32 input (pow and the product read it): 4 bytes, 2 more
  // than the fused kernel's bf16 input, which stays the op's saved_bytes (the layer input under
  // full recompute). The bf16 normalised input a trained weight's gradient would also keep is
  // not counted.
  EagerChain(c.out.back(), 36 * n, 64 * n, 8, 10);
  c.out.back().saved_extra_bytes = 2 * n;
}

// Eager rotary embedding (transformers apply_rotary_pos_emb: q * cos + rotate_half(q) * sin, and
// the same for k), bytes per element of q and k: q * cos (2 + 2; cos and sin are per position,
// read once), the negated half (1 + 1 per element), cat (2 + 2), * sin (2 + 2), the add
// (4 + 2): 20 bytes in 5 kernels per tensor. Backward: the products with sin and cos (4 + 4),
// the negation and the halves scattered back into x's gradient (2 + 6), the sum of both paths
// (6): 22 bytes in 7 kernels per tensor. Only cos and sin are saved. The fused stacks'
// rotary kernel is not in the graph (docs/MODEL.md, "Kernels not costed").
void EagerRotary(Ctx& c, double q_cols, double k_cols) {
  if (!Eager(c) || c.m.learned_pos_emb > 0 || c.m.is_mla()) return;
  const double n = c.sh.tokens * (q_cols + k_cols);
  Mem(c, "rotary", 20 * n, 0, 0);
  EagerChain(c.out.back(), 20 * n, 22 * n, 10, 14);
}

void ResidualAdd(Ctx& c, const char* name) {
  const double x = c.sh.tokens_sp * c.h;
  // bias-dropout-add reads two tensors and writes one; the dropout mask (1 byte) is saved.
  Mem(c, name, 3 * x * kAct, c.m.dropout ? x : 0);
}

// Mean keys a query attends to. Training: the model's attention pattern over the sequence
// (graph/attention_pattern.h; dense causal gives seq/2). Inference: the queries are the last
// q_len of the sk positions, so a query sees sk - q_len/2 keys (context-parallel ranks hold
// load-balanced query chunks); a sliding window caps that at the window in the windowed layers.
double KeysSeen(const Ctx& c) {
  const ModelSpec& m = c.m;
  const double sk = c.sh.seq_kv;
  if (c.sh.phase == Phase::kTrain) return MeanKeysPerQuery(m, sk, false);
  const double dense = sk - c.sh.q_len / 2;
  const int windowed = m.windowed_layers();
  if (windowed == 0) return dense;
  if (m.attention.kind == AttentionKind::kChunkedLocal)
    return ContextKeysPerQuery(m, sk - c.sh.q_len, sk);  // the queries' chunks, not a window
  const double capped = std::min(dense, static_cast<double>(m.attention.window));
  return (windowed * capped + (m.layers - windowed) * dense) / m.layers;
}

void Attention(Ctx& c) {
  const ModelSpec& m = c.m;
  const double T = c.sh.tokens, Tin = c.sp ? c.sh.tokens_sp : T;
  const double heads = m.heads / c.t;
  double dqk = static_cast<double>(m.head_dim), dv = dqk, kv_heads = m.kv_heads / c.t;
  Norm(c, "attn_norm");
  EnterTp(c, "attn_tp_gather", T);
  if (m.is_mla()) {
    const MlaSpec& a = m.mla;
    dqk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
    dv = static_cast<double>(a.v_head_dim);
    kv_heads = heads;  // MLA expands the latent into per-head keys and values
    if (a.q_lora_rank > 0) {
      Gemm(c, "q_down_proj", T, c.h, a.q_lora_rank, 1, Tin * c.h, 0, kRecomputeLayerNorm);
      Mem(c, "q_norm", 2 * T * a.q_lora_rank * kAct, T * a.q_lora_rank * kAct);
      c.out.back().param_tensors = 1;
      Gemm(c, "q_up_proj", T, a.q_lora_rank, heads * dqk, 1, T * a.q_lora_rank,
           kRecomputeMlaUpProj);
    } else {
      Gemm(c, "q_proj", T, c.h, heads * dqk, 1, Tin * c.h, 0, kRecomputeLayerNorm);
    }
    Gemm(c, "kv_down_proj", T, c.h, a.kv_lora_rank + a.qk_rope_head_dim, 1,
         0);  // input shared with q
    Mem(c, "kv_norm", 2 * T * a.kv_lora_rank * kAct, T * a.kv_lora_rank * kAct);
    c.out.back().param_tensors = 1;
    Gemm(c, "kv_up_proj", T, a.kv_lora_rank, heads * (a.qk_nope_head_dim + dv), 1,
         T * a.kv_lora_rank, kRecomputeMlaUpProj);
  } else {
    Gemm(c, "qkv_proj", T, c.h, (heads + 2 * kv_heads) * dqk, 1, Tin * c.h, 0, kRecomputeLayerNorm);
    EagerRotary(c, heads * dqk, kv_heads * dqk);
  }
  // Context parallelism: ring exchange of K/V blocks (cp-1 steps, overlapped with attention), or
  // all-to-all of q, k, v and the output (Ulysses-style).
  if (c.s.cp > 1) {
    const double kv_bytes = T * kv_heads * (dqk + dv) * kAct;
    if (c.s.cp_a2a) {
      const double qkv = T * (heads * dqk + kv_heads * (dqk + dv)) * kAct;
      Comm(c, "cp_all_to_all_qkv", Group::kCp, Coll::kAllToAll, Coll::kAllToAll, qkv, false);
    } else {
      Comm(c, "cp_ring_kv", Group::kCp, Coll::kP2P, Coll::kP2P, kv_bytes * (c.s.cp - 1), true);
    }
  }
  {
    Op op;
    op.name = "core_attention";
    op.kind = OpKind::kAttention;
    op.rerun = kRecomputeCoreAttn;
    if (m.is_mla()) op.drop = kRecomputeMlaUpProj;  // q, k, v come back from the latents
    const double b = c.sh.batch, sq = c.sh.tokens / b, sk = c.sh.seq_kv;
    // QK^T and PV: 2*sq*keys*(dqk + dv) FLOPs per head, keys = the keys a query attends to.
    const double keys_seen = KeysSeen(c);
    op.flops = 2.0 * b * sq * keys_seen * heads * (dqk + dv);
    op.bwd_flops_factor = 2.5;  // flash-attention backward: 5 GEMMs vs 2 in forward
    op.m = sq;
    // The kernel's key loop: sk for causal attention (mean sk/2 keys); under a window or
    // document mask twice the mean keys, so that the efficiency's sk/(sk + 256) reads
    // keys/(keys + 128) for every pattern.
    op.n = c.sh.phase == Phase::kTrain ? 2 * keys_seen : sk;
    op.block_sparse = m.attention.kind == AttentionKind::kBlockSparse;
    op.k = dqk;
    op.batch = b * heads;
    // Q, K, V are saved in 16 bits (attention runs in bf16 even with FP8 GEMMs).
    op.saved_bytes = T * (heads * dqk + kv_heads * (dqk + dv)) * kAct;
    if (c.s.flash_attention) {
      op.saved_extra_bytes = b * heads * sq * units::kFp32Bytes;  // softmax log-sum-exp
    } else {
      // Scores (2 bytes), softmax dropout mask (1 byte) and dropout output (2 bytes):
      // the 5*a*s^2*b term of Korthikanti et al.
      const double scores = b * heads * sq * sk;
      op.saved_extra_bytes = scores * (m.dropout ? 5.0 : 2.0);
      op.bytes = 3 * scores * kAct;  // materialized scores: write, softmax read/write
      op.unfused_keys = sk;
      op.value_dim = dv;
    }
    if (c.sh.phase != Phase::kTrain) {
      // Inference reads the cached keys and values of every position (MLA: the latent and the
      // rope key), which bounds decode at small batch.
      const double per_pos = m.is_mla()
                                 ? static_cast<double>(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim)
                                 : kv_heads * (dqk + dv);
      op.bytes = b * sk * per_pos * kAct;
    }
    c.out.push_back(op);
  }
  if (c.s.cp > 1 && c.s.cp_a2a) {
    Comm(c, "cp_all_to_all_out", Group::kCp, Coll::kAllToAll, Coll::kAllToAll,
         T * heads * dv * kAct, false);
  }
  Gemm(c, "attn_out_proj", T, heads * dv, c.h, 1, T * heads * dv);
  LeaveTp(c, "attn_tp_scatter", T);
  ResidualAdd(c, "attn_residual");
}

void DenseMlp(Ctx& c, const char* fc1, const char* act, const char* fc2, double ffn, int module) {
  const double T = c.sh.tokens, Tin = c.sp ? c.sh.tokens_sp : T;
  const double f = ffn / c.t, width = c.m.gated_mlp ? 2 * f : f;
  EnterTp(c, "mlp_tp_gather", T);
  Gemm(c, fc1, T, c.h, width, 1, Tin * c.h, module, kRecomputeLayerNorm);
  if (c.m.gated_mlp) c.out.back().weight_matrices = 2;  // gate and up: two modules in HF models
  Mem(c, act, (width + f) * T * kAct, width * T * kAct, module, module);
  if (Eager(c) && c.m.gated_mlp) {
    // Eager act_fn(gate) * up, bytes per element of f: SiLU (2 + 2) and the product (4 + 2),
    // two kernels; backward: the product's two gradients (6 + 6) and SiLU's (6), three kernels.
    // Autograd keeps gate, SiLU's output and up: 6 bytes, the fused kernel 4. SiLU's output is
    // the chain's own (saved_extra_bytes, as the eager norm's fp32 copy): per-op SAC, which
    // recomputes the chain, keeps only the fused kernel's inputs (MarkOpSac).
    EagerChain(c.out.back(), 10 * f * T, 18 * f * T, 2, 3);
    c.out.back().saved_extra_bytes = f * T * kAct;
  }
  Gemm(c, fc2, T, f, c.h, 1, T * f, 0, module);
  LeaveTp(c, "mlp_tp_scatter", T);
}

// Megatron-Core's router (transformer/moe/router.py, TopKRouter): the gating GEMM, in
// --moe-router-dtype when given (RouterGatingLinearFunction casts the input and the weight to
// fp32 / fp64 and runs torch.mm there, off the tensor cores); then the score function (softmax
// or sigmoid), top-k, the probs and routing-map scatters and the aux-loss statistics: about six
// element-wise kernels that each read or write the [tokens, experts] scores in the router dtype
// (bf16 logits when none is given), forward and backward.
void MoeRouter(Ctx& c, double Tr) {
  const MoeSpec& e = c.m.moe;
  constexpr int kMoe = kRecomputeMoe;
  const double rb = c.s.moe_router_bytes;
  const bool wide = rb >= units::kFp32Bytes && c.sh.phase == Phase::kTrain;
  if (wide) {
    // The input cast (read bf16, write router dtype), saved for the GEMM's weight gradient.
    Mem(c, "router_cast", Tr * c.h * (kAct + rb), Tr * c.h * rb, kMoe, kMoe);
  }
  Gemm(c, "router", Tr, c.h, e.num_experts, 1, wide ? 0 : Tr * c.h, kMoe, kRecomputeLayerNorm);
  c.out.back().fp32_gemm = wide;
  if (c.sh.phase != Phase::kTrain) return;
  const double score_bytes = std::max(rb, kAct);
  Mem(c, "router_scores", 6 * Tr * e.num_experts * score_bytes, Tr * e.num_experts * score_bytes,
      kMoe, kMoe);
  c.out.back().fwd_kernels = 6;
  c.out.back().bwd_kernels = 6;
}

// Rows each expert's GEMMs process, as a multiple of the balanced top_k*tokens/experts:
// --moe-expert-capacity-factor caps an expert at capacity = factor x balanced (moe_utils.py
// get_capacity); balanced routing never exceeds it when factor >= 1, and factor < 1 drops the
// rest. --moe-pad-expert-input-to-capacity pads every expert to its capacity (the dispatcher's
// drop_and_pad: the all-to-all carries capacity rows per expert too).
double CapacityRows(const Strategy& s) {
  if (s.moe_capacity_factor <= 0) return 1.0;
  return s.moe_pad_to_capacity ? s.moe_capacity_factor : std::min(s.moe_capacity_factor, 1.0);
}

// moe_utils.permute without --moe-permute-fusion: the routing map transposed to
// [experts, tokens] (1 byte), an argsort of its experts x tokens entries (a radix sort of 1-byte
// keys with 8-byte indices: about four read+write passes, 36 bytes an entry) and the probs
// transposed and gathered; the token gather itself is the fused kernel's "permute". About
// eight kernels forward; the backward scatters the rows back ("permute" already costs that).
void UnfusedPermute(Ctx& c, double Tr) {
  const double entries = Tr * c.m.moe.num_experts;
  const double pb = std::max<double>(c.s.moe_router_bytes, kAct);
  Mem(c, "permute_sort", entries * (2 + 36 + 2 * pb), 0, kRecomputeMoe);
  c.out.back().fwd_kernels = 8;
  c.out.back().bwd_kernels = 0;
  c.out.back().bwd_bytes_factor = 0;
}

// moe_utils.unpermute without --moe-permute-fusion: the rows times their probs, promoted to the
// probs' dtype pb (the router dtype; "may promote permuted_tokens to higher precision"), a
// zeroed [tokens, hidden] output in pb, scatter_add of the rows into it (source read, output
// read-modify-write) and the cast back to bf16. Bytes forward, rows = R received rows:
// rows*h*(2 + pb) + T*h*pb + rows*h*pb + 2*T*h*pb + T*h*(pb + 2); the backward (gather, the
// product's two gradients, the casts) about twice that. Fused: TE's moe_unpermute reads the rows
// once and writes bf16 ("unpermute").
void UnfusedUnpermute(Ctx& c, double Tr, double rows) {
  const double pb = std::max<double>(c.s.moe_router_bytes, kAct);
  const double bytes =
      c.h * (rows * (kAct + pb) + Tr * pb + rows * pb + 2 * Tr * pb + Tr * (pb + kAct));
  Mem(c, "unpermute_unfused", bytes, rows * c.h * kAct, kRecomputeMoe, kRecomputeMoe);
  c.out.back().fwd_kernels = 5;
  c.out.back().bwd_kernels = 6;
}

// The routed experts on R received rows: TEGroupedMLP (--moe-grouped-gemm) runs each GEMM as one
// grouped GEMM over the local experts; SequentialMLP (experts.py, the default) loops over them in
// Python, one FC1, activation and FC2 per expert (a launch and a host issue each), and
// torch.cat's the outputs (one more copy of the rows). FP8 without
// --moe-router-padding-for-fp8: TE's Fp8Padding / Fp8Unpadding copy the rows into and out of a
// buffer whose per-expert counts are multiples of 16.
void RoutedExperts(Ctx& c, double R, double local_experts) {
  const MoeSpec& e = c.m.moe;
  constexpr int kMoe = kRecomputeMoe;
  const double f = e.expert_ffn / c.s.expert_tp(), width = c.m.gated_mlp ? 2 * f : f;
  const bool train = c.sh.phase == Phase::kTrain;
  const bool sequential = !c.s.moe_grouped_gemm && train && local_experts > 1;
  const int launches = sequential ? static_cast<int>(local_experts) : 1;
  const bool fp8_pad = c.low && train && !c.s.moe_router_padding;
  if (fp8_pad) Mem(c, "fp8_padding", 2 * R * c.h * kAct, 0, kMoe);
  Gemm(c, "expert_fc1", R / local_experts, c.h, width, local_experts, R * c.h, kMoe, kMoe);
  c.out.back().sequential = sequential;
  c.out.back().fwd_kernels = launches;
  c.out.back().bwd_kernels = 2 * launches;
  Mem(c, "expert_act", (width + f) * R * kAct, width * R * kAct, kMoe | kRecomputeMoeAct, kMoe);
  c.out.back().fwd_kernels = launches;
  c.out.back().bwd_kernels = launches;
  Gemm(c, "expert_fc2", R / local_experts, f, c.h, local_experts, R * f, kMoe,
       kMoe | kRecomputeMoeAct);
  c.out.back().sequential = sequential;
  c.out.back().fwd_kernels = launches;
  c.out.back().bwd_kernels = 2 * launches;
  if (fp8_pad) Mem(c, "fp8_unpadding", 2 * R * c.h * kAct, 0, kMoe);
  if (sequential) {
    Mem(c, "expert_cat", 2 * R * c.h * kAct, 0, kMoe);
    c.out.back().bwd_kernels = 0;  // the backward splits the gradient into views
    c.out.back().bwd_bytes_factor = 0;
  }
}

void MoeMlp(Ctx& c) {
  const MoeSpec& e = c.m.moe;
  const double Tr = c.sh.tokens_sp;  // tokens routed by this rank (SP-sharded)
  const double etp = c.s.expert_tp();
  const double local_experts = static_cast<double>(e.num_experts) / c.s.ep;
  const bool train = c.sh.phase == Phase::kTrain;
  // Balanced routing: every EP rank receives top_k * Tr tokens, gathered over the ETP group,
  // times the capacity rows (CapacityRows); --moe-router-padding-for-fp8 adds half an alignment
  // (16 rows, 32 for MXFP8) per local expert on average.
  const double rows = train ? CapacityRows(c.s) : 1.0;
  const double align = c.s.dtype == DType::kMxfp8 ? 32 : 16;
  const double pad = c.s.moe_router_padding && c.low && train ? local_experts * align / 2 : 0;
  const double R = Tr * e.top_k * etp * rows + pad;
  constexpr int kMoe = kRecomputeMoe;
  MoeRouter(c, Tr);
  const double dispatch = R / etp * c.h * kAct;
  const bool unfused = train && !c.s.moe_permute_fusion;
  // Before the dispatch every EP rank learns how many rows it will receive per local expert,
  // and the host reads those counts (the split sizes and receive buffers depend on them): the
  // all-to-all dispatcher all-gathers the [experts] int64 counts over the EP group and copies
  // them to the host (Megatron-Core token_dispatcher.py, MoEAlltoAllTokenDispatcher.preprocess,
  // sync point "before_ep_alltoall"); DeepEP's notify_dispatch exchanges the same counts between
  // the ranks and the host spins on the received count (deep_ep.cpp, Buffer::intranode_dispatch,
  // "CPU recv timeout"). A latency-bound collective on the forward's critical path, not rerun
  // in backward, which reuses the splits ("ep_splits").
  if (train && c.s.ep > 1)
    Comm(c, "ep_splits", Group::kEp, Coll::kAllGather, Coll::kNone,
         static_cast<double>(c.s.ep) * e.num_experts * kSplitCountBytes, false, kMoe);
  if (unfused) UnfusedPermute(c, Tr);
  Mem(c, "permute", 2 * dispatch, 0, kMoe);
  Comm(c, "ep_dispatch_a2a", Group::kEp, Coll::kAllToAll, Coll::kAllToAll, dispatch, false, kMoe);
  if (c.s.moe_dedup_dispatch) c.out.back().dedup_k = e.top_k;
  if (etp > 1)
    Comm(c, "etp_gather", Group::kEtp, Coll::kAllGather, Coll::kReduceScatter, dispatch * etp,
         false, kMoe);
  // Megatron-Core's all-to-all dispatcher receives the tokens ordered by source rank, then by
  // expert; with more than one local expert it regroups them by expert before the grouped GEMM
  // (token_dispatcher.py, MoEAlltoAllTokenDispatcher: sort_chunks_by_idxs after the dispatch
  // all-to-all, and again, inverted, before the combine): one more read and write of the R
  // received rows per direction, in forward and backward. The deduplicating (flex/DeepEP)
  // dispatcher lays the received tokens out per expert in its single local permute, which
  // "permute" / "unpermute" already cost.
  const bool sort_chunks = !c.s.moe_dedup_dispatch && local_experts > 1 && train;
  if (sort_chunks) Mem(c, "sort_chunks", 2 * R * c.h * kAct, 0, kMoe);
  RoutedExperts(c, R, local_experts);
  if (sort_chunks) Mem(c, "unsort_chunks", 2 * R * c.h * kAct, 0, kMoe);
  if (etp > 1)
    Comm(c, "etp_scatter", Group::kEtp, Coll::kReduceScatter, Coll::kAllGather, dispatch * etp,
         false, kMoe);
  Comm(c, "ep_combine_a2a", Group::kEp, Coll::kAllToAll, Coll::kAllToAll, dispatch, false, kMoe);
  if (c.s.moe_dedup_dispatch) c.out.back().dedup_k = e.top_k;
  if (unfused)
    UnfusedUnpermute(c, Tr, R / etp);
  else
    Mem(c, "unpermute", 2 * dispatch, dispatch, kMoe, kMoe);
  if (e.shared_ffn > 0)
    DenseMlp(c, "shared_fc1", "shared_act", "shared_fc2", static_cast<double>(e.shared_ffn),
             kRecomputeSharedExperts);
}

}  // namespace

namespace {

Shape ShapeOf(const Strategy& s, Phase phase, double batch, double q_len, double tokens,
              double kv_len) {
  Shape sh;
  sh.phase = phase;
  sh.tp = s.tp;
  sh.batch = batch;
  sh.q_len = q_len;
  sh.tokens = tokens;
  sh.tokens_sp = (s.sp && s.tp > 1) ? sh.tokens / s.tp : sh.tokens;
  sh.seq_kv = kv_len;
  return sh;
}

}  // namespace

Shape MakeShape(const ModelSpec&, const Strategy& s) {
  const double b = s.mbs, seq = s.seq;
  return ShapeOf(s, Phase::kTrain, b, seq, b * seq / s.cp, seq);
}

Shape MakePrefillShape(const Strategy& s, double batch, double prompt, double cached) {
  return ShapeOf(s, Phase::kPrefill, batch, prompt, batch * prompt / s.cp, prompt + cached);
}

Shape MakeDecodeShape(const Strategy& s, double batch, double context) {
  return ShapeOf(s, Phase::kDecode, batch, 1, batch, context);
}

namespace {

Ctx MakeCtx(const ModelSpec& m, const Strategy& s, const Shape& shape, bool low_precision,
            std::vector<Op>& out) {
  return Ctx{m,
             s,
             shape,
             static_cast<double>(m.hidden),
             static_cast<double>(s.tp),
             s.sp && s.tp > 1,
             low_precision,
             out};
}

}  // namespace

// Applies the pass to the ops appended from `first` on: frozen weights, nothing saved when no
// backward follows.
void ApplyPass(const Pass& pass, std::vector<Op>& out, size_t first) {
  for (size_t i = first; i < out.size(); ++i) {
    Op& op = out[i];
    if (op.kind == OpKind::kGemm) {
      op.trainable = pass.trainable;
      if (!op.trainable) op.bwd_kernels = 1, op.param_tensors = 0;  // data gradient only
    }
    if (pass.shape.phase != Phase::kTrain) op.bwd_kernels = 0;
    if (pass.shape.phase != Phase::kTrain) op.saved_bytes = op.saved_extra_bytes = op.sac_saved = 0;
  }
}

namespace {

// torchtitan's per-op selective activation checkpointing (torchtitan
// distributed/activation_checkpoint.py, the "op" policy): aten.mm outputs are saved except every
// second mm of the block, scaled-dot-product attention and reduce-scatter outputs are saved,
// everything else (norms, rotary, activations, residual adds, grouped expert GEMMs) is recomputed
// in backward from what was saved. Per op of the layer built from `first` on: the share of its
// forward that is rerun (sac_rerun) and the bytes kept for its backward (sac_saved). The fused
// GEMMs stand for several mms in the model's order: qkv_proj for wq, wk, wv (so wk is rerun),
// a gated fc1 for w1, w3 (w3 rerun).
void MarkOpSac(const ModelSpec& m, double t, std::vector<Op>& out, size_t first) {
  int mm = 0;
  const auto rerun_share = [&mm](std::initializer_list<double> weights) {
    double all = 0, rerun = 0;
    for (double w : weights) {
      all += w;
      if (++mm % 2 == 0) rerun += w;
    }
    return all > 0 ? rerun / all : 0.0;
  };
  const double heads = m.heads / t, kv = m.kv_heads / t;
  double produced_rerun = 0;  // share of the previous op's output that backward recomputes
  for (size_t i = first; i < out.size(); ++i) {
    Op& op = out[i];
    switch (op.kind) {
      case OpKind::kMemory:
        // Rerun in backward, so no tensor of its own is kept: only its inputs, where they are
        // kept anyway (the block input, a saved matmul output); an eager chain's intermediates
        // (saved_extra_bytes: the norm's fp32 copy, SiLU's output) are not.
        op.sac_rerun = 1;
        op.sac_saved = op.saved_bytes * (1 - produced_rerun);
        produced_rerun = 1;
        break;
      case OpKind::kGemm: {
        const bool qkv = op.name == std::string_view("qkv_proj");
        const bool gated_fc1 = op.name == std::string_view("fc1") && m.gated_mlp;
        const double share = op.batch > 1 ? 1.0  // grouped expert GEMM: not an aten.mm
                             : qkv        ? rerun_share({heads, kv, kv})
                             : gated_fc1  ? rerun_share({1, 1})
                                          : rerun_share({1});
        op.sac_rerun = share;
        op.sac_saved = op.saved_bytes * (1 - produced_rerun);
        // Saved outputs no later op keeps as its input: q (rotary is recomputed from it) and the
        // last MLP projection (the residual add needs no input for backward).
        const double out_bytes = op.m * op.n * op.batch * kAct;
        if (qkv) op.sac_saved += out_bytes * heads / (heads + 2 * kv);
        if (op.name == std::string_view("fc2") && share == 0) op.sac_saved += out_bytes;
        produced_rerun = share;
        break;
      }
      case OpKind::kAttention: {
        // q and k pass through rotary (recomputed); v is a saved mm output; the output and the
        // log-sum-exp are saved.
        const double qk = heads + kv, all = heads + 2 * kv;
        op.sac_saved = op.saved_bytes * (1 - qk / all) + op.saved_extra_bytes;
        produced_rerun = 0;
        break;
      }
      case OpKind::kComm:
        op.sac_rerun = op.fwd_coll == Coll::kReduceScatter ? 0 : 1;
        if (op.fwd_coll == Coll::kReduceScatter) produced_rerun = 0;
        break;
    }
  }
}

}  // namespace

void BuildLayer(const ModelSpec& m, const Strategy& s, const Pass& pass, bool moe,
                std::vector<Op>& out) {
  const size_t first = out.size();
  Ctx c = MakeCtx(m, s, pass.shape, IsLowPrecision(s.dtype), out);
  Attention(c);
  Norm(c, "mlp_norm");
  if (moe) {
    MoeMlp(c);
  } else {
    const int64_t ffn = (m.is_moe() && m.moe.dense_ffn > 0) ? m.moe.dense_ffn : m.ffn;
    DenseMlp(c, "fc1", "mlp_act", "fc2", static_cast<double>(ffn), kRecomputeMlp);
  }
  ResidualAdd(c, "mlp_residual");
  MarkOpSac(m, c.t, out, first);
  ApplyPass(pass, out, first);
}

void BuildLayer(const ModelSpec& m, const Strategy& s, bool moe, std::vector<Op>& out) {
  BuildLayer(m, s, Pass{MakeShape(m, s), true}, moe, out);
}

void BuildEmbedding(const ModelSpec& m, const Strategy& s, std::vector<Op>& out) {
  Ctx c = MakeCtx(m, s, MakeShape(m, s), false, out);
  const double x = c.sh.tokens * c.h * kAct;
  Mem(c, "embedding", 2 * x, m.dropout ? c.sh.tokens_sp * c.h : 0);
  c.out.back().param_tensors = m.learned_pos_emb > 0 ? 2 : 1;
  // Vocab-parallel embedding: partial rows are summed over TP (reduce-scatter with SP).
  if (c.t > 1)
    Comm(c, "embedding_tp_reduce", Group::kTp, c.sp ? Coll::kReduceScatter : Coll::kAllReduce,
         Coll::kNone, x, false);
}

void BuildHead(const ModelSpec& m, const Strategy& s, std::vector<Op>& out) {
  Ctx c = MakeCtx(m, s, MakeShape(m, s), IsLowPrecision(s.dtype), out);
  // A reward model's head is a scalar score (TRL RewardTrainer, AutoModelForSequence-
  // Classification with one label), not the vocabulary.
  const double T = c.sh.tokens, v = s.stage == TrainStage::kRm ? 1.0 : m.vocab / c.t;
  Norm(c, "final_norm");
  EnterTp(c, "head_tp_gather", T);
  Gemm(c, "lm_head", T, c.h, v, 1, (c.sp ? c.sh.tokens_sp : T) * c.h);
  c.out.back().saved_bytes = (c.sp ? c.sh.tokens_sp : T) * c.h * kAct;  // head runs in bf16
  c.out.back().keep_bf16 = true;
  // Vocab-parallel cross-entropy in fp32: max, sum-exp, loss (Megatron's
  // vocab_parallel_cross_entropy); the fp32 softmax is kept for backward.
  if (s.fused_cross_entropy)  // TE fused kernel: one pass, gradient written over the logits
    Mem(c, "cross_entropy", T * v * 2 * kAct, T * v * kAct);
  else
    Mem(c, "cross_entropy", T * v * (kAct + 3 * units::kFp32Bytes), T * v * units::kFp32Bytes);
  if (c.t > 1)
    Comm(c, "loss_tp_allreduce", Group::kTp, Coll::kAllReduce, Coll::kNone,
         3 * T * units::kFp32Bytes, false);
}

LayerParams RankLayerParams(const ModelSpec& m, const Strategy& s, bool moe) {
  LayerParams p;
  const double h = static_cast<double>(m.hidden), t = s.tp;
  const double norm = m.layernorm ? 2 * h : h;
  p.replicated = 2 * norm;
  // Attention: everything is column/row split except MLA's down-projections and norms.
  double attn = 0;
  if (m.is_mla()) {
    const MlaSpec& a = m.mla;
    const double down =
        h * (a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim) + a.q_lora_rank + a.kv_lora_rank;
    const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
    const double up =
        (a.q_lora_rank > 0 ? a.q_lora_rank : h) * m.heads * qk +
        a.kv_lora_rank * static_cast<double>(m.heads) * (a.qk_nope_head_dim + a.v_head_dim) +
        static_cast<double>(m.heads) * a.v_head_dim * h;
    p.replicated += down;
    attn = up / t;
  } else {
    const double qo = static_cast<double>(m.heads) * m.head_dim;
    const double kvo = static_cast<double>(m.kv_heads) * m.head_dim;
    attn = (h * (qo + 2 * kvo) + qo * h) / t;
    if (m.linear_bias || m.qkv_bias) attn += (qo + 2 * kvo) / t;
    if (m.linear_bias) p.replicated += h;
    if (m.qk_norm) p.replicated += 2.0 * m.head_dim;  // per-head q and k RMSNorm (Qwen3)
  }
  p.tp_sharded = attn;
  const double gate = m.gated_mlp ? 3 : 2;
  if (moe) {
    const MoeSpec& e = m.moe;
    p.replicated += h * e.num_experts;
    p.expert = static_cast<double>(e.num_experts) / s.ep * gate * h * e.expert_ffn / s.expert_tp();
    if (e.shared_ffn > 0) p.tp_sharded += gate * h * e.shared_ffn / t;
  } else {
    const double ffn =
        static_cast<double>((m.is_moe() && m.moe.dense_ffn > 0) ? m.moe.dense_ffn : m.ffn);
    p.tp_sharded += gate * h * ffn / t;
    if (m.linear_bias) p.tp_sharded += ffn / t, p.replicated += h;
  }
  return p;
}

}  // namespace trainsim::graph

#include "infer/step.h"

#include <algorithm>
#include <cmath>

#include "cost/cost.h"
#include "graph/attention_pattern.h"

namespace trainsim::infer {
namespace {

constexpr double kAct = 2.0;  // BF16 activations between kernels
// Memory-bound element-wise work per token per layer: two RMSNorms, rope, the SwiGLU
// activation and two residual adds, each reading and writing a hidden-sized BF16 vector
// (about 12 vector passes); launched as this many kernels when not fused.
constexpr double kElementwisePasses = 12;
constexpr int kElementwiseKernels = 6;
// MoE routing kernels besides the expert GEMMs: router GEMM, top-k, permute, un-permute.
constexpr int kMoeRoutingKernels = 4;
constexpr double kMoePermutePasses = 4;
// Vocabulary logits are FP32 for sampling: write + softmax/top-p read (vLLM Sampler).
constexpr double kLogitBytes = 4.0 * 2;

double Div(double a, double b) {
  return b > 0 ? a / b : 0;
}

// Accumulates ops: each takes the longer of its FLOPs time and its bytes time (the roofline;
// the winner names the bucket) plus a fixed latency per kernel (launch from a CUDA graph, ramp-up
// and drain: t = t0 + bytes / BW, the usual fit of a memory-bound kernel's time).
struct Acc {
  double kernel_s;
  PhaseBreakdown b;
  void Add(double compute_s, double hbm_s, int kernels) {
    if (compute_s >= hbm_s)
      b.compute_s += compute_s;
    else
      b.hbm_s += hbm_s;
    b.launch_s += kernels * kernel_s;
  }
  void Comm(double s) { b.comm_s += s; }
};

}  // namespace

// Datasheet dense tensor peak of the precision the GEMMs compute in: FP8 / NVFP4 checkpoints
// run FP8 / FP4 tensor cores where the GPU has them; weight-only int formats dequantise to BF16.
double ComputePeak(const HardwareSpec& hw, WeightDType d) {
  const double bf16 = hw.peak_bf16_flops > 0 ? hw.peak_bf16_flops : hw.peak_fp16_flops;
  if (d == WeightDType::kNvfp4 && hw.peak_fp4_flops > 0) return hw.peak_fp4_flops;
  if (d == WeightDType::kFp8 && hw.peak_fp8_flops > 0) return hw.peak_fp8_flops;
  return bf16;
}

namespace {

// Achieved GEMM FLOP/s: the precision's datasheet peak x the engine's achieved fraction of it
// (one constant per engine for every GPU: inference GEMMs are the engine's own kernels, not the
// training stack whose losses the preset's gemm_max absorbs) x the preset's shape law relative
// to its best (cost::GemmEfficiency / gemm_max: k depth, wave quantisation, grouped GEMMs).
// Dense GEMMs drop the m factor (decode GEMMs are skinny but tile padding, not m, bounds them:
// the roofline decides); grouped (MoE expert) GEMMs keep it, each expert sees its share.
double GemmRate(const Layout& l, double m, double n, double k, bool grouped) {
  const HardwareSpec& hw = *l.hw;
  const double local_experts = grouped ? std::max(1.0, Div(l.m->moe.num_experts, l.tp)) : 1;
  const double shape =
      Div(cost::GemmEfficiency(hw, grouped ? std::max(1.0, m) : 1e9, n, k, local_experts),
          hw.eff.gemm_max);
  const EngineProfile& e = *l.engine;
  const double eff =
      grouped && e.moe_gemm_efficiency > 0 ? e.moe_gemm_efficiency : e.gemm_efficiency;
  return ComputePeak(hw, l.wdtype) * eff * shape;
}

bool WeightOnly(WeightDType d) {
  return d == WeightDType::kInt4 || d == WeightDType::kInt8;
}

struct Gemm {
  double params = 0;  // weights of this GEMM on one GPU
  double n = 0, k = 0;
  double read_fraction = 1;  // of the weights read this iteration (MoE: distinct experts)
  double flop_tokens = 0;    // tokens x (experts per token) that multiply these weights
  bool grouped = false;
  int kernels = 1;
};

void AddGemm(Acc& a, const Layout& l, const Gemm& g, double tokens) {
  const double wbytes = WeightBytesPerParam(l.wdtype, l.quant, l.group);
  const double flops = 2.0 * g.flop_tokens * g.params;
  const double m = g.grouped ? g.flop_tokens : tokens;  // tokens per expert for MoE
  const double compute_s = Div(flops, GemmRate(l, m, g.n, g.k, g.grouped));
  const double bytes = g.params * g.read_fraction * wbytes + tokens * (g.n + g.k) * kAct;
  const EngineProfile& e = *l.engine;
  const double frac =
      g.grouped && e.moe_hbm_fraction > 0 ? e.moe_hbm_fraction : e.decode_hbm_fraction;
  const double hbm_s = Div(bytes, l.hw->hbm_bw_bytes_per_s * frac);
  a.Add(compute_s, hbm_s, g.kernels);
  if (WeightOnly(l.wdtype)) {
    const double extra = l.quant == QuantMethod::kAwq     ? e.awq_gemm_overhead_s
                         : l.wdtype == WeightDType::kInt8 ? e.gptq8_gemm_overhead_s
                                                          : e.gptq4_gemm_overhead_s;
    a.b.launch_s += g.kernels * extra;
  }
}

void AddAttentionCore(Acc& a, const Layout& l, const StageShape& st, const Work& w, double kv_tok) {
  const ModelSpec& m = *l.m;
  const double heads = Div(m.heads, l.attn_tp());
  const int layers = st.dense + st.moe;
  const double kv_layer = Div(kv_tok, layers);  // KV bytes per token per layer on this GPU
  // Decode: every cached position is read once per step (paged attention); FLOPs q.k and p.v
  // per position per head (MLA absorbed: over the latent + rope key, and the latent).
  const double per_pos =
      m.is_mla() ? 2.0 * (2 * m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) : 4.0 * m.head_dim;
  if (w.dec_seqs > 0) {
    // Positions a decode query reads, averaged over the layers: the whole context, or in
    // sliding-window / chunked-local layers the window / the current chunk (attention kernels
    // skip the rest: FlashAttention window_size, Llama-4 chunked attention metadata).
    const double ctx = graph::ContextKeysPerQuery(m, w.dec_ctx, w.dec_ctx);
    const double flops = w.dec_seqs * ctx * heads * per_pos;
    const double peak = l.hw->peak_bf16_flops * l.hw->eff.attn_fwd;
    // Engines that expand grouped KV heads before attention (transformers' repeat_kv + SDPA) and
    // append by concatenation (DynamicCache torch.cat) move more than the cache per step.
    const double g = m.is_mla() ? 1.0 : Div(m.heads, m.kv_heads);
    const double copies = l.engine->repeat_kv ? 3.0 + 2.0 * g : 1.0;
    const double bytes = w.dec_seqs * ctx * kv_layer * copies;
    const double frac = l.engine->attention_hbm_fraction > 0 ? l.engine->attention_hbm_fraction
                                                             : l.engine->decode_hbm_fraction;
    a.Add(Div(flops, peak), Div(bytes, l.hw->hbm_bw_bytes_per_s * frac), 1);
  }
  if (w.pre_seqs > 0) {
    // Causal prefill over pre_cached earlier positions: mean keys per query cached + len/2
    // (window or chunk limited in the windowed layers: graph/attention_pattern.h).
    const double keys = graph::ContextKeysPerQuery(m, w.pre_cached, w.pre_cached + w.pre_len);
    const double hd =
        m.is_mla() ? (m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim) / 2.0
                   : static_cast<double>(m.head_dim);
    const double flops = 4.0 * w.pre_seqs * w.pre_len * keys * heads * hd;
    a.Add(cost::AttentionTime(*l.hw, flops, w.pre_len, 2 * keys, std::max(1.0, w.pre_seqs) * heads,
                              false, cost::AttnKernel::kFused),
          0, 1);
  }
}

// MoE dispatch and combine under attention DP over the tp GPUs: every rank all-gathers every
// token's hidden vector and reduce-scatters the experts' outputs (TensorRT-LLM's default MoE
// communication, fused_moe/communication/allgather_reducescatter.py: "the default fallback
// strategy that always works"; its all-to-all variants need MNNVL or DeepEP). The gather is
// post-quantisation where the engine does it (moe_quantized_dispatch): NVFP4 checkpoints send
// 0.5 B per element plus an FP8 scale per 16, FP8 checkpoints 1 B; else BF16 (SGLang's DP
// attention gathers and scatters BF16 hidden states). The combine is BF16.
double MoeDispatchCombine(const Layout& l, double tokens) {
  const ModelSpec& m = *l.m;
  const bool quant = l.engine->moe_quantized_dispatch;
  const double elem = quant && l.wdtype == WeightDType::kNvfp4 ? 0.5 + 1.0 / 16
                      : quant && l.wdtype == WeightDType::kFp8 ? 1.0
                                                               : kAct;
  const cost::Placement p = cost::Place(l.tp, 1, l.hw->scaleup_domain);
  return cost::CollectiveTime(*l.hw, graph::Coll::kAllGather, p, tokens * m.hidden * elem) +
         cost::CollectiveTime(*l.hw, graph::Coll::kReduceScatter, p, tokens * m.hidden * kAct);
}

// One transformer layer (MoE or dense MLP) on one GPU. Attention and dense MLP split over
// attn_tp GPUs and, under attention DP, see 1/attn_dp of the tokens.
PhaseBreakdown Layer(const Layout& l, const StageShape& st, const Work& w, bool moe,
                     double kv_tok) {
  const ModelSpec& m = *l.m;
  Acc a{l.engine->kernel_latency_s, {}};
  const double t = w.tokens();
  const double tp = l.attn_tp(), dp = l.attn_dp();
  const double td = t / dp;  // tokens through this GPU's attention and dense layers
  Work local = w;
  local.dec_seqs /= dp;
  local.pre_seqs /= dp;
  const double q_out = static_cast<double>(m.heads) * m.head_dim;
  const double attn = AttentionParams(m) / tp;
  // QKV and output projections (MLA: the down/up projections, same bytes).
  AddGemm(a, l, {attn * 0.5, Div(attn * 0.5, m.hidden), static_cast<double>(m.hidden), 1, td}, td);
  AddAttentionCore(a, l, st, local, kv_tok * dp);
  AddGemm(a, l, {attn * 0.5, static_cast<double>(m.hidden), q_out / tp, 1, td}, td);
  const double dense = DenseMlpParams(m, moe) / tp;
  if (dense > 0) {
    const double ffn = Div(dense, (m.gated_mlp ? 3.0 : 2.0) * m.hidden);
    AddGemm(a, l, {dense, ffn, static_cast<double>(m.hidden), 1, td, false, 2}, td);
  }
  if (moe) {
    // Routed experts: a GPU holds 1/tp of every expert's weights in total (EP x expert-TP = tp)
    // and reads those of the distinct experts the iteration's tokens touch.
    const double e = m.moe.num_experts;
    const double read = Div(ExpectedDistinctExperts(m.moe.num_experts, m.moe.top_k, t), e);
    const double experts = e * ExpertParams(m) / l.tp;
    AddGemm(a, l,
            {experts, static_cast<double>(m.moe.expert_ffn), static_cast<double>(m.hidden), read,
             t * m.moe.top_k / e, true, 2},
            t * m.moe.top_k / l.tp);
    // Permute and un-permute move each token's top_k copies of the hidden vector (written by
    // the dispatch, read by the grouped GEMM's input; written by its output, read and weighted
    // by the combine): four hidden-sized passes per routed copy.
    const double routed = t * m.moe.top_k / l.tp * m.hidden * kAct * kMoePermutePasses;
    a.Add(0, Div(routed, l.hw->hbm_bw_bytes_per_s * l.engine->decode_hbm_fraction),
          kMoeRoutingKernels);
  }
  const double elem = td * m.hidden * kAct * kElementwisePasses;
  a.Add(0, Div(elem, l.hw->hbm_bw_bytes_per_s * l.hw->eff.mem), kElementwiseKernels);
  if (tp > 1) {
    const double bytes = t * m.hidden * kAct;
    const cost::Placement p = cost::Place(l.tp, 1, l.hw->scaleup_domain);
    a.Comm(2 * cost::CollectiveTime(*l.hw, graph::Coll::kAllReduce, p, bytes));
  } else if (dp > 1 && moe) {
    a.Comm(MoeDispatchCombine(l, t));
  }
  a.b.total_s = a.b.compute_s + a.b.hbm_s + a.b.comm_s + a.b.launch_s;
  // Eager engines issue every kernel from Python: a layer takes at least the host's time, a
  // fixed cost per layer (layer_overhead_s) or, where the engine gives one, its kernels (each
  // launch_s / kernel_s) times the host's issue cost per kernel.
  if (!l.engine->cuda_graphs) {
    const double kernels =
        l.engine->kernel_latency_s > 0 ? a.b.launch_s / l.engine->kernel_latency_s : 0;
    const double host =
        std::max(l.engine->layer_overhead_s, kernels * l.engine->eager_host_s_per_kernel);
    if (a.b.total_s < host) {
      a.b.launch_s += host - a.b.total_s;
      a.b.total_s = host;
    }
  }
  return a.b;
}

void Accumulate(PhaseBreakdown& into, const PhaseBreakdown& b, double times) {
  into.compute_s += times * b.compute_s;
  into.hbm_s += times * b.hbm_s;
  into.comm_s += times * b.comm_s;
  into.launch_s += times * b.launch_s;
  into.total_s += times * b.total_s;
}

}  // namespace

double AttentionParams(const ModelSpec& m) {
  const double h = m.hidden;
  if (m.is_mla()) {
    const MlaSpec& a = m.mla;
    const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    const double q =
        a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank * m.heads * qk : h * m.heads * qk;
    const double kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) +
                      a.kv_lora_rank * m.heads * (a.qk_nope_head_dim + a.v_head_dim);
    return q + kv + m.heads * a.v_head_dim * h;
  }
  const double hd = m.head_dim;
  return h * hd * (m.heads + 2.0 * m.kv_heads) + m.heads * hd * h;
}

double ExpertParams(const ModelSpec& m) {
  return (m.gated_mlp ? 3.0 : 2.0) * m.hidden * m.moe.expert_ffn;
}

double DenseMlpParams(const ModelSpec& m, bool moe_layer) {
  const double mats = m.gated_mlp ? 3.0 : 2.0;
  if (moe_layer) return mats * m.hidden * m.moe.shared_ffn;
  const double ffn = m.is_moe() && m.moe.dense_ffn > 0 ? m.moe.dense_ffn : m.ffn;
  return mats * m.hidden * ffn;
}

StageShape HeaviestStage(const ModelSpec& m, int pp) {
  StageShape s;
  const int per = (m.layers + pp - 1) / pp;
  // The first `per` layers (stage 0 holds the leading dense layers of DeepSeek-style models; the
  // MoE share is the model's).
  int moe_total = 0;
  for (int i = 0; i < m.layers; ++i) moe_total += m.layer_is_moe(i) ? 1 : 0;
  s.moe = static_cast<int>(std::lround(static_cast<double>(moe_total) * per / m.layers));
  s.dense = per - s.moe;
  s.head = true;  // the last stage's head is counted on the heaviest stage (upper bound)
  return s;
}

double StageKvBytesPerToken(const Layout& l, const StageShape& st) {
  const ModelSpec& m = *l.m;
  const double all = KvBytesPerToken(m, l.kv);
  const double per_layer = all / m.layers;
  // Attention DP: each GPU caches its own sequences whole; per replica token that is 1/tp.
  const double share = l.attention_dp ? 1.0 / l.tp
                       : m.is_mla()   ? 1.0
                                      : Div(std::max(1, m.kv_heads / l.tp), m.kv_heads);
  return per_layer * share * (st.dense + st.moe);
}

StageWeights StageWeightBytes(const Layout& l, const StageShape& st) {
  const ModelSpec& m = *l.m;
  StageWeights w;
  const double tp = l.attn_tp();
  const double attn = AttentionParams(m) / tp;
  w.gemm_params =
      st.dense * (attn + DenseMlpParams(m, false) / tp) +
      st.moe * (attn + DenseMlpParams(m, true) / tp + m.moe.num_experts * ExpertParams(m) / l.tp);
  const double table = static_cast<double>(m.vocab) * m.hidden / tp;
  w.other_params =
      (m.tied_embeddings || l.pp > 1 ? 1.0 : 2.0) * table + (st.dense + st.moe) * 2.0 * m.hidden;
  w.bytes = w.gemm_params * WeightBytesPerParam(l.wdtype, l.quant, l.group) + w.other_params * 2.0;
  return w;
}

PhaseBreakdown StageIteration(const Layout& l, const StageShape& st, const Work& w) {
  PhaseBreakdown out;
  const double kv_tok = StageKvBytesPerToken(l, st);
  if (st.dense > 0) Accumulate(out, Layer(l, st, w, false, kv_tok), st.dense);
  if (st.moe > 0) Accumulate(out, Layer(l, st, w, true, kv_tok), st.moe);
  if (st.head) {
    // LM head over the tokens that sample (one per decoding sequence and per finished prompt),
    // kept in BF16 by quantised checkpoints; FP32 logits for the sampler.
    const ModelSpec& m = *l.m;
    Acc a{l.engine->kernel_latency_s, {}};
    const double out_tokens = w.dec_seqs + std::ceil(w.pre_seqs);
    const double params = static_cast<double>(m.vocab) * m.hidden / l.tp;
    const double peak = ComputePeak(*l.hw, WeightDType::kBf16) * l.engine->gemm_efficiency;
    const double bytes = params * 2.0 + out_tokens * Div(m.vocab, l.tp) * kLogitBytes;
    a.Add(Div(2.0 * out_tokens * params, peak),
          Div(bytes, l.hw->hbm_bw_bytes_per_s * l.engine->decode_hbm_fraction), 3);
    a.b.total_s = a.b.compute_s + a.b.hbm_s + a.b.launch_s;
    Accumulate(out, a.b, 1);
  }
  return out;
}

}  // namespace trainsim::infer

#include "trainsim/model.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace trainsim {
namespace {

constexpr int kMaxModelLayers = 100000;
constexpr int kMaxModelExperts = 1 << 20;
constexpr int64_t kMaxModelDim = int64_t{1} << 24;
constexpr double kMaxModelParams = 1e15;

int64_t NormParams(const ModelSpec& m, int64_t width) {
  return m.layernorm ? 2 * width : width;
}

int64_t AttentionParams(const ModelSpec& m) {
  const int64_t h = m.hidden;
  if (m.is_mla()) {
    // DeepSeek-V2 (arXiv 2405.04434) section 2.1: low-rank q and joint kv compression.
    const MlaSpec& a = m.mla;
    const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    int64_t q = a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * m.heads * qk
                                  : h * m.heads * qk;
    int64_t kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank +
                 a.kv_lora_rank * m.heads * (a.qk_nope_head_dim + a.v_head_dim);
    int64_t o = m.heads * a.v_head_dim * h;
    return q + kv + o;
  }
  const int64_t q_out = static_cast<int64_t>(m.heads) * m.head_dim;
  const int64_t kv_out = static_cast<int64_t>(m.kv_heads) * m.head_dim;
  int64_t p = h * (q_out + 2 * kv_out) + q_out * h;
  if (m.linear_bias || m.qkv_bias) p += q_out + 2 * kv_out;
  if (m.linear_bias) p += h;
  if (m.qk_norm) p += 2 * m.head_dim;
  return p;
}

int64_t MlpParams(const ModelSpec& m, int64_t ffn) {
  const int64_t h = m.hidden;
  int64_t p = (m.gated_mlp ? 3 : 2) * h * ffn;
  if (m.linear_bias) p += (m.gated_mlp ? 2 : 1) * ffn + h;
  return p;
}

}  // namespace

ParamCounts CountParams(const ModelSpec& m) {
  ParamCounts c;
  const int64_t h = m.hidden;
  c.embedding = m.vocab * h + m.learned_pos_emb * h;
  c.output = m.tied_embeddings ? 0 : m.vocab * h;
  c.final_norm = NormParams(m, h);
  const int64_t common = AttentionParams(m) + 2 * NormParams(m, h);
  const int64_t dense_ffn = (m.is_moe() && m.moe.dense_ffn > 0) ? m.moe.dense_ffn : m.ffn;
  c.dense_layer = common + MlpParams(m, dense_ffn);
  if (m.is_moe()) {
    const MoeSpec& e = m.moe;
    const int64_t router = h * e.num_experts;
    const int64_t expert = MlpParams(m, e.expert_ffn);
    const int64_t shared = e.shared_ffn > 0 ? MlpParams(m, e.shared_ffn) : 0;
    c.moe_layer_total = common + router + e.num_experts * expert + shared;
    c.moe_layer_active = common + router + e.top_k * expert + shared;
  }
  int64_t total = c.embedding + c.output + c.final_norm;
  int64_t active = total;
  for (int i = 0; i < m.layers; ++i) {
    if (m.layer_is_moe(i)) {
      total += c.moe_layer_total;
      active += c.moe_layer_active;
    } else {
      total += c.dense_layer;
      active += c.dense_layer;
    }
  }
  c.total = total;
  c.active = active;
  // DeepSeek-V3 report section 2.2: each MTP module = two RMSNorms, a 2h->h projection and one
  // transformer block; embedding and output head are shared with the main model.
  if (m.mtp_layers > 0) {
    const int64_t block = m.is_moe() ? c.moe_layer_total : c.dense_layer;
    c.mtp_total = m.mtp_layers * (2 * NormParams(m, h) + 2 * h * h + block);
  }
  return c;
}

Status ValidateAttention(const AttentionSpec& a) {
  if (a.window < 0) return Status::Invalid("sliding_window", "must be >= 0 (0 = none)");
  if (a.window > kMaxModelDim)
    return Status::Invalid("sliding_window", "must be <= " + std::to_string(kMaxModelDim));
  if (a.window_layers < -1)
    return Status::Invalid("max_window_layers", "window layers must be >= 0 (-1 = all)");
  if (!(a.mean_document_tokens >= 0) || !std::isfinite(a.mean_document_tokens))
    return Status::Invalid("mean_document_tokens", "must be a finite number >= 0 (0 = unknown)");
  if (a.kind != AttentionKind::kDenseCausal && a.window == 0 && !a.document_masking)
    return Status::Invalid("window_tokens",
                           "a sliding-window or block-sparse pattern needs a "
                           "window or document masking");
  return Status::Ok();
}

Status ValidateModel(const ModelSpec& m) {
  auto bad = [&](const std::string& field, const std::string& rule) {
    return Status::Invalid(field, rule).WithContext("model " + m.name);
  };
  if (m.hidden <= 0) return bad("hidden_size", "must be > 0");
  if (m.layers <= 0) return bad("num_hidden_layers", "must be > 0");
  if (m.heads <= 0) return bad("num_attention_heads", "must be > 0");
  if (m.kv_heads <= 0) return bad("num_key_value_heads", "must be > 0");
  if (m.heads % m.kv_heads != 0)
    return bad("num_key_value_heads", "num_attention_heads (" + std::to_string(m.heads) +
                                          ") must be divisible by it (" +
                                          std::to_string(m.kv_heads) + ")");
  if (!m.is_mla() && m.head_dim <= 0) return bad("head_dim", "must be > 0");
  if (m.ffn <= 0 && !(m.is_moe() && m.moe.first_k_dense == 0))
    return bad("intermediate_size", "must be > 0");
  if (m.vocab <= 0) return bad("vocab_size", "must be > 0");
  if (!m.is_moe() && m.moe.top_k > 0)  // experts per token without experts: not a dense model
    return bad("num_experts_per_tok",
               "is " + std::to_string(m.moe.top_k) + " but the model has no routed experts");
  if (m.is_moe()) {
    if (m.moe.top_k <= 0 || m.moe.top_k > m.moe.num_experts)
      return bad("num_experts_per_tok", "must be in [1, num_experts]");
    if (m.moe.expert_ffn <= 0) return bad("moe_intermediate_size", "must be > 0");
    if (m.moe.first_k_dense < 0 || m.moe.first_k_dense > m.layers)
      return bad("first_k_dense_replace", "must be in [0, num_hidden_layers]");
    if (m.moe.layer_freq < 1) return bad("moe_layer_freq", "must be >= 1");
  }
  if (m.is_mla() && (m.mla.qk_nope_head_dim <= 0 || m.mla.v_head_dim <= 0))
    return bad("qk_nope_head_dim", "MLA needs qk_nope_head_dim and v_head_dim > 0");
  if (m.mtp_layers < 0) return bad("mtp_layers", "must be >= 0");
  if (Status st = ValidateAttention(m.attention); !st.ok())
    return st.WithContext("model " + m.name);
  // Upper bounds: parameter counts must fit in int64 and the per-layer loops stay short.
  if (m.layers > kMaxModelLayers)
    return bad("num_hidden_layers", "must be <= " + std::to_string(kMaxModelLayers));
  if (m.mtp_layers > m.layers) return bad("mtp_layers", "must be <= num_hidden_layers");
  if (m.is_moe() && m.moe.num_experts > kMaxModelExperts)
    return bad("num_experts", "must be <= " + std::to_string(kMaxModelExperts));
  struct Dim {
    const char* name;
    int64_t v;
  };
  for (Dim d :
       {Dim{"hidden_size", m.hidden}, Dim{"num_attention_heads", m.heads},
        Dim{"head_dim", m.head_dim}, Dim{"intermediate_size", m.ffn}, Dim{"vocab_size", m.vocab},
        Dim{"moe_intermediate_size", m.moe.expert_ffn},
        Dim{"shared_expert_intermediate_size", m.moe.shared_ffn}, Dim{"dense_ffn", m.moe.dense_ffn},
        Dim{"n_positions", m.learned_pos_emb}, Dim{"q_lora_rank", m.mla.q_lora_rank},
        Dim{"kv_lora_rank", m.mla.kv_lora_rank}, Dim{"qk_nope_head_dim", m.mla.qk_nope_head_dim},
        Dim{"qk_rope_head_dim", m.mla.qk_rope_head_dim}, Dim{"v_head_dim", m.mla.v_head_dim}})
    if (d.v > kMaxModelDim) return bad(d.name, "must be <= " + std::to_string(kMaxModelDim));
  // A generous over-estimate of the parameter count, in double (cannot overflow).
  const double h = static_cast<double>(m.hidden), heads = m.heads;
  double attn = 0;
  if (m.is_mla()) {
    const MlaSpec& a = m.mla;
    const double q_in = a.q_lora_rank > 0 ? static_cast<double>(a.q_lora_rank) : h;
    attn = h * static_cast<double>(a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim) +
           q_in * heads * static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim) +
           static_cast<double>(a.kv_lora_rank) * heads *
               static_cast<double>(a.qk_nope_head_dim + a.v_head_dim) +
           heads * static_cast<double>(a.v_head_dim) * h;
  } else {
    attn = 2 * h * (heads + m.kv_heads) * static_cast<double>(m.head_dim);
  }
  const double dense_mlp = 3 * h * static_cast<double>(std::max(m.ffn, m.moe.dense_ffn) + 1);
  const double moe_mlp =
      m.is_moe() ? 3 * h *
                       (static_cast<double>(m.moe.num_experts) * (m.moe.expert_ffn + 1) +
                        static_cast<double>(m.moe.shared_ffn))
                 : 0;
  const double per_layer = attn + dense_mlp + moe_mlp + 4 * h * (heads + 4);
  const double total = (2.0 * m.vocab + m.learned_pos_emb + 4) * h +
                       (static_cast<double>(m.layers) + m.mtp_layers) * per_layer;
  if (!(total <= kMaxModelParams))
    return bad("hidden_size", "the sizes give about " + std::to_string(total) +
                                  " parameters; at most 1e15 are supported");
  return Status::Ok();
}

}  // namespace trainsim

// ModelSpec: the architecture of a decoder-only transformer, as far as cost and memory need it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/status.h"

namespace trainsim {

struct MoeSpec {
  int num_experts = 0;     // routed experts; 0 = dense model
  int top_k = 0;           // experts per token
  int64_t expert_ffn = 0;  // intermediate size of one routed expert
  int64_t shared_ffn = 0;  // total intermediate size of the shared expert(s); 0 = none
  int first_k_dense = 0;   // leading layers with a dense MLP
  int64_t dense_ffn = 0;   // intermediate size of those dense layers (0 = ModelSpec::ffn)
  int layer_freq = 1;      // every layer_freq-th layer (after first_k_dense) is MoE
};

struct MlaSpec {            // DeepSeek-V2/V3 multi-head latent attention; all zero = not MLA
  int64_t q_lora_rank = 0;  // 0 = no query compression
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

// Which keys a query attends to (docs/MODEL.md, "Attention patterns").
enum class AttentionKind : uint8_t {
  kDenseCausal,    // every earlier position of the training sequence
  kSlidingWindow,  // the last `window` positions, token-exact (FlashAttention window_size)
  kBlockSparse,    // a causal / window / document mask applied at 128-token block granularity
                   // (FlexAttention block mask: a block that is not fully masked is computed)
  kChunkedLocal,   // the windowed layers attend within aligned chunks of `window` positions
                   // (Llama-4 attention_chunk_size, iRoPE): chunk offset j sees j + 1 keys
};

struct AttentionSpec {
  AttentionKind kind = AttentionKind::kDenseCausal;
  int64_t window = 0;  // tokens a query sees, itself included (chunk size); 0 = no window
  // Layers that use the window (Qwen2 / Mistral semantics: the layers from max_window_layers
  // on); -1 = every layer. Layers outside it attend densely (causal).
  int window_layers = -1;
  bool document_masking = false;    // tokens attend only within their document (packed sequences)
  double mean_document_tokens = 0;  // mean document length; 0 = unknown (see kDefaultDocument...)
};

// Mean document length assumed when documents are masked and no mean is given: FineWeb in GPT-2
// tokens, ~100e9 tokens over 160,677,091 documents (HuggingFaceFW/fineweb_100BT dataset card) =
// 622. docs/MODEL.md, "Attention patterns".
inline constexpr double kDefaultMeanDocumentTokens = 622;

// A key of the file a model was read from that would change the architecture and that trainsim
// does not model (an HF config.json's vision_config, lm_head_bias, ...): the reports list it as
// ignored, so that the model costed is not silently another (issue 11).
struct IgnoredModelKey {
  std::string key;    // as in the file ("text_config.x" inside a nested text model)
  std::string value;  // the value as JSON text, shortened
  std::string why;
};

struct ModelSpec {
  std::string name;
  int64_t hidden = 0;    // h
  int layers = 0;        // transformer layers (MTP modules not included)
  int heads = 0;         // attention heads a
  int kv_heads = 0;      // key/value heads (GQA); == heads for MHA
  int64_t head_dim = 0;  // per-head dimension
  int64_t ffn = 0;       // dense MLP intermediate size
  int64_t vocab = 0;
  bool gated_mlp = true;  // SwiGLU (3 matrices) vs plain GELU (2 matrices)
  bool tied_embeddings = false;
  bool layernorm = false;       // LayerNorm (weight+bias) vs RMSNorm (weight only)
  bool linear_bias = false;     // biases on all linear layers (GPT-2/MPT style)
  bool qkv_bias = false;        // biases on the QKV projection only (Qwen2)
  bool qk_norm = false;         // per-head RMSNorm on q and k (Qwen3)
  int64_t learned_pos_emb = 0;  // rows of a learned position-embedding table (GPT); 0 = RoPE
  bool dropout = false;         // attention/hidden dropout masks are saved
  int mtp_layers = 0;           // DeepSeek-V3 multi-token-prediction modules
  MoeSpec moe;
  MlaSpec mla;
  AttentionSpec attention;
  std::vector<IgnoredModelKey> ignored_keys;  // what the reader left out; not architecture

  // Layers whose attention uses attention.window (0 without a window).
  int windowed_layers() const {
    if (attention.window <= 0) return 0;
    return attention.window_layers < 0 ? layers : std::min(layers, attention.window_layers);
  }

  bool is_moe() const { return moe.num_experts > 0; }
  bool is_mla() const { return mla.kv_lora_rank > 0; }
  // True when layer i (0-based) has routed experts.
  bool layer_is_moe(int i) const {
    return is_moe() && i >= moe.first_k_dense && ((i - moe.first_k_dense) % moe.layer_freq == 0);
  }
};

// Parameter counts, exact for the architecture (GQA/MLA aware, MoE total and active).
struct ParamCounts {
  int64_t embedding = 0;  // token (+ position) embedding
  int64_t output = 0;     // LM head; 0 when tied
  int64_t final_norm = 0;
  int64_t dense_layer = 0;       // one layer with a dense MLP
  int64_t moe_layer_total = 0;   // one MoE layer, all experts
  int64_t moe_layer_active = 0;  // one MoE layer, top_k experts + shared
  int64_t mtp_total = 0;         // all MTP modules (not in total/active)
  int64_t total = 0;             // whole model without MTP
  int64_t active = 0;            // activated per token without MTP
};

ParamCounts CountParams(const ModelSpec& m);

// Checks internal consistency; the message names the field and the rule.
Status ValidateModel(const ModelSpec& m);
// The attention-pattern rules alone (window >= 0, mean document length finite and >= 0, ...).
Status ValidateAttention(const AttentionSpec& a);

// Parses a model from JSON text: an HF config.json of any decoder-only model_type (the
// architecture is read from the keys present, with each model class's defaults; hybrid and
// per-layer architectures are refused naming the key; docs/INPUTS.md), the `model` object of the
// validation schema, or a SimuMax model JSON. Unknown HF keys are ignored (configs carry many
// runtime keys); NaN / Infinity tokens are accepted where they mean "no limit".
Result<ModelSpec> ParseModelJson(std::string_view text, std::string_view origin);

// An embedded preset by id (see ListModelPresets); never reads a file. NotFound lists the ids.
// The model's name is the id.
Result<ModelSpec> LoadModelPreset(std::string_view id);
// Reads and parses a model file (any format ParseModelJson accepts); NotFound names the path.
Result<ModelSpec> LoadModelFile(std::string_view path);
// Convenience for command lines: the preset `id_or_path` if there is one, else, if the argument
// looks like a path (contains '/' or ".json"), the file. A server taking requests from others
// should call LoadModelPreset or ParseModelJson instead, so that a request cannot name a file.
Result<ModelSpec> LoadModel(std::string_view id_or_path);

}  // namespace trainsim

// Hugging Face config.json reader: the architecture comes from the keys present (any model_type),
// each model class's defaults fill absent keys, and what ModelSpec cannot represent is refused by
// name. Sources: the transformers configuration classes
// (src/transformers/models/<type>/configuration_<type>.py, v4.57) and, for remote-code models,
// the configuration file shipped with the checkpoint (ChatGLM, Baichuan, InternLM, MPT).
#include "spec/hf_config.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "spec/json_fields.h"

namespace trainsim::detail {
namespace {

using nlohmann::json;

// Facts a config.json may leave out, per model class (model_type).
struct HfClass {
  const char* type;
  bool gated;          // gate+up+down MLP (SwiGLU / GeGLU) vs a two-matrix MLP
  bool tied;           // the class's tie_word_embeddings default
  bool layernorm;      // LayerNorm with weight and bias (else RMSNorm-sized: weight only)
  bool bias;           // biases on every linear layer
  bool qkv_bias;       // biases on the q/k/v projections
  bool qk_norm;        // per-head q/k norms
  bool window_opt_in;  // sliding_window applies only with use_sliding_window: true
  int64_t ffn_per_h;   // intermediate size = ffn_per_h * hidden when absent (0 = required)
};

// gated follows the class, not the activation name: Gemma's GeGLU and StarCoder2's plain MLP both
// use gelu_pytorch_tanh (Gemma*MLP has gate_proj; Starcoder2MLP has c_fc/c_proj only).
// tied: PretrainedConfig defaults tie_word_embeddings to True; Llama/Mistral/Qwen/Phi-3/DeepSeek/
// NeoX/GPT-J/OLMo configs override it to False; Gemma 1-3, Cohere, StarCoder2, Falcon, BLOOM,
// OPT, GPT-2/BigCode and MPT keep True; so do Ernie4_5Config and Ernie4_5_MoeConfig.
constexpr HfClass kClasses[] = {
    // type            gated  tied   ln     bias   qkvb   qknorm opt-in ffn/h
    {"llama", true, false, false, false, false, false, false, 0},
    {"mistral", true, false, false, false, false, false, false, 0},
    {"mixtral", true, false, false, false, false, false, false, 0},
    {"ministral", true, false, false, false, false, false, false, 0},  // MinistralConfig
    {"yi", true, false, false, false, false, false, false, 0},
    {"baichuan", true, false, false, false, false, false, false, 0},
    {"internlm", true, false, false, false, false, false, false, 0},
    {"internlm2", true, false, false, false, false, false, false, 0},
    {"internlm3", true, false, false, false, false, false, false, 0},
    {"granite", true, false, false, false, false, false, false, 0},
    {"granitemoe", true, false, false, false, false, false, false, 0},
    {"granitemoeshared", true, false, false, false, false, false, false, 0},
    {"granitemoehybrid", true, false, false, false, false, false, false, 0},
    {"exaone", true, false, false, false, false, false, false, 0},
    {"olmo", true, false, false, false, false, false, false, 0},
    {"olmo2", true, false, false, false, false, true, false, 0},
    {"olmoe", true, false, false, false, false, true, false, 0},
    {"olmo3", true, false, false, false, false, true, false, 0},
    {"exaone4", true, false, false, false, false, true, false, 0},  // Exaone4Attention q/k norms
    {"exaone_moe", true, false, false, false, false, true, false,
     0},                                                             // ExaoneMoeAttention q/k norms
    {"apertus", false, false, false, false, false, true, false, 0},  // ApertusMLP: up, xIELU, down
    {"phi3", true, false, false, false, false, false, false, 0},
    {"phimoe", true, false, true, false, false, false, false, 0},
    {"qwen2", true, false, false, false, true, false, true, 0},
    {"qwen2_moe", true, false, false, false, true, false, true, 0},
    {"qwen2_vl", true, false, false, false, true, false, true, 0},
    {"qwen2_vl_text", true, false, false, false, true, false, true, 0},
    {"qwen2_5_vl", true, false, false, false, true, false, true, 0},
    {"qwen2_5_vl_text", true, false, false, false, true, false, true, 0},
    {"qwen3", true, false, false, false, false, true, true, 0},
    {"qwen3_moe", true, false, false, false, false, true, true, 0},
    {"qwen3_vl_text", true, false, false, false, false, true, true, 0},
    {"qwen3_vl_moe_text", true, false, false, false, false, true, true, 0},
    {"deepseek", true, false, false, false, false, false, false, 0},
    {"deepseek_v2", true, false, false, false, false, false, false, 0},
    {"deepseek_v3", true, false, false, false, false, false, false, 0},
    {"kimi_k2", true, false, false, false, false, false, false, 0},
    {"glm4_moe", true, false, false, false, false, false, false, 0},
    {"glm4_moe_lite", true, false, false, false, false, false, false, 0},
    {"glm", true, false, false, false, false, false, false, 0},
    {"glm4", true, false, false, false, true, false, false, 0},
    {"chatglm", true, false, false, false, true, false, false, 0},
    {"minimax_m2", true, false, false, false, false, false, false, 0},
    {"gpt_oss", true, false, false, false, true, false, false, 0},
    {"llama4_text", true, false, false, false, false, false, false, 0},
    {"dbrx", true, false, false, false, false, false, false, 0},
    {"stablelm", true, false, true, false, false, false, false, 0},
    {"smollm3", true, true, false, false, false, false, false, 0},
    {"ernie4_5", true, true, false, false, false, false, false, 0},
    {"ernie4_5_moe", true, true, false, false, false, false, false, 0},
    {"gemma", true, true, false, false, false, false, false, 0},
    {"gemma2", true, true, false, false, false, false, false, 0},
    {"gemma3_text", true, true, false, false, false, true, false, 0},
    {"cohere", true, true, false, false, false, false, false, 0},
    {"cohere2", true, true, false, false, false, false, false, 0},
    {"starcoder2", false, true, true, true, false, false, false, 0},
    {"nemotron", false, false, true, false, false, false, false, 0},
    {"falcon", false, true, true, false, false, false, false, 4},
    {"RefinedWeb", false, true, true, false, false, false, false, 4},       // Falcon-40B, old
    {"RefinedWebModel", false, true, true, false, false, false, false, 4},  // Falcon-7B, old
    {"gpt_neox", false, false, true, true, false, false, false, 0},
    {"gptj", false, false, true, false, false, false, false, 4},
    {"codegen", false, false, true, false, false, false, false, 4},  // CodeGen: GPT-J layout
    {"gpt_neo", false, true, true, true, false, false, false, 4},
    {"gpt_bigcode", false, true, true, true, false, false, false, 4},
    {"bloom", false, true, true, true, false, false, false, 4},
    {"opt", false, true, true, true, false, false, false, 0},
    {"mpt", false, true, false, false, false, false, false, 4},
    {"phi", false, false, true, true, false, false, false, 0},
    {"phi-msft", false, false, true, true, false, false, false, 4},  // Phi-2 remote code
    {"qwen", true, false, false, false, true, false, false, 0},      // Qwen-1 remote code
};

const HfClass* FindClass(const std::string& type) {
  for (const HfClass& c : kClasses)
    if (type == c.type) return &c;
  return nullptr;
}

// Architectures whose layers are not all attention + MLP (state-space, linear attention) or that
// are not decoder-only: ModelSpec has one layer kind, so these are refused by name.
constexpr const char* kRefusedTypes[] = {
    "mamba", "mamba2", "falcon_mamba", "falcon_h1", "jamba", "zamba", "zamba2", "bamba",
    "nemotron_h", "rwkv", "recurrent_gemma", "lfm2", "qwen3_next", "minimax", "minimax_text_01",
    "minimax_m1", "t5", "bart", "whisper",
    // Gemma-3n: per-layer embeddings, AltUp and LAuReL blocks; Kimi-Linear: KDA linear attention
    // layers; LongCat-Flash: two attention and MLP sublayers per layer and zero-compute experts;
    // PLaMo-2, Hymba, Phi-4-mini-flash (SambaY), xLSTM: recurrent / state-space layers; JetMoE:
    // mixture-of-attention-heads (experts inside attention).
    "gemma3n", "gemma3n_text", "kimi_linear", "longcat_flash", "plamo2", "hymba", "phi4flash",
    "xlstm", "jetmoe"};

// Keys that describe per-layer or hybrid layer stacks.
struct RefusedKey {
  const char* key;
  const char* why;
};
constexpr RefusedKey kRefusedKeys[] = {
    {"block_configs", "per-layer block configs (Nemotron-NAS / DeciLM) are not representable"},
    {"hybrid_override_pattern", "hybrid Mamba/attention layer patterns are not representable"},
    {"layers_block_type", "hybrid Mamba/attention layer patterns are not representable"},
    {"attn_layer_period", "hybrid Mamba/attention layer patterns are not representable"},
    {"full_attention_interval", "hybrid linear/full attention layers are not representable"},
    {"linear_attn_config", "hybrid linear (KDA) / full attention layers are not representable"},
    {"cross_attention_layers",
     "cross-attention layers to image tokens (Llama-3.2-Vision) are not representable"},
};

// Keys whose non-finite value means "no limit" (Python writes float("inf") as Infinity).
constexpr const char* kNoLimitKeys[] = {"sliding_window", "attention_chunk_size",
                                        "max_position_embeddings", "max_window_layers"};

bool IsMarker(const json& v) {
  return v.is_string() && v.get_ref<const std::string&>().rfind(kNonFiniteMarker, 0) == 0;
}

// Non-finite values: null where the key means "no limit" or is not read; an error where a size
// would be read from it.
Status ScrubNonFinite(json& j, const std::string& origin) {
  static const char* kSizeKeys[] = {"hidden_size",
                                    "n_embd",
                                    "d_model",
                                    "num_hidden_layers",
                                    "n_layer",
                                    "n_layers",
                                    "num_layers",
                                    "num_attention_heads",
                                    "n_head",
                                    "n_heads",
                                    "num_key_value_heads",
                                    "num_kv_heads",
                                    "head_dim",
                                    "intermediate_size",
                                    "ffn_hidden_size",
                                    "n_inner",
                                    "ffn_dim",
                                    "vocab_size",
                                    "padded_vocab_size",
                                    "moe_intermediate_size",
                                    "num_local_experts",
                                    "n_routed_experts",
                                    "num_experts",
                                    "num_experts_per_tok",
                                    "kv_lora_rank",
                                    "q_lora_rank"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!IsMarker(it.value())) continue;
    const std::string& key = it.key();
    if (std::find(std::begin(kNoLimitKeys), std::end(kNoLimitKeys), key) == std::end(kNoLimitKeys))
      for (const char* s : kSizeKeys)
        if (key == s)
          return Status::Invalid(key,
                                 "a non-finite value (" +
                                     it.value().get<std::string>().substr(kNonFiniteMarker.size()) +
                                     ") is not a size")
              .WithContext(origin);
    it.value() = nullptr;
  }
  return Status::Ok();
}

// Lenient reads for keys that only select behaviour: a value of another type counts as absent
// (the typed FieldReader reads report wrong types for the keys that carry sizes).
std::string StringOr(const json& j, const char* key, const std::string& fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

bool IsTrue(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

bool GatedActivation(const std::string& act) {
  return act == "silu" || act == "swiglu" || act == "swish" || act == "geglu";
}

Status CheckActivation(FieldReader& r, const char* key, const std::string& act) {
  static const char* kKnown[] = {
      "silu",      "swiglu",  "swish",      "geglu", "gelu",  "gelu_new",     "gelu_pytorch_tanh",
      "gelu_fast", "gelu_10", "quick_gelu", "relu",  "relu2", "squared_relu", "tanh",
      "xielu"};
  for (const char* k : kKnown)
    if (act == k) return Status::Ok();
  r.Fail(key, "unsupported activation '" + act + "' (silu, swiglu, gelu, relu...)");
  return r.status();
}

// Reads the first of `keys` that is present; returns it, or nullptr when none is.
const char* FirstInt64(FieldReader& r, std::initializer_list<const char*> keys, int64_t& out,
                       long long min = 1) {
  const char* found = nullptr;
  for (const char* k : keys) {
    if (!found && r.Has(k)) {
      r.Int64(k, out, min);
      found = k;
    } else {
      r.Ignore(k);
    }
  }
  return found;
}

const char* FirstInt(FieldReader& r, std::initializer_list<const char*> keys, int& out,
                     long long min = 1) {
  int64_t v = out;
  const char* k = FirstInt64(r, keys, v, min);
  if (k && r.status().ok()) {
    if (v > (int64_t{1} << 30)) r.Fail(k, "must be <= 2^30");
    out = static_cast<int>(v);
  }
  return k;
}

// An integer inside a nested object (MPT / DBRX `attn_config`, `ffn_config`); a bad value fails
// `r` naming "<object>.<key>". Leaves `out` unchanged when absent.
template <typename T>
void NestedInt(const json& j, FieldReader& r, const char* obj, const char* key, T& out,
               long long min) {
  r.Ignore(obj);
  if (!r.Has(obj) || !j[obj].is_object() || !j[obj].contains(key) || j[obj][key].is_null()) return;
  const json& v = j[obj][key];
  const long long limit = int64_t{1} << 30;
  if (!v.is_number_integer() || v.get<long long>() < min || v.get<long long>() > limit)
    return r.Fail(std::string(obj) + "." + key,
                  "must be an integer in [" + std::to_string(min) + ", 2^30]");
  out = static_cast<T>(v.get<long long>());
}

Status Refusals(const json& j, const std::string& type, const std::string& origin) {
  // RWKV-4..7 (rwkv, rwkv5, rwkv6, rwkv7, RWKV remote code): recurrent time-mix layers.
  const bool rwkv = type.rfind("rwkv", 0) == 0;
  for (const char* t : kRefusedTypes)
    if (type == t || rwkv)
      return Status::Invalid("model_type", "'" + type +
                                               "' is not a decoder-only transformer of attention "
                                               "and MLP layers (state-space, linear-attention or "
                                               "encoder-decoder); not representable")
          .WithContext(origin);
  // DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): a lightning indexer picks index_topk keys
  // per query (DeepSeek-V3.2-Exp report); costing it as dense MLA would describe another job.
  const bool dsa_type = type == "deepseek_v32" || type == "glm_moe_dsa";
  if (dsa_type || (j.contains("index_topk") && !j["index_topk"].is_null()))
    return Status::Invalid(dsa_type ? "model_type" : "index_topk",
                           "DeepSeek Sparse Attention ('" + type +
                               "': lightning indexer + top-k key selection) is not "
                               "representable; set model_type to deepseek_v3 to cost it as "
                               "dense MLA")
        .WithContext(origin);
  for (const RefusedKey& k : kRefusedKeys)
    if (j.contains(k.key) && !j[k.key].is_null())
      return Status::Invalid(k.key, k.why).WithContext(origin);
  // MiniMax attn_type_list: 0 = lightning (linear) attention, 1 = softmax attention per layer
  // (MiniMax-Text-01 / M1 modeling code; vLLM's minimax loader: is_linear_attn_layer ==
  // attn_type_list[i] == 0). MiniMax-M2 ships a list of all 1s: every layer full attention.
  if (j.contains("attn_type_list") && j["attn_type_list"].is_array())
    for (const json& t : j["attn_type_list"])
      if (!(t.is_number_integer() && t.get<int64_t>() == 1))
        return Status::Invalid("attn_type_list",
                               "layer kind " + t.dump() +
                                   ": hybrid linear (lightning) attention layers are not "
                                   "representable (only 1, softmax attention, is)")
            .WithContext(origin);
  // Hunyuan cross-layer attention: cla_share_factor layers share one K/V projection.
  if (IsTrue(j, "use_cla"))
    return Status::Invalid("use_cla",
                           "cross-layer attention (K/V shared across layers) is not representable")
        .WithContext(origin);
  if (IsTrue(j, "is_encoder_decoder"))
    return Status::Invalid("is_encoder_decoder", "encoder-decoder models are not representable")
        .WithContext(origin);
  if (j.contains("layer_types") && j["layer_types"].is_array())
    for (const json& t : j["layer_types"]) {
      const std::string s = t.is_string() ? t.get<std::string>() : t.dump();
      if (s != "full_attention" && s != "sliding_attention" && s != "chunked_attention")
        return Status::Invalid("layer_types", "layer kind '" + s +
                                                  "' is not representable (only full_attention, "
                                                  "sliding_attention and chunked_attention "
                                                  "layers are)")
            .WithContext(origin);
    }
  return Status::Ok();
}

// The architecture's size keys, in every spelling transformers accepts.
void ReadShape(const json& j, FieldReader& r, const HfClass* cls, ModelSpec& m) {
  FirstInt64(r, {"hidden_size", "n_embd", "d_model", "n_embed"}, m.hidden);
  FirstInt(r, {"num_hidden_layers", "n_layer", "n_layers", "num_layers"}, m.layers);
  FirstInt(r, {"num_attention_heads", "n_head", "n_heads", "num_heads"}, m.heads);
  m.kv_heads = m.heads;
  const bool multi_query = IsTrue(j, "multi_query") && !IsTrue(j, "new_decoder_architecture");
  r.Ignore("multi_query");
  r.Ignore("new_decoder_architecture");
  if (multi_query) m.kv_heads = 1;  // Falcon-7B / GPT-BigCode: one shared k/v head
  bool chatglm_mq = false;
  r.Bool("multi_query_attention", chatglm_mq);
  if (chatglm_mq) r.Int("multi_query_group_num", m.kv_heads);
  r.Ignore("multi_query_group_num");
  FirstInt(r, {"num_key_value_heads", "num_kv_heads", "n_head_kv"}, m.kv_heads);
  // MPT / DBRX attn_config.kv_n_heads: ReadNestedLayerConfigs (by attention type).
  m.head_dim = m.heads > 0 ? m.hidden / m.heads : 0;
  FirstInt64(r, {"head_dim", "kv_channels", "attention_head_dim"}, m.head_dim);
  FirstInt64(r, {"padded_vocab_size", "vocab_size"}, m.vocab);
  if (FirstInt64(r, {"intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim"}, m.ffn)) return;
  double ratio = 0;
  r.Double("expansion_ratio", ratio);  // MPT
  if (ratio > 0)
    m.ffn = static_cast<int64_t>(ratio * static_cast<double>(m.hidden));
  else if (cls && cls->ffn_per_h > 0)
    m.ffn = cls->ffn_per_h * m.hidden;
  NestedInt(j, r, "ffn_config", "ffn_hidden_size", m.ffn, 1);  // DBRX
}

// A missing size key is named with its spellings, not reported as "must be > 0".
void RequireShape(FieldReader& r, const ModelSpec& m, bool dense_layers) {
  if (m.layers == 0)
    r.Fail("num_hidden_layers",
           "no layer count: expected num_hidden_layers, n_layer, n_layers or num_layers");
  if (m.hidden == 0)
    r.Fail("hidden_size", "no hidden size: expected hidden_size, n_embd or d_model");
  if (m.heads == 0)
    r.Fail("num_attention_heads",
           "no head count: expected num_attention_heads, n_head, n_heads or num_heads");
  if (m.vocab == 0) r.Fail("vocab_size", "no vocabulary size: expected vocab_size");
  if (m.ffn == 0 && dense_layers)
    r.Fail("intermediate_size",
           "no MLP size: expected intermediate_size, ffn_hidden_size, n_inner or ffn_dim");
  if (!r.Has("head_dim") && !r.Has("kv_channels") && !r.Has("attention_head_dim"))
    CheckHeadDimDefault(r, m);
}

void ReadActivationAndFlags(FieldReader& r, const HfClass* cls, const std::string& type,
                            bool named_type, ModelSpec& m) {
  std::string act;
  const char* act_key = nullptr;
  for (const char* k : {"hidden_activation", "hidden_act", "activation_function"}) {
    if (!act_key && r.Has(k)) {
      r.String(k, act);
      act_key = k;
    }
    r.Ignore(k);
  }
  if (act_key && !CheckActivation(r, act_key, act).ok()) return;
  if (act.empty()) act = "silu";
  m.gated_mlp = cls ? cls->gated : GatedActivation(act);
  // A class this table does not know: PretrainedConfig's tie_word_embeddings default is True and
  // transformers' save (PretrainedConfig.to_diff_dict) writes the key whenever its value differs
  // from that default, so a saved config.json that names a model_type and leaves the key out
  // ties (the tied GPT-2 and Gemma checkpoints ship no key; every untied Llama-family config writes
  // false). A text model whose type the reader synthesised ("<wrapper>_text") and a file without
  // a model_type (trainsim's own model objects) stay untied.
  m.tied_embeddings = cls ? cls->tied : named_type;
  r.Bool("tie_word_embeddings", m.tied_embeddings);
  if (cls) {
    m.layernorm = cls->layernorm;
    m.linear_bias = cls->bias;
    m.qkv_bias = cls->qkv_bias;
    m.qk_norm = cls->qk_norm;
  }
  // Bias switches: Falcon/InternLM `bias`, StarCoder2 `use_bias`, OPT `enable_bias`, MPT
  // `no_bias`, ChatGLM `add_bias_linear`/`add_qkv_bias`, StableLM `use_qkv_bias`, llama-style
  // `attention_bias` (q/k/v/o) .
  bool all_bias = m.linear_bias;
  for (const char* k : {"use_bias", "enable_bias", "add_bias_linear"}) r.Bool(k, all_bias);
  if (r.Has("bias")) {
    bool b = false;
    r.Bool("bias", b);
    if (type == "internlm")
      m.qkv_bias = b;
    else
      all_bias = b;
  }
  bool no_bias = !all_bias;
  r.Bool("no_bias", no_bias);
  m.linear_bias = !no_bias;
  for (const char* k : {"attention_bias", "add_qkv_bias", "use_qkv_bias", "qkv_bias"})
    r.Bool(k, m.qkv_bias);
  // LlamaConfig-family mlp_bias: biases on gate/up/down_proj. ModelSpec holds biases on every
  // linear layer or on q/k/v only, so an MLP with biases is costed as biases everywhere (the
  // o_proj bias this adds is one hidden-sized vector per layer).
  bool mlp_bias = false;
  r.Bool("mlp_bias", mlp_bias);
  if (mlp_bias) m.linear_bias = true;
  for (const char* k : {"use_qk_norm", "qk_layernorm"}) r.Bool(k, m.qk_norm);
  // Learned absolute positions: GPT-BigCode n_positions; OPT max_position_embeddings + 2 rows
  // (OPTLearnedPositionalEmbedding offset 2).
  if (type == "gpt_bigcode") r.Int64("n_positions", m.learned_pos_emb, 0);
  if (type == "gpt_neo") r.Int64("max_position_embeddings", m.learned_pos_emb, 0);
  if (type == "opt") {
    r.Int64("max_position_embeddings", m.learned_pos_emb, 0);
    if (m.learned_pos_emb > 0) m.learned_pos_emb += 2;
  }
}

}  // namespace

std::string QuoteNonFiniteTokens(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size())
        out += text[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    bool replaced = false;
    for (std::string_view tok : {"-Infinity", "Infinity", "NaN"}) {
      if (text.substr(i, tok.size()) == tok) {
        out += '"';
        out += kNonFiniteMarker;
        out += tok;
        out += '"';
        i += tok.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

bool LooksLikeHfConfig(const json& j) {
  for (const char* k : {"hidden_size", "n_embd", "d_model", "model_type", "text_config"})
    if (j.contains(k)) return true;
  return false;
}

namespace {

// The windowed layers a sliding_window_pattern names, or -1 without one. An integer N windows
// every layer but each N-th ((i + 1) % N != 0: Gemma3TextConfig, Cohere2Config, Exaone4Config;
// class defaults 6, 4, 4). EXAONE-4.0 / 4.5 checkpoints write a string of L (local) and G
// (global) letters repeated over the layers, the last layer global (TensorRT-LLM
// tensorrt_llm/_torch/models/modeling_exaone4.py check_is_sliding: layer_idx !=
// num_hidden_layers - 1 and pattern[layer_idx % len(pattern)] == "L"; transformers'
// Exaone4Config types it `str | int` and, with a string, takes the layers from layer_types).
int PatternWindowLayers(const json& j, FieldReader& r, const std::string& type, int layers) {
  const char* key = "sliding_window_pattern";
  if (j.contains(key) && j[key].is_string()) {
    r.Ignore(key);
    const std::string& p = j[key].get_ref<const std::string&>();
    if (p.empty() || p.find_first_not_of("LG") != std::string::npos) {
      r.Fail(key,
             "must be an integer or a string of L (local) and G (global) letters, got '" + p + "'");
      return -1;
    }
    int n = 0;
    for (int i = 0; i + 1 < layers; ++i) n += p[static_cast<size_t>(i) % p.size()] == 'L';
    return n;
  }
  int pattern = type == "gemma3_text" ? 6 : type == "cohere2" || type == "exaone4" ? 4 : 0;
  r.Int(key, pattern, 1);
  return pattern > 0 ? layers - layers / pattern : -1;
}

// Sliding-window attention. Mistral / Phi-3 / StarCoder2 window every layer when sliding_window
// is set; Qwen2-family classes only with use_sliding_window, from max_window_layers on
// (Qwen2Config builds layer_types that way); an explicit layer_types list names each layer.
// Without layer_types, Gemma2Config and GptOssConfig make the even layers sliding ((i + 1) % 2
// != 0), and Gemma3TextConfig / Cohere2Config / Exaone4Config every layer but each
// sliding_window_pattern-th (default 6 / 4 / 4). A window a file leaves out takes its class's
// default (FillClassDefaults); `null` is no window.
void ReadWindow(const json& j, FieldReader& r, const HfClass* cls, const std::string& type,
                ModelSpec& m) {
  int64_t window = 0;
  r.Int64("sliding_window", window, 0);
  bool use = !(cls && cls->window_opt_in);
  r.Bool("use_sliding_window", use);
  int max_window_layers = 0;
  r.Int("max_window_layers", max_window_layers, 0);
  const int pattern_layers = PatternWindowLayers(j, r, type, m.layers);
  r.Ignore("layer_types");
  if (!use || window <= 0) return;
  m.attention.kind = AttentionKind::kSlidingWindow;
  m.attention.window = window;
  if (r.Has("layer_types") && j["layer_types"].is_array()) {
    int n = 0;
    for (const json& t : j["layer_types"])
      n += t.is_string() && t.get<std::string>() == "sliding_attention";
    m.attention.window_layers = n;
  } else if (type == "gemma2" || type == "gpt_oss") {
    m.attention.window_layers = (m.layers + 1) / 2;
  } else if (pattern_layers >= 0) {
    m.attention.window_layers = pattern_layers;
  } else if (r.Has("max_window_layers")) {
    m.attention.window_layers = std::max(0, m.layers - max_window_layers);
  }
}

// GPT-Neo (GPTNeoConfig): attention_layers names each layer "global" or "local" (expanded from
// attention_types, e.g. [[["global", "local"], 12]]); local layers attend to the last
// window_size (default 256) positions.
void ReadGptNeoWindow(const json& j, FieldReader& r, ModelSpec& m) {
  int64_t window = 256;
  r.Int64("window_size", window, 1);
  r.Ignore("attention_types");
  r.Ignore("attention_layers");
  int64_t local = 0;  // saturating: a fuzzed repeat count must not overflow
  if (j.contains("attention_layers") && j["attention_layers"].is_array()) {
    for (const json& t : j["attention_layers"]) local += t.is_string() && t == "local";
  } else if (j.contains("attention_types") && j["attention_types"].is_array()) {
    for (const json& g : j["attention_types"])
      if (g.is_array() && g.size() == 2 && g[0].is_array() && g[1].is_number_integer())
        for (const json& t : g[0])
          if (t.is_string() && t == "local")
            local += std::clamp<int64_t>(g[1].get<int64_t>(), 0, int64_t{1} << 30);
  }
  if (local <= 0) return;
  m.attention.kind = AttentionKind::kSlidingWindow;
  m.attention.window = window;
  m.attention.window_layers = static_cast<int>(std::min<int64_t>(local, m.layers));
}

// Chunked local attention (Llama-4 iRoPE, transformers Llama4TextConfig): the RoPE layers attend
// within aligned chunks of attention_chunk_size (default 8192 for llama4_text); the NoPE layers
// (no_rope_layers[i] == 0, by default each no_rope_layer_interval-th = 4th layer) attend
// globally. layer_types, when given, names them chunked_attention / full_attention.
void ReadChunk(const json& j, FieldReader& r, const std::string& type, ModelSpec& m) {
  int64_t chunk = type == "llama4_text" ? 8192 : 0;
  if (r.Has("attention_chunk_size") && j["attention_chunk_size"].is_null()) {
    chunk = 0;  // null / Infinity: no chunking
    r.Ignore("attention_chunk_size");
  } else {
    r.Int64("attention_chunk_size", chunk, 0);
  }
  int interval = 4;
  // Llama-4 checkpoints spell it nope_layer_interval; Llama4TextConfig no_rope_layer_interval.
  FirstInt(r, {"no_rope_layer_interval", "nope_layer_interval"}, interval);
  r.Ignore("no_rope_layers");
  if (chunk <= 0 || m.layers <= 0) return;
  if (m.attention.window > 0) {
    r.Fail("attention_chunk_size",
           "chunked attention together with a sliding window is not "
           "representable");
    return;
  }
  int chunked = m.layers - m.layers / interval;
  if (j.contains("layer_types") && j["layer_types"].is_array()) {
    chunked = 0;
    for (const json& t : j["layer_types"])
      chunked += t.is_string() && t.get<std::string>() == "chunked_attention";
  } else if (j.contains("no_rope_layers") && j["no_rope_layers"].is_array() &&
             !j["no_rope_layers"].empty()) {
    chunked = 0;
    for (const json& t : j["no_rope_layers"]) chunked += t.is_number() && t.get<double>() != 0;
  }
  if (chunked == 0) return;
  m.attention.kind = AttentionKind::kChunkedLocal;
  m.attention.window = chunk;
  m.attention.window_layers = chunked;
}

// Dense layers given as a list (Qwen2/3-MoE mlp_only_layers): representable when it is the
// prefix 0..k-1. Returns k, or -1 after failing the reader.
int DensePrefix(const json& j, FieldReader& r, const char* key) {
  r.Ignore(key);
  if (!r.Has(key)) return 0;
  if (!j[key].is_array()) {
    r.Fail(key, "must be a list of layer indices");
    return -1;
  }
  std::vector<int64_t> v;
  for (const json& x : j[key]) {
    if (!x.is_number_integer()) {
      r.Fail(key, "must be a list of layer indices");
      return -1;
    }
    v.push_back(x.get<int64_t>());
  }
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != static_cast<int64_t>(i)) {
      r.Fail(key, "dense layers must be the first k layers (0..k-1) to be representable");
      return -1;
    }
  return static_cast<int>(v.size());
}

// MoE from whichever keys the class uses. Placement rules (transformers modeling code):
// DeepSeek: layer i is MoE when i >= first_k_dense_replace and i % moe_layer_freq == 0;
// Qwen2/3-MoE: when i is not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0;
// Llama-4: when (i + 1) % interleave_moe_layer_step == 0. ModelSpec's rule (i >= first_k_dense,
// (i - first_k_dense) % layer_freq == 0) expresses each exactly.
// Hunyuan writes MoE sizes per layer (moe_topk, moe_intermediate_size, num_shared_expert: one entry
// per layer, indexed by layer_idx in modeling_hunyuan.py). A list whose entries are all equal is
// that value; lists that differ describe per-layer shapes ModelSpec cannot hold.
Status CollapsePerLayerLists(json& j, const std::string& origin) {
  for (const char* k : {"moe_topk", "moe_intermediate_size", "num_shared_expert"}) {
    auto it = j.find(k);
    if (it == j.end() || !it->is_array()) continue;
    if (it->empty()) return Status::Invalid(k, "is an empty per-layer list").WithContext(origin);
    const json first = it->front();
    for (const json& v : *it)
      if (v != first)
        return Status::Invalid(k, "per-layer values differ (" + first.dump() + " vs " + v.dump() +
                                      "); layers of different MoE shapes are not representable")
            .WithContext(origin);
    *it = first;
  }
  return Status::Ok();
}

// ERNIE-4.5 MoE (Ernie4_5_MoeDecoderLayer): layer i is MoE when (i + 1) % moe_layer_interval == 0
// and moe_layer_start_index <= i <= moe_layer_end_index (-1 = the last layer); the class defaults
// are start 1, interval 1 (configuration_ernie4_5_moe.py). As ModelSpec's rule: the first MoE
// layer is the first i >= start with (i + 1) % interval == 0, then every interval-th.
void ErnieLayers(FieldReader& r, const std::string& type, const ModelSpec& m, MoeSpec& moe) {
  int start = type == "ernie4_5_moe" ? 1 : 0, end = -1, interval = 1;
  r.Int("moe_layer_start_index", start, 0);
  r.Int("moe_layer_end_index", end, -1);
  r.Int("moe_layer_interval", interval, 1);
  if (end >= 0 && end < m.layers - 1)
    return r.Fail("moe_layer_end_index", "is " + std::to_string(end) +
                                             ": dense layers after the MoE layers are not "
                                             "representable (only a dense prefix is)");
  const int64_t first = (int64_t{start} + interval) / interval * interval - 1;
  moe.first_k_dense = static_cast<int>(std::min<int64_t>(first, std::numeric_limits<int>::max()));
  moe.layer_freq = interval;
}

// The MoE layers as a list: Llama-4 moe_layers (indices; Llama4TextConfig, whose modeling code
// uses is_moe_layer = layer_idx in moe_layers over interleave_moe_layer_step, from which the class
// only derives its default), EXAONE-MoE mlp_layer_types ("dense" / "sparse" per layer:
// transformers ExaoneMoeConfig) or is_moe_layer (a bool per layer: TensorRT-LLM
// _torch/models/modeling_exaone_moe.py check_is_moe). Representable when it is every freq-th
// layer from some k on.
bool LayerListEntry(const std::string& key, const json& x, int64_t i, std::vector<int64_t>& v) {
  if (key == "moe_layers") {
    if (x.is_number_integer()) v.push_back(x.get<int64_t>());
    return x.is_number_integer();
  }
  const bool ok = key == "is_moe_layer" ? x.is_boolean() : x == "dense" || x == "sparse";
  if (ok && (x == true || x == "sparse")) v.push_back(i);
  return ok;
}

void MoeLayerList(const json& j, FieldReader& r, int layers, MoeSpec& moe) {
  const char* key = nullptr;
  for (const char* k : {"moe_layers", "mlp_layer_types", "is_moe_layer"}) {
    r.Ignore(k);
    if (!key && j.contains(k) && j[k].is_array()) key = k;
  }
  if (!key) return;
  std::vector<int64_t> v;
  int64_t n = 0;
  for (const json& x : j[key])
    if (!LayerListEntry(key, x, n++, v))
      return r.Fail(key, std::string(key) == "moe_layers" ? "must be a list of layer indices"
                         : std::string(key) == "is_moe_layer"
                             ? "must be a list of true / false, one per layer"
                             : "must be a list of \"dense\" / \"sparse\", one per layer");
  if (std::string(key) != "moe_layers" && n != layers)
    return r.Fail(key, "has " + std::to_string(n) + " entries for " + std::to_string(layers) +
                           " layers (num_hidden_layers)");
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  if (v.empty() || v.front() < 0 || v.back() >= layers)
    return r.Fail(key, "must name MoE layers in [0, num_hidden_layers)");
  const int64_t first = v.front(), freq = v.size() > 1 ? v[1] - v[0] : layers - v[0];
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != first + static_cast<int64_t>(i) * freq || v.back() + freq < layers)
      return r.Fail(key,
                    "is not representable: trainsim takes leading dense layers, then every N-th "
                    "layer MoE to the last");
  moe.first_k_dense = static_cast<int>(first);
  moe.layer_freq = static_cast<int>(freq);
}

void ReadMoe(const json& j, FieldReader& r, const std::string& type, ModelSpec& m) {
  FirstInt(r, {"num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts"},
           m.moe.num_experts, 0);
  FirstInt(r, {"num_experts_per_tok", "experts_per_token", "moe_topk", "moe_k"}, m.moe.top_k, 0);
  NestedInt(j, r, "ffn_config", "moe_num_experts", m.moe.num_experts, 0);  // DBRX
  NestedInt(j, r, "ffn_config", "moe_top_k", m.moe.top_k, 0);
  int64_t expert_ffn = 0, shared_ffn = 0;
  int shared = 0, first_dense = 0, freq = 1, sparse_step = 1, interleave = 1;
  const bool own_expert_size = FirstInt64(r, {"moe_intermediate_size"}, expert_ffn, 0) != nullptr;
  if (type == "ernie4_5_moe") shared = 2;  // Ernie4_5_MoeConfig default
  FirstInt(
      r, {"n_shared_experts", "num_shared_experts", "moe_num_shared_experts", "num_shared_expert"},
      shared, 0);
  // Qwen2-MoE shared_expert_intermediate_size; GraniteMoeShared shared_intermediate_size.
  FirstInt64(r, {"shared_expert_intermediate_size", "shared_intermediate_size"}, shared_ffn, 0);
  // Snowflake Arctic (parallel_attn_mlp_res): a dense residual MLP of intermediate_size runs
  // beside the MoE on every layer ("a 10B dense transformer with a residual 128x3.66B MoE MLP",
  // 480B total, 17B active): an always-active shared expert.
  if (IsTrue(j, "parallel_attn_mlp_res") && shared_ffn == 0) shared_ffn = m.ffn;
  r.Ignore("parallel_attn_mlp_res");
  // Hunyuan (modeling_hunyuan.py HunYuanMoE): with use_mixed_mlp_moe a shared MLP of
  // intermediate_size x num_shared_expert runs beside the routed experts; without it, none.
  if (r.Has("use_mixed_mlp_moe")) {
    bool mixed = false;
    r.Bool("use_mixed_mlp_moe", mixed);
    shared_ffn = mixed ? std::max(shared, 1) * m.ffn : 0;
    if (!mixed) shared = 0;
  }
  r.Int("first_k_dense_replace", first_dense, 0);
  r.Int("moe_layer_freq", freq, 1);
  r.Int("decoder_sparse_step", sparse_step, 1);
  r.Int("moe_layer_frequency", sparse_step, 1);  // Arctic: MoE when (i + 1) % freq == 0
  r.Int("interleave_moe_layer_step", interleave, 1);
  int64_t dense_mlp = 0;
  r.Int64("intermediate_size_mlp", dense_mlp, 0);  // Llama-4 dense layers
  const int prefix = DensePrefix(j, r, "mlp_only_layers");
  if (m.moe.num_experts <= 0 && m.moe.top_k > 0 && prefix >= 0)  // not a dense model either
    r.Fail("num_experts_per_tok", "is " + std::to_string(m.moe.top_k) +
                                      " but the model has no routed experts (num_local_experts, "
                                      "n_routed_experts or num_experts)");
  // One expert chosen out of one is a dense MLP (Hunyuan-7B writes num_experts 1 and builds a
  // plain HunYuanMLP of intermediate_size).
  if (m.moe.num_experts <= 1 || prefix < 0) {
    m.moe = MoeSpec{};
    return;
  }
  m.moe.expert_ffn = own_expert_size ? expert_ffn : m.ffn;
  // The reader's arithmetic saturates instead of overflowing (ASan + UBSan, fuzz test): a size
  // past kMaxModelDim or a dense prefix past the layer count is refused by ValidateModel.
  constexpr int64_t kBig = std::numeric_limits<int64_t>::max();
  m.moe.shared_ffn = shared_ffn > 0                                   ? shared_ffn
                     : shared > 0 && m.moe.expert_ffn > kBig / shared ? kBig
                                                                      : shared * m.moe.expert_ffn;
  if (type == "llama4_text") m.moe.shared_ffn = m.ffn;  // one shared expert (Llama4TextMoe)
  if (freq > 1) {
    const int64_t rounded = (int64_t{first_dense} + freq - 1) / freq * freq;
    m.moe.first_k_dense =
        static_cast<int>(std::min<int64_t>(rounded, std::numeric_limits<int>::max()));
    m.moe.layer_freq = freq;
  } else if (r.Has("moe_layer_start_index") || r.Has("moe_layer_interval") ||
             r.Has("moe_layer_end_index") || type == "ernie4_5_moe") {
    if (prefix > 0) r.Fail("mlp_only_layers", "with moe_layer_start_index is not representable");
    ErnieLayers(r, type, m, m.moe);
  } else if (sparse_step > 1 || interleave > 1) {
    const int step = std::max(sparse_step, interleave);
    if (prefix > 0) r.Fail("mlp_only_layers", "with decoder_sparse_step > 1 is not representable");
    m.moe.first_k_dense = step - 1;
    m.moe.layer_freq = step;
  } else {
    m.moe.first_k_dense = std::max(first_dense, prefix);
  }
  MoeLayerList(j, r, m.layers, m.moe);
  if (dense_mlp > 0)
    m.moe.dense_ffn = dense_mlp;
  else if (own_expert_size)
    m.moe.dense_ffn = m.ffn;
}

// Dropout: PyTorch's nn.Dropout saves a mask of the activations it drops, so a config that
// trains with a dropout probability > 0 saves them (ModelSpec::dropout), as the Megatron-LM
// reader sets it from --hidden-dropout / --attention-dropout. Spellings of the transformers
// classes (LlamaConfig attention_dropout, GPT-2/GPT-J/Phi *_pdrop, StarCoder2 residual_dropout
// and embedding_dropout, GPT-NeoX hidden_dropout, GPT-Neo embed_dropout, Qwen-1 *_dropout_prob).
void ReadDropout(const json& j, FieldReader& r, ModelSpec& m) {
  static const char* kKeys[] = {"attention_dropout", "hidden_dropout",   "attn_pdrop",
                                "resid_pdrop",       "embd_pdrop",       "emb_pdrop",
                                "attn_dropout_prob", "emb_dropout_prob", "embed_dropout",
                                "embedding_dropout", "residual_dropout", "activation_dropout",
                                "dropout",           "ffn_dropout",      "hidden_dropout_prob"};
  for (const char* k : kKeys) {
    r.Ignore(k);
    auto it = j.find(k);
    if (it != j.end() && it->is_number() && it->get<double>() > 0) m.dropout = true;
  }
  if (j.contains("attn_config") && j["attn_config"].is_object()) {  // MPT
    const json& a = j["attn_config"];
    if (a.contains("attn_pdrop") && a["attn_pdrop"].is_number() &&
        a["attn_pdrop"].get<double>() > 0)
      m.dropout = true;
  }
}

// MPT (llm-foundry MPTModel): a learned position table of max_seq_len rows when ALiBi is off.
void ReadMptPositions(const json& j, FieldReader& r, ModelSpec& m) {
  r.Ignore("learned_pos_emb");
  const bool alibi = j.contains("attn_config") && j["attn_config"].is_object() &&
                     IsTrue(j["attn_config"], "alibi");
  if (!IsTrue(j, "learned_pos_emb") || alibi) return;
  int64_t rows = 2048;  // MPTConfig's max_seq_len default
  r.Int64("max_seq_len", rows, 1);
  m.learned_pos_emb = rows;
}

void ReadMla(FieldReader& r, ModelSpec& m) {
  for (const char* k :
       {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
    r.Ignore(k);
  if (!r.Has("kv_lora_rank")) return;
  r.Int64("q_lora_rank", m.mla.q_lora_rank, 0);
  r.Int64("kv_lora_rank", m.mla.kv_lora_rank, 0);
  r.Int64("qk_nope_head_dim", m.mla.qk_nope_head_dim, 0);
  r.Int64("qk_rope_head_dim", m.mla.qk_rope_head_dim, 0);
  r.Int64("v_head_dim", m.mla.v_head_dim, 0);
}

// The language model of a multimodal config: text_config (Llama-4, Qwen2/3-VL, Gemma-3),
// llm_config (InternVL) or language_config (DeepSeek-VL2). Vision towers are not modelled.
const json& TextModel(const json& root, std::string& type, bool& nested) {
  nested = false;
  for (const char* k : {"text_config", "llm_config", "language_config"}) {
    if (root.contains(k) && root[k].is_object()) {
      nested = true;
      const json& t = root[k];
      type = StringOr(t, "model_type", type.empty() ? std::string() : type + "_text");
      if (type == "gemma3") type = "gemma3_text";
      return t;
    }
  }
  return root;
}

// A configuration class's default for a key its file leaves out (transformers builds the class
// from the file, so an absent key takes the class's value; an explicit null stays None).
struct ClassDefault {
  const char* type;
  const char* key;
  int64_t value;
};
template <size_t N>
void FillAbsent(const ClassDefault (&defaults)[N], const std::string& type, json& j) {
  for (const ClassDefault& d : defaults)
    if (type == d.type && !j.contains(d.key)) j[d.key] = d.value;
}

// The size keys a multimodal checkpoint's text_config may leave to its class (transformers builds
// the sub-config as Class(**text_config), so absent keys take the class defaults): Gemma-3-4B's
// text_config gives no head counts and Gemma-3-27B's no vocabulary; LLaVA-1.5's gives only a
// vocabulary. Defaults from Gemma3TextConfig.__init__ (transformers
// src/transformers/models/gemma3/configuration_gemma3.py @ 008f5c8) and LlamaConfig.__init__
// (models/llama/configuration_llama.py), MistralConfig.__init__ (models/mistral, the
// text_config of Pixtral / Mistral-3 wrappers; its KV heads and window: FillClassDefaults).
// Top-level configs keep the error naming a missing key.
void FillNestedDefaults(const std::string& type, json& j) {
  static constexpr ClassDefault kDefaults[] = {{"gemma3_text", "vocab_size", 262208},
                                               {"gemma3_text", "hidden_size", 2304},
                                               {"gemma3_text", "intermediate_size", 9216},
                                               {"gemma3_text", "num_hidden_layers", 26},
                                               {"gemma3_text", "num_attention_heads", 8},
                                               {"llama", "vocab_size", 32000},
                                               {"llama", "hidden_size", 4096},
                                               {"llama", "intermediate_size", 11008},
                                               {"llama", "num_hidden_layers", 32},
                                               {"llama", "num_attention_heads", 32},
                                               {"mistral", "vocab_size", 32000},
                                               {"mistral", "hidden_size", 4096},
                                               {"mistral", "intermediate_size", 14336},
                                               {"mistral", "num_hidden_layers", 32},
                                               {"mistral", "num_attention_heads", 32}};
  FillAbsent(kDefaults, type, j);
}

// Granite-4.0 (GraniteMoeHybridConfig, transformers models/granitemoehybrid): each layer's mixer
// is layers_block_type[i] (layer_types, absent = every layer "mamba"), so a model is representable
// only when every entry is "attention" (granite-4.0-micro, -1b, -350m); Mamba layers are refused.
// Every layer has a gated shared_mlp of shared_intermediate_size (default 1024) and, when
// num_local_experts (default 8, top-2) > 0, experts of intermediate_size
// (modular_granitemoehybrid.py GraniteMoeHybridDecoderLayer). The all-attention file is rewritten
// to the keys the reader knows: layer_types of full_attention, and the dense MLP width
// shared_intermediate_size when there are no experts; the mamba_* keys size no layer and are
// dropped.
Status NormalizeGraniteHybrid(json& j, const std::string& origin) {
  const char* key = j.contains("layer_types") ? "layer_types" : "layers_block_type";
  bool attention_only = j.contains(key) && j[key].is_array() && !j[key].empty();
  if (attention_only)
    for (const json& t : j[key]) attention_only = attention_only && t == "attention";
  if (!attention_only)
    return Status::Invalid(key,
                           "Granite-4.0 hybrid Mamba/attention layers are not representable "
                           "(only a list of \"attention\" is; absent means every layer Mamba)")
        .WithContext(origin);
  j["layer_types"] = json::array();
  for (size_t i = 0; i < j[key].size(); ++i) j["layer_types"].push_back("full_attention");
  j.erase("layers_block_type");
  for (auto it = j.begin(); it != j.end();)
    it = it.key().rfind("mamba_", 0) == 0 ? j.erase(it) : std::next(it);
  if (!j.contains("num_local_experts")) j["num_local_experts"] = 8;
  if (!j.contains("num_experts_per_tok")) j["num_experts_per_tok"] = 2;
  if (!j.contains("shared_intermediate_size")) j["shared_intermediate_size"] = 1024;
  const json& experts = j["num_local_experts"];
  if (experts.is_number_integer() && experts.get<int64_t>() == 0 &&
      j["shared_intermediate_size"].is_number_integer()) {
    j["intermediate_size"] = j["shared_intermediate_size"];
    j.erase("shared_intermediate_size");
    j.erase("num_experts_per_tok");
  }
  return Status::Ok();
}

// Keys that change the architecture's shape, not its size, which a file (top-level or nested) may
// leave to its class: transformers builds Class(**config), so an absent key takes the class's
// default, while `null` is Python's None (no window; KV heads = heads). Sizes stay required at
// the top level (FillNestedDefaults). Defaults of the configuration classes (transformers
// src/transformers/models/<type>/configuration_<type>.py @ 008e574; mistral @ 001f85b):
// MistralConfig num_key_value_heads 8, sliding_window 4096; MixtralConfig num_key_value_heads 8,
// num_local_experts 8, num_experts_per_tok 2 (sliding_window None); Gemma2Config
// num_key_value_heads 4, head_dim 256, sliding_window 4096; Gemma3TextConfig num_key_value_heads
// 4, head_dim 256, sliding_window 4096; Cohere2Config and Exaone4Config sliding_window 4096;
// GptOssConfig sliding_window 128; Qwen2Config / Qwen3Config sliding_window 4096 (applied only
// with use_sliding_window) and max_window_layers 28, Qwen3Config head_dim 128; Qwen3MoeConfig
// num_key_value_heads 4, num_experts 128, num_experts_per_tok 8, moe_intermediate_size 768.
// (Qwen2Config's and Qwen3Config's num_key_value_heads 32 is left out: with fewer than 32 heads
// transformers cannot build the model either, and trainsim keeps MHA.)
void FillClassDefaults(const std::string& type, json& j) {
  static constexpr ClassDefault kDefaults[] = {{"mistral", "num_key_value_heads", 8},
                                               {"mistral", "sliding_window", 4096},
                                               {"mixtral", "num_key_value_heads", 8},
                                               {"mixtral", "num_local_experts", 8},
                                               {"mixtral", "num_experts_per_tok", 2},
                                               {"gemma2", "num_key_value_heads", 4},
                                               {"gemma2", "head_dim", 256},
                                               {"gemma2", "sliding_window", 4096},
                                               {"gemma3_text", "num_key_value_heads", 4},
                                               {"gemma3_text", "head_dim", 256},
                                               {"gemma3_text", "sliding_window", 4096},
                                               {"cohere2", "sliding_window", 4096},
                                               {"exaone4", "sliding_window", 4096},
                                               {"gpt_oss", "sliding_window", 128},
                                               {"qwen2", "sliding_window", 4096},
                                               {"qwen2", "max_window_layers", 28},
                                               {"qwen3", "head_dim", 128},
                                               {"qwen3", "sliding_window", 4096},
                                               {"qwen3", "max_window_layers", 28},
                                               {"qwen3_moe", "num_key_value_heads", 4},
                                               {"qwen3_moe", "num_experts", 128},
                                               {"qwen3_moe", "num_experts_per_tok", 8},
                                               {"qwen3_moe", "moe_intermediate_size", 768},
                                               {"qwen3_moe", "sliding_window", 4096}};
  FillAbsent(kDefaults, type, j);
}

// Keys the reader examines outside its FieldReader (the model class, the refusals, the nested
// text model); with the FieldReader's record they are the keys read.
bool Examined(const std::string& key) {
  static const char* kKeys[] = {
      "model_type",         "_name_or_path", "text_config",         "llm_config",
      "language_config",    "index_topk",    "attn_type_list",      "use_cla",
      "is_encoder_decoder", "layer_types",   "tie_word_embeddings", "attn_config",
      "ffn_config"};
  for (const char* k : kKeys)
    if (key == k) return true;
  for (const RefusedKey& k : kRefusedKeys)
    if (key == k.key) return true;
  return false;
}

// The keys left unread that may change the architecture, into m.ignored_keys: the text model's
// (prefixed with its object's name when nested) and, for a multimodal config, the top level's.
void ListUnread(const json& root, const json& j, const FieldReader& r, bool nested, ModelSpec& m) {
  const auto read = [&](const std::string& k) { return Examined(k) || r.WasRead(k); };
  std::string prefix;
  for (const char* k : {"text_config", "llm_config", "language_config"})
    if (nested && prefix.empty() && root.contains(k) && root[k].is_object())
      prefix = std::string(k) + ".";
  ListIgnoredHfKeys(j, read, prefix, m.ignored_keys);
  if (nested) ListIgnoredHfKeys(root, read, "", m.ignored_keys);
}

}  // namespace

Status ReadHfConfig(const json& root_in, ModelSpec& m, const std::string& origin) {
  json root = root_in;
  if (Status s = ScrubNonFinite(root, origin); !s.ok()) return s;
  if (root.contains("model_type") && !root["model_type"].is_string() &&
      !root["model_type"].is_null())
    return Status::Invalid("model_type", "must be a string").WithContext(origin);
  std::string type = StringOr(root, "model_type", std::string());
  bool nested = false;
  json j = TextModel(root, type, nested);
  // gpt-oss checkpoints also ship OpenAI's own original/config.json (no model_type; the
  // ModelConfig of openai/gpt-oss gpt_oss/torch/model.py: num_experts, experts_per_token,
  // swiglu_limit, initial_context_length). Its model is GptOssConfig's: biases on q/k/v/o, the
  // window on the even layers (AttentionBlock: sliding_window if layer_idx % 2 == 0).
  if (type.empty() && root.contains("experts_per_token") && root.contains("swiglu_limit") &&
      root.contains("initial_context_length"))
    type = "gpt_oss";
  // A multimodal config flattened to its text keys (e.g. Llama-4 Scout as some tools store it).
  if (!nested && (type == "llama4" || type == "gemma3")) type += "_text";
  // Qwen2/3-VL keep tie_word_embeddings at the top level, outside text_config.
  if (nested && !j.contains("tie_word_embeddings") && root.contains("tie_word_embeddings"))
    j["tie_word_embeddings"] = root["tie_word_embeddings"];
  if (Status s = ScrubNonFinite(j, origin); !s.ok()) return s;
  if (nested) FillNestedDefaults(type, j);
  FillClassDefaults(type, j);
  if (type == "granitemoehybrid")
    if (Status s = NormalizeGraniteHybrid(j, origin); !s.ok()) return s;
  if (Status s = Refusals(j, type, origin); !s.ok()) return s;
  if (Status s = CollapsePerLayerLists(j, origin); !s.ok()) return s;
  if (nested)
    if (Status s = Refusals(root, StringOr(root, "model_type", std::string()), origin); !s.ok())
      return s;
  FieldReader r(j, origin);
  m.name = type.empty() ? "hf-model" : type;
  if (root.contains("_name_or_path") && root["_name_or_path"].is_string() &&
      !root["_name_or_path"].get<std::string>().empty())
    m.name = root["_name_or_path"].get<std::string>();
  const HfClass* cls = FindClass(type);
  ReadShape(j, r, cls, m);
  // Qwen-1 (remote code, modeling_qwen.py QWenMLP): each of w1, w2 is intermediate_size / 2 wide.
  if (type == "qwen") m.ffn /= 2;
  const bool named_type = !type.empty() && j.contains("model_type") && j["model_type"].is_string();
  ReadActivationAndFlags(r, cls, type, named_type, m);
  ReadWindow(j, r, cls, type, m);
  if (type == "gpt_neo") ReadGptNeoWindow(j, r, m);
  ReadChunk(j, r, type, m);
  ReadNestedLayerConfigs(j, r, type, m);
  ReadMoe(j, r, type, m);
  ReadMla(r, m);
  r.Int("num_nextn_predict_layers", m.mtp_layers, 0);
  ReadDropout(j, r, m);
  if (type == "mpt") ReadMptPositions(j, r, m);
  RequireShape(r, m, !m.is_moe() || m.moe.first_k_dense > 0 || m.moe.layer_freq > 1);
  if (Status s = r.Finish(false); !s.ok()) return s;
  ListUnread(root, j, r, nested, m);
  return Status::Ok();
}

}  // namespace trainsim::detail

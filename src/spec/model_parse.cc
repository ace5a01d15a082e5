// Model readers: the validation-case `model` object, SimuMax model JSON and GPT-2 style configs;
// other HF config.json files go to spec/hf_config.cc. All produce one ModelSpec and validate it.
#include <algorithm>
#include <cctype>
#include <functional>
#include <initializer_list>
#include <string>

#include "spec/hf_config.h"
#include "spec/json_fields.h"
#include "spec/model_keys.h"
#include "spec/simumax.h"
#include "trainsim/model.h"

namespace trainsim {
namespace {

using detail::FieldReader;
using nlohmann::json;

bool GatedAct(const std::string& act) {
  return act == "silu" || act == "swiglu" || act == "swish" || act == "geglu";
}

Status CheckAct(FieldReader& r, const char* key, const std::string& act) {
  static const char* kKnown[] = {
      "silu",       "swiglu",      "swish",         "geglu", "gelu",         "gelu_new",
      "gelu_fast",  "gelu_10",     "relu",          "relu2", "squared_relu", "gelu_pytorch_tanh",
      "quick_gelu", "gelu_python", "gelu_accurate", "tanh",  "relu6",        "leaky_relu"};
  for (const char* k : kKnown)
    if (act == k) return Status::Ok();
  r.Fail(key, "unsupported activation '" + act + "' (silu, swiglu, gelu, relu...)");
  return r.status();
}

// The validation schema's model object (shared/validation/README.md).
Status ReadValidationModel(const json& j, ModelSpec& m, const std::string& origin) {
  FieldReader r(j, origin);
  r.String("name", m.name);
  r.Int64("hidden_size", m.hidden);
  r.Int("num_hidden_layers", m.layers);
  r.Int("num_attention_heads", m.heads);
  m.kv_heads = m.heads;
  r.Int("num_key_value_heads", m.kv_heads);
  m.head_dim = m.heads > 0 ? m.hidden / m.heads : 0;
  r.Int64("head_dim", m.head_dim);
  r.Int64("intermediate_size", m.ffn);
  r.Int64("vocab_size", m.vocab);
  std::string act = "silu";
  r.String("hidden_act", act);
  if (!CheckAct(r, "hidden_act", act).ok()) return r.status();
  m.gated_mlp = GatedAct(act);
  if (!m.gated_mlp) {  // GPT-style Megatron models: LayerNorm, biases, dropout
    m.layernorm = true;
    m.linear_bias = true;
    m.dropout = true;
  }
  r.Bool("tie_word_embeddings", m.tied_embeddings);
  r.Int("mtp_layers", m.mtp_layers, 0);
  if (r.Has("moe")) {
    FieldReader e(j["moe"], origin + ": moe");
    e.Int("num_experts", m.moe.num_experts);
    e.Int("top_k", m.moe.top_k);
    e.Int64("moe_intermediate_size", m.moe.expert_ffn);
    e.Int64("shared_expert_intermediate_size", m.moe.shared_ffn, 0);
    e.Int("first_k_dense", m.moe.first_k_dense, 0);
    if (Status s = e.Finish(true); !s.ok()) return s;
  }
  if (r.Has("mla")) {
    FieldReader a(j["mla"], origin + ": mla");
    a.Int64("q_lora_rank", m.mla.q_lora_rank, 0);
    a.Int64("kv_lora_rank", m.mla.kv_lora_rank);
    a.Int64("qk_nope_head_dim", m.mla.qk_nope_head_dim);
    a.Int64("qk_rope_head_dim", m.mla.qk_rope_head_dim, 0);
    a.Int64("v_head_dim", m.mla.v_head_dim);
    if (Status s = a.Finish(true); !s.ok()) return s;
  }
  r.Ignore("moe");
  r.Ignore("mla");
  if (!r.Has("head_dim")) CheckHeadDimDefault(r, m);
  return r.Finish(true);
}

// SimuMax configs/models/*.json: spec/simumax_model.cc.

// HF GPT-2 style config (transformers models/gpt2/configuration_gpt2.py, GPT2Config: n_inner
// None = 4 * n_embd, resid_pdrop / embd_pdrop / attn_pdrop 0.1, activation_function gelu_new;
// GPT2MLP is c_fc, act, c_proj whatever the activation). The keys it does not read are listed
// in m.ignored_keys as the other config.json readers list theirs (hf_config_keys.cc), so that
// e.g. add_cross_attention is named, not dropped.
Status ReadGpt2(const json& j, ModelSpec& m, const std::string& origin) {
  FieldReader r(j, origin);
  m.name = "gpt2";
  r.String("_name", m.name);
  r.Ignore("model_type");
  r.Int64("n_embd", m.hidden);
  r.Int("n_layer", m.layers);
  r.Int("n_head", m.heads);
  m.kv_heads = m.heads;
  m.head_dim = m.heads > 0 ? m.hidden / m.heads : 0;
  m.ffn = 4 * m.hidden;
  r.Int64("n_inner", m.ffn);
  r.Int64("vocab_size", m.vocab);
  r.Int64("n_positions", m.learned_pos_emb, 0);
  std::string act = "gelu_new";
  if (r.Has("activation_function")) {
    r.String("activation_function", act);
    if (!CheckAct(r, "activation_function", act).ok()) return r.status();
  }
  r.Ignore("activation_function");
  m.gated_mlp = false;
  m.layernorm = true;
  m.linear_bias = true;
  // Dropout masks are saved unless every dropout probability is given as 0 (GPT2Config's
  // defaults are 0.1).
  m.dropout = false;
  for (const char* k : {"resid_pdrop", "embd_pdrop", "attn_pdrop"}) {
    double p = 0.1;
    r.Double(k, p);
    if (p > 0) m.dropout = true;
  }
  m.tied_embeddings = true;
  r.Bool("tie_word_embeddings", m.tied_embeddings);
  // GPT2Attention's head_dim is n_embd // n_head and the format has no head_dim key to give.
  if (m.heads > 0 && m.hidden > 0 && m.hidden % m.heads != 0)
    r.Fail("n_head",
           "must divide n_embd (" + std::to_string(m.hidden) + "), got " + std::to_string(m.heads));
  if (Status s = r.Finish(false); !s.ok()) return s;
  detail::ListIgnoredHfKeys(
      j, [&](const std::string& k) { return r.WasRead(k); }, "", m.ignored_keys);
  return Status::Ok();
}

// ValidateModel names a field by its HF config.json key; a file of another format is told its own
// key (a SimuMax file has `topk`, not `num_experts_per_tok`; issue 11, "Messages": name the field
// the user wrote). Keys the formats share are left as they are.
struct KeyAlias {
  const char* hf;
  const char* own;
};
constexpr KeyAlias kSimuMaxKeys[] = {
    {"num_hidden_layers", "layer_num"},
    {"num_attention_heads", "head_num"},
    {"num_key_value_heads", "kv_head_num"},
    {"head_dim", "head_size"},
    {"num_experts_per_tok", "topk"},
    {"num_experts", "expert_num"},
    {"moe_intermediate_size", "moe_ffn_hidden_size"},
    {"shared_expert_intermediate_size", "moe_shared_expert_intermediate_size"},
    {"first_k_dense_replace", "dense_layers"},
    {"qk_nope_head_dim", "qk_head_dim"},
    {"qk_rope_head_dim", "qk_pos_emb_head_dim"}};
constexpr KeyAlias kValidationKeys[] = {
    {"num_experts_per_tok", "moe.top_k"},
    {"num_experts", "moe.num_experts"},
    {"moe_intermediate_size", "moe.moe_intermediate_size"},
    {"shared_expert_intermediate_size", "moe.shared_expert_intermediate_size"},
    {"first_k_dense_replace", "moe.first_k_dense"},
    {"q_lora_rank", "mla.q_lora_rank"},
    {"kv_lora_rank", "mla.kv_lora_rank"},
    {"qk_nope_head_dim", "mla.qk_nope_head_dim"},
    {"qk_rope_head_dim", "mla.qk_rope_head_dim"},
    {"v_head_dim", "mla.v_head_dim"}};
// Megatron-LM's arguments (megatron/training/arguments.py) for the fields they set.
constexpr KeyAlias kMegatronKeys[] = {
    {"hidden_size", "--hidden-size"},
    {"num_hidden_layers", "--num-layers"},
    {"num_attention_heads", "--num-attention-heads"},
    {"num_key_value_heads", "--num-query-groups"},
    {"head_dim", "--kv-channels"},
    {"intermediate_size", "--ffn-hidden-size"},
    {"vocab_size", "--vocab-size"},
    {"num_experts_per_tok", "--moe-router-topk"},
    {"num_experts", "--num-experts"},
    {"moe_intermediate_size", "--moe-ffn-hidden-size"},
    {"shared_expert_intermediate_size", "--moe-shared-expert-intermediate-size"},
    {"first_k_dense_replace", "--moe-layer-freq"},
    {"q_lora_rank", "--q-lora-rank"},
    {"kv_lora_rank", "--kv-lora-rank"},
    {"qk_nope_head_dim", "--qk-head-dim"},
    {"qk_rope_head_dim", "--qk-pos-emb-head-dim"},
    {"v_head_dim", "--v-head-dim"},
    {"mtp_layers", "--mtp-num-layers"}};
constexpr KeyAlias kGpt2Keys[] = {{"hidden_size", "n_embd"},
                                  {"num_hidden_layers", "n_layer"},
                                  {"num_attention_heads", "n_head"},
                                  {"intermediate_size", "n_inner"}};

// The HF keys ValidateModel's rules name besides their field ("num_attention_heads (32) must be
// divisible by it", "must be in [1, num_experts]").
constexpr const char* kRuleKeys[] = {"hidden_size",
                                     "num_hidden_layers",
                                     "num_attention_heads",
                                     "num_key_value_heads",
                                     "head_dim",
                                     "intermediate_size",
                                     "vocab_size",
                                     "num_experts_per_tok",
                                     "num_experts",
                                     "moe_intermediate_size",
                                     "first_k_dense_replace",
                                     "qk_nope_head_dim",
                                     "v_head_dim"};

bool KeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// `text` with every whole-word `from` (not inside a longer key) replaced by `to`.
std::string ReplaceKey(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    const size_t end = at + from.size();
    if ((at > 0 && KeyChar(text[at - 1])) || (end < text.size() && KeyChar(text[end]))) {
      at = end;
      continue;
    }
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

// `s` (from ValidateModel) with its field, and the keys its rule names, renamed by `own` (HF
// key -> the file's key; the same key when the file spells it so).
Status Renamed(const Status& s, const ModelSpec& m,
               const std::function<std::string(const std::string&)>& own) {
  const std::string head = "model " + m.name + ": " + s.field() + ": ";
  if (s.field().empty() || s.message().rfind(head, 0) != 0) return s;
  std::string rule = s.message().substr(head.size());
  for (const char* hf : kRuleKeys)
    if (const std::string key = own(hf); key != hf) rule = ReplaceKey(rule, hf, key);
  const std::string key = own(s.field());
  if (key == s.field() && rule == s.message().substr(head.size())) return s;
  return Status::Invalid(key, rule).WithContext("model " + m.name);
}

template <size_t N>
Status InFileKeys(const Status& s, const ModelSpec& m, const KeyAlias (&keys)[N]) {
  return Renamed(s, m, [&](const std::string& hf) {
    for (const KeyAlias& k : keys)
      if (hf == k.hf) return std::string(k.own);
    return hf;
  });
}

// An HF config.json spells a size in one of several ways (hf_config.cc ReadShape, ReadMoe):
// the error names the spelling the file has, inside its text model (text_config.) when nested.
struct HfSpellings {
  const char* hf;
  std::initializer_list<const char*> keys;
};
const HfSpellings kHfSpellings[] = {
    {"hidden_size", {"hidden_size", "n_embd", "d_model", "n_embed"}},
    {"num_hidden_layers", {"num_hidden_layers", "n_layer", "n_layers", "num_layers"}},
    {"num_attention_heads", {"num_attention_heads", "n_head", "n_heads", "num_heads"}},
    {"num_key_value_heads",
     {"num_key_value_heads", "num_kv_heads", "n_head_kv", "attn_config.kv_n_heads",
      "multi_query_group_num"}},
    {"head_dim", {"head_dim", "kv_channels", "attention_head_dim"}},
    {"intermediate_size",
     {"intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim", "ffn_config.ffn_hidden_size"}},
    {"vocab_size", {"padded_vocab_size", "vocab_size"}},
    {"num_experts_per_tok",
     {"num_experts_per_tok", "experts_per_token", "moe_topk", "moe_k", "ffn_config.moe_top_k"}},
    {"num_experts",
     {"num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts",
      "ffn_config.moe_num_experts"}},
};

Status InHfKeys(const Status& s, const ModelSpec& m, const json& root) {
  const json* text = &root;
  std::string prefix;
  for (const char* k : {"text_config", "llm_config", "language_config"})
    if (prefix.empty() && root.contains(k) && root[k].is_object()) {
      text = &root[k];
      prefix = std::string(k) + ".";
    }
  auto has = [&](const std::string& key) {
    const size_t dot = key.find('.');
    const json& o = *text;
    if (dot == std::string::npos) return o.contains(key) && !o[key].is_null();
    const std::string parent = key.substr(0, dot), child = key.substr(dot + 1);
    return o.contains(parent) && o[parent].is_object() && o[parent].contains(child) &&
           !o[parent][child].is_null();
  };
  return Renamed(s, m, [&](const std::string& hf) {
    for (const HfSpellings& sp : kHfSpellings)
      if (hf == sp.hf)
        for (const char* k : sp.keys)
          if (has(k)) return prefix + k;
    return hf;
  });
}

}  // namespace

Status detail::InMegatronArgs(const Status& s, const ModelSpec& m) {
  return InFileKeys(s, m, kMegatronKeys);
}

Result<ModelSpec> ParseModelJson(std::string_view text, std::string_view origin_sv) {
  const std::string origin(origin_sv);
  // Python's json writes NaN / Infinity; HF's loader accepts them (spec/hf_config.h).
  auto parsed = detail::ParseJsonText(detail::QuoteNonFiniteTokens(text), origin);
  if (!parsed.ok()) return parsed.status();
  const json& j = parsed.value();
  if (!j.is_object())
    return Status::Invalid("", "a model must be a JSON object").WithContext(origin);
  ModelSpec m;
  Status s;
  const std::string type = j.contains("model_type") && j["model_type"].is_string()
                               ? j["model_type"].get<std::string>()
                               : std::string();
  enum class Format { kGpt2, kSimuMax, kValidation, kHf } format = Format::kHf;
  if (j.contains("n_embd") && (type.empty() || type == "gpt2")) {
    s = ReadGpt2(j, m, origin);
    format = Format::kGpt2;
  } else if (j.contains("layer_num") || j.contains("head_num")) {
    s = detail::ReadSimuMaxModel(j, m, origin);
    format = Format::kSimuMax;
  } else if (j.contains("moe") || j.contains("mla") || j.contains("mtp_layers")) {
    s = ReadValidationModel(j, m, origin);
    format = Format::kValidation;
  } else if (detail::LooksLikeHfConfig(j)) {
    s = detail::ReadHfConfig(j, m, origin);
  } else {
    return Status::Invalid("",
                           "not a model description (expected an HF config.json with "
                           "hidden_size, a SimuMax model JSON or a GPT-2 config)")
        .WithContext(origin);
  }
  if (!s.ok()) return s;
  if (m.moe.num_experts > 0 && m.moe.dense_ffn == 0 && m.moe.first_k_dense > 0)
    m.moe.dense_ffn = m.ffn;
  if (m.moe.num_experts > 0 && m.ffn == 0) m.ffn = m.moe.expert_ffn;
  if (Status v = ValidateModel(m); !v.ok()) {
    if (format == Format::kSimuMax) v = InFileKeys(v, m, kSimuMaxKeys);
    if (format == Format::kValidation) v = InFileKeys(v, m, kValidationKeys);
    if (format == Format::kGpt2) v = InFileKeys(v, m, kGpt2Keys);
    if (format == Format::kHf) v = InHfKeys(v, m, j);
    return v.WithContext(origin);
  }
  return m;
}

}  // namespace trainsim

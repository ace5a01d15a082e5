// The nested attention and MLP configs of MPT and DBRX config.json files (attn_config,
// ffn_config): each sub-key is read, judged harmless, or listed as ignored as
// "attn_config.<key>" (issue 11, "silent misreading"), as the top-level keys are.
//
// Sources: MPT, llm-foundry llmfoundry/models/mpt/configuration_mpt.py (attn_config_defaults:
// attn_type multihead_attention, kv_n_heads 1, qk_ln / qk_gn false, sliding_window_size -1;
// ffn_config_defaults: ffn_type mptmlp) and llmfoundry/models/layers/{attention,ffn}.py
// (MultiheadAttention: kv_n_heads = n_heads; MultiQueryAttention: 1; GroupedQueryAttention:
// kv_n_heads; mptglu = gate, up and down projections; mb_moe / mb_dmoe = MegaBlocks experts of
// megablocks' mlp_type "mlp" (default) or "glu"). DBRX, transformers
// models/dbrx/configuration_dbrx.py (DbrxAttentionConfig: attn_pdrop, clip_qkv, kv_n_heads 1,
// rope_theta; DbrxFFNConfig: ffn_act_fn, ffn_hidden_size, moe_num_experts, moe_top_k,
// moe_jitter_eps, moe_loss_weight, moe_normalize_expert_weights); transformers saves each as a
// whole PretrainedConfig, so they also carry its generic attributes (return_dict, top_k, ...),
// which the harmless table of hf_config_keys.cc covers.
#include <set>
#include <string>

#include "spec/hf_config.h"
#include "spec/json_fields.h"

namespace trainsim::detail {
namespace {

using nlohmann::json;

// Sub-keys that change nothing trainsim costs: kernels and their numerics (attn_impl, fused_qkv,
// clip_qkv, softmax_scale, fc_type), positions (rope*, alibi*: no parameter, an element-wise
// cost), the element-wise activation (ffn_act_fn: the MLP's shape comes from ffn_type / the
// class), routing and the auxiliary loss (moe_jitter_eps, moe_loss_weight,
// moe_normalize_expert_weights, uniform_expert_assignment, moe_lbl_in_fp32: which experts, not
// how many), and the layout of the experts (the strategy's ep sets it), plus the model_type and
// tie_word_embeddings every transformers sub-config dump carries (the top level's are read).
constexpr const char* kHarmlessSub[] = {"attn_impl",
                                        "fused_qkv",
                                        "clip_qkv",
                                        "softmax_scale",
                                        "fc_type",
                                        "rope",
                                        "rope_impl",
                                        "rope_dail_config",
                                        "rope_hf_config",
                                        "alibi",
                                        "alibi_bias_max",
                                        "ffn_act_fn",
                                        "moe_jitter_eps",
                                        "moe_loss_weight",
                                        "moe_normalize_expert_weights",
                                        "uniform_expert_assignment",
                                        "moe_lbl_in_fp32",
                                        "memory_optimized_mlp",
                                        "mlp_impl",
                                        "moe_expert_model_parallelism",
                                        "moe_weight_parallelism",
                                        "expert_parallel_group",
                                        "device_mesh",
                                        "model_type",
                                        "tie_word_embeddings"};

bool HarmlessSub(const std::string& key) {
  for (const char* k : kHarmlessSub)
    if (key == k) return true;
  return false;
}

// A string sub-key (a kind); another type fails `r` naming "<parent>.<key>" (it read as the
// default before: attn_type 5 was multi-head attention).
std::string SubString(const json& obj, FieldReader& r, const char* parent, const char* key,
                      const std::string& fallback) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (it->is_string()) return it->get<std::string>();
  r.Fail(std::string(parent) + "." + key, "must be a string, got " + std::string(it->type_name()));
  return fallback;
}

bool SubTrue(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

// An integer sub-key in [min, 2^30]; fails `r` naming "<parent>.<key>". Returns false when the
// key is absent or null (out unchanged).
bool SubInt(const json& obj, FieldReader& r, const char* parent, const char* key, int64_t& out,
            long long min) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return false;
  const long long limit = int64_t{1} << 30;
  if (!it->is_number_integer() || it->get<long long>() < min || it->get<long long>() > limit) {
    r.Fail(std::string(parent) + "." + key,
           "must be an integer in [" + std::to_string(min) + ", 2^30]");
    return false;
  }
  out = it->get<long long>();
  return true;
}

// attn_config: the K/V head count by attention type, per-head q/k norms, a sliding window.
void ReadAttnConfig(const json& a, FieldReader& r, const std::string& type, ModelSpec& m,
                    std::set<std::string>& read) {
  read.insert({"attn_type", "kv_n_heads", "qk_ln", "qk_gn", "sliding_window_size",
               "attn_pdrop"});  // attn_pdrop: hf_config.cc ReadDropout
  // DBRX has no attn_type: its attention is grouped-query with kv_n_heads (default 1).
  const std::string kind =
      SubString(a, r, "attn_config", "attn_type",
                type == "mpt" ? "multihead_attention" : "grouped_query_attention");
  int64_t kv = 1;
  const bool kv_given = SubInt(a, r, "attn_config", "kv_n_heads", kv, 1);
  if (kind == "multihead_attention" || kind == "multiquery_attention") {
    m.kv_heads = kind == "multiquery_attention" ? 1 : m.heads;
    // llm-foundry dumps kv_n_heads 1 (its default) with every attention type; another value
    // is not used by these two classes, and is named rather than dropped.
    if (kv_given && kv != 1 && kv != m.kv_heads)
      m.ignored_keys.push_back({"attn_config.kv_n_heads", std::to_string(kv),
                                "used only with attn_type grouped_query_attention; " + kind +
                                    " has " + std::to_string(m.kv_heads) + " K/V heads"});
  } else if (kind == "grouped_query_attention") {
    if (kv_given || type == "mpt" || type == "dbrx") m.kv_heads = static_cast<int>(kv);
  } else {
    return r.Fail("attn_config.attn_type",
                  "unknown attention type '" + kind +
                      "' (multihead_attention, multiquery_attention or grouped_query_attention)");
  }
  // qk_ln: LayerNorms on q and k; qk_gn: per-head norms. Both are costed as per-head q/k norms
  // (the parameter difference is 2 * hidden values per layer).
  if (SubTrue(a, "qk_ln") || SubTrue(a, "qk_gn")) m.qk_norm = true;
  int64_t window = -1;  // -1 (llm-foundry's default) or 0: none
  auto it = a.find("sliding_window_size");
  if (it != a.end() && it->is_number_integer() && it->get<long long>() >= -1 &&
      it->get<long long>() <= 0)
    return;
  if (it != a.end() && it->is_number_integer() && it->get<long long>() < -1)
    return r.Fail("attn_config.sliding_window_size",
                  "must be -1 or 0 (none) or an integer in [1, 2^30], got " + it->dump());
  if (SubInt(a, r, "attn_config", "sliding_window_size", window, 1)) {
    if (m.attention.window > 0)
      return r.Fail("attn_config.sliding_window_size",
                    "together with another window or chunk setting is not representable");
    m.attention.kind = AttentionKind::kSlidingWindow;
    m.attention.window = window;
    m.attention.window_layers = -1;  // every layer (llm-foundry applies it to each block)
  }
}

// ffn_config: MPT's MLP kind (two-matrix, gated, MegaBlocks experts); the sizes and expert
// counts are read with the top-level keys (hf_config.cc ReadShape, ReadMoe).
void ReadFfnConfig(const json& f, FieldReader& r, const std::string& type, ModelSpec& m,
                   std::set<std::string>& read) {
  read.insert({"ffn_hidden_size", "moe_num_experts", "moe_top_k", "ffn_type", "mlp_type"});
  if (type != "mpt") return;  // DBRX's experts are gated (DbrxExpertGLU) whatever the keys
  const std::string kind = SubString(f, r, "ffn_config", "ffn_type", "mptmlp");
  if (kind == "mptmlp" || kind == "te_ln_mlp") {
    m.gated_mlp = false;
  } else if (kind == "mptglu") {
    m.gated_mlp = true;
  } else if (kind == "mb_moe" || kind == "mb_dmoe") {
    const std::string mlp = SubString(f, r, "ffn_config", "mlp_type", "mlp");
    if (mlp != "mlp" && mlp != "glu")
      return r.Fail("ffn_config.mlp_type", "must be mlp or glu, got '" + mlp + "'");
    m.gated_mlp = mlp == "glu";
  } else {
    r.Fail("ffn_config.ffn_type",
           "unknown MLP type '" + kind + "' (mptmlp, mptglu, te_ln_mlp, mb_moe or mb_dmoe)");
  }
}

}  // namespace

void ReadNestedLayerConfigs(const json& j, FieldReader& r, const std::string& type, ModelSpec& m) {
  r.Ignore("attn_config");
  r.Ignore("ffn_config");
  // DbrxConfig builds DbrxAttentionConfig() when attn_config is absent: kv_n_heads 1.
  if (type == "dbrx" && !(j.contains("attn_config") && j["attn_config"].is_object()))
    m.kv_heads = 1;
  for (const char* parent : {"attn_config", "ffn_config"}) {
    auto it = j.find(parent);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_object()) return r.Fail(parent, "must be an object");
    std::set<std::string> read;
    if (std::string(parent) == "attn_config")
      ReadAttnConfig(*it, r, type, m, read);
    else
      ReadFfnConfig(*it, r, type, m, read);
    ListIgnoredHfKeys(
        *it, [&](const std::string& k) { return read.count(k) > 0 || HarmlessSub(k); },
        std::string(parent) + ".", m.ignored_keys);
  }
}

}  // namespace trainsim::detail

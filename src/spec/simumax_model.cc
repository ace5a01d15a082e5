// SimuMax model files (configs/models/*.json) with SimuMax's meaning.
//
// Source: MooreThreads/SimuMax simumax/core/config.py, ModelConfig (defaults: expert_num 1,
// attention_type "mha", dense_layers 0, moe_ffn_hidden_size None -> intermediate_size in
// __post_init__ and init_from_config_file, make_vocab_size_divisible_by 128,
// padded_vocab_size True) and docs/model_config_mapping.md (RMSNorm everywhere, no biases, the
// embedding and the output layer counted separately: param_numel = 2 * vocab_elements + ...).
#include <string>

#include "spec/hf_config.h"
#include "spec/simumax.h"

namespace trainsim::detail {
namespace {

using nlohmann::json;

void ReadMoe(FieldReader& r, ModelSpec& m) {
  int experts = 1;  // ModelConfig.expert_num default: a dense model
  r.Int("expert_num", experts, 1);
  r.Int("topk", m.moe.top_k, 0);
  int64_t expert_ffn = 0;
  r.Int64("moe_ffn_hidden_size", expert_ffn, 0);
  r.Int64("moe_shared_expert_intermediate_size", m.moe.shared_ffn, 0);
  r.Int("dense_layers", m.moe.first_k_dense, 0);
  // Dispatch knobs SimuMax's Permutation reads; trainsim models dropless top-k routing.
  for (const char* k : {"moe_pad_expert_input_to_capacity", "capacity", "group_linear_mode"})
    r.Ignore(k);
  if (experts <= 1) return;
  m.moe.num_experts = experts;
  m.moe.expert_ffn = expert_ffn > 0 ? expert_ffn : m.ffn;  // SimuMax's default
}

void ReadMla(FieldReader& r, ModelSpec& m) {
  std::string attn = "mha";
  r.String("attention_type", attn);
  for (const char* k :
       {"q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim"})
    r.Ignore(k);
  if (attn == "mha" || attn == "gqa" || attn == "mqa") return;  // one path, by head counts
  if (attn != "mla")
    return r.Fail("attention_type", "must be mha, gqa, mqa or mla, got '" + attn + "'");
  r.Int64("q_lora_rank", m.mla.q_lora_rank, 0);
  r.Int64("kv_lora_rank", m.mla.kv_lora_rank);
  r.Int64("qk_head_dim", m.mla.qk_nope_head_dim);
  r.Int64("qk_pos_emb_head_dim", m.mla.qk_rope_head_dim, 0);
  r.Int64("v_head_dim", m.mla.v_head_dim);
  if (m.mla.kv_lora_rank <= 0)
    r.Fail("kv_lora_rank", "attention_type mla needs kv_lora_rank, qk_head_dim and v_head_dim");
}

// Megatron-LM pads the vocabulary to a multiple of make_vocab_size_divisible_by * tp (SimuMax's
// maybe_pad_vocab_size); the tp factor is not known here, so the multiple of the divisor is.
void PadVocab(FieldReader& r, ModelSpec& m) {
  bool pad = true;
  int64_t divisor = 128;
  r.Bool("padded_vocab_size", pad);
  r.Int64("make_vocab_size_divisible_by", divisor, 1);
  r.Ignore("orig_vocab_size");
  if (pad && m.vocab > 0 && m.vocab % divisor != 0) m.vocab += divisor - m.vocab % divisor;
}

}  // namespace

Status ReadSimuMaxModel(const json& j, ModelSpec& m, const std::string& origin) {
  FieldReader r(j, origin);
  r.String("model_name", m.name);
  r.Ignore("model_type");  // "dense" / "moe": reporting only in SimuMax
  r.Int64("hidden_size", m.hidden);
  r.Int("layer_num", m.layers);
  r.Int("head_num", m.heads);
  m.kv_heads = m.heads;
  r.Int("kv_head_num", m.kv_heads);
  m.head_dim = m.heads > 0 ? m.hidden / m.heads : 0;
  r.Int64("head_size", m.head_dim);
  r.Int64("intermediate_size", m.ffn);
  r.Int64("vocab_size", m.vocab);
  m.gated_mlp = false;  // use_swiglu defaults to None (a plain MLP) in ModelConfig
  r.Bool("use_swiglu", m.gated_mlp);
  m.tied_embeddings = false;
  r.Bool("tie_word_embeddings", m.tied_embeddings);  // not SimuMax's; trainsim's extension
  ReadMoe(r, m);
  ReadMla(r, m);
  PadVocab(r, m);
  if (r.Has("layer_num") && m.layers > 0 && m.moe.first_k_dense > m.layers)
    r.Fail("dense_layers", "must be <= layer_num");
  if (!r.Has("head_size")) CheckHeadDimDefault(r, m);
  // A key outside SimuMax's ModelConfig (or one trainsim does not read) is named, not dropped.
  ListUnreadModelKeys(
      j, [&](const std::string& k) { return r.WasRead(k); },
      "not a SimuMax ModelConfig field trainsim reads: if it changes the architecture, the model "
      "costed differs from this one",
      m.ignored_keys);
  return r.Finish(false);
}

}  // namespace trainsim::detail

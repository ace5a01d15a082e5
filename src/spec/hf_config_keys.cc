// The keys of an HF config.json that the reader does not read (issue 11, "silent misreading"):
// which are harmless (metadata, tokenizer ids, numerics and positional settings that change no
// parameter, FLOP or saved byte that trainsim counts) and which would change the architecture
// that is costed. The latter, and every key in neither table, are listed as ignored in the
// model (ModelSpec::ignored_keys), so that the reports and the CLI name them.
#include <algorithm>
#include <string>
#include <string_view>

#include "spec/hf_config.h"

namespace trainsim::detail {
namespace {

using nlohmann::json;

// Keys that change nothing trainsim costs, whatever their value. Sources: PretrainedConfig's
// own attributes (transformers configuration_utils.py) and the configuration classes read by
// hf_config.cc.
constexpr std::string_view kHarmless[] = {
    // Metadata, tooling and runtime switches of the transformers library.
    "_name_or_path", "architectures", "auto_map", "transformers_version", "transformers.js_config",
    "torch_dtype", "dtype", "tokenizer_class", "tokenizer_name", "task_specific_params", "verbose",
    "_attn_implementation", "_attn_implementation_autoset", "attn_implementation",
    "for_llm_compressor", "is_llama_config", "bf16", "fp16", "fp32", "use_cache",
    "cache_implementation", "output_router_logits", "output_attentions", "output_hidden_states",
    "return_dict", "torchscript", "use_return_dict", "id2label", "label2id", "problem_type",
    "finetuning_task", "chunk_size_feed_forward", "pruned_heads", "max_length", "min_length",
    "do_sample", "num_beams", "temperature", "top_k", "top_p", "repetition_penalty",
    "length_penalty", "no_repeat_ngram_size", "early_stopping", "num_return_sequences",
    "flash_attn", "use_flash_attn", "flash_rotary", "fused_dense", "bias_dropout_fusion",
    "masked_softmax_fusion", "slow_but_exact", "pretraining_tp",
    // Token ids (the vocabulary size is read).
    "bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id", "unk_token_id",
    "decoder_start_token_id", "boi_token_index", "eoi_token_index", "image_token_index",
    "image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id",
    "vision_token_id", "predict_special_tokens",
    // Initialisation.
    "initializer_range", "init_config", "init_device", "init_std", "initializer_factor",
    // Numerics: epsilons, scales, softmax precision (element-wise, no parameter).
    "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "layernorm_epsilon", "norm_epsilon",
    "norm_eps", "attention_softmax_in_fp32", "scale_attention_softmax_in_fp32",
    "apply_query_key_layer_scaling", "scale_attn_weights", "scale_attn_by_inverse_layer_idx",
    "reorder_and_upcast_attn", "attention_multiplier", "embedding_multiplier",
    "residual_multiplier", "logits_scaling", "logit_scale", "query_pre_attn_scalar",
    "fp32_residual_connection", "swiglu_limit", "embedding_fraction",
    // Positions: the sequence length comes from the strategy; RoPE variants, ALiBi and their
    // scaling have no parameters and an element-wise cost. The nested rope_scaling /
    // rope_parameters objects are judged whole, not key by key: every sub-key transformers
    // reads (rope_type, factor, original_max_position_embeddings, low_freq_factor,
    // high_freq_factor, short_factor, long_factor, mrope_section, beta_fast, beta_slow,
    // mscale) rescales the rotary frequencies only. (YaRN's mscale scales the softmax: still
    // element-wise.)
    "max_position_embeddings", "n_positions", "n_ctx", "max_seq_len", "seq_length",
    "max_sequence_length", "initial_context_length", "original_max_position_embeddings",
    "rope_theta", "rope_scaling", "rope_parameters", "rotary_emb_base", "rope_local_base_freq",
    "rope_interleaved", "original_rope", "rotary", "rotary_dim", "rotary_pct",
    "partial_rotary_factor", "use_dynamic_ntk", "use_logn_attn", "interpolate_factor", "use_mrope",
    "mrope_section", "alibi", "alibi_bias_max",
    "position_embedding_type",  // Granite-4.0: "rope" or null (NoPE), no parameters
    // Routing: which experts a token picks, not how many (top-k and the expert sizes are read).
    "norm_topk_prob", "scoring_func", "topk_method", "n_group", "topk_group",
    "routed_scaling_factor", "aux_loss_alpha", "seq_aux", "router_aux_loss_coef",
    "router_z_loss_coef", "router_jitter_noise", "use_routing_bias", "moe_router_dtype", "moe_gate",
    "ep_size",
    // The same work in another order or norm flavour (a norm's bias is negligible).
    "parallel_attn", "use_parallel_residual", "apply_residual_connection_post_layernorm",
    "post_layer_norm", "rmsnorm", "norm_type", "qk_norm_type", "mlp_type", "normalization_function",
    "sliding_window_size",  // Gemma-2's older spelling; sliding_window is read
    "full_attn_mod",        // Phi-4-mini (phi3): Phi3Config's modeling code does not read it
    // GPT-2 double-heads summary (not part of a causal LM) and classifier heads.
    "summary_type", "summary_use_proj", "summary_activation", "summary_proj_to_labels",
    "summary_first_dropout", "classifier_dropout"};

// Keys that change the architecture and that trainsim does not model, with why; listed only
// when set (a null, false, 0 or empty value turns the feature off).
struct NotModelled {
  std::string_view key;
  std::string_view why;
};
constexpr std::string_view kEncoder =
    "a vision or audio encoder is not costed: only the language model is";
constexpr std::string_view kMtp =
    "multi-token-prediction modules of this form are not costed (DeepSeek's "
    "num_nextn_predict_layers is)";
constexpr NotModelled kNotModelled[] = {
    {"vision_config", kEncoder},
    {"vision_tower", kEncoder},
    {"audio_config", kEncoder},
    {"img_processor", kEncoder},
    // A quantized checkpoint (FP8 blocks, GPTQ/AWQ int4, bitsandbytes) changes the weight bytes,
    // but training loads it into the strategy's dtype (Megatron and HF trainers dequantize; QLoRA
    // is the strategy's method, --method qlora): warned, not refused, since the costed job (the
    // strategy's dtype) is what the user asked for; the warning says which dtype counts.
    {"quantization_config",
     "the checkpoint's quantization is not applied: weight and compute dtypes come from the "
     "strategy (precision; --method qlora for a 4-bit frozen base)"},
    {"compression_config",
     "the checkpoint's compressed (quantized) weights are not applied: weight and compute dtypes "
     "come from the strategy (precision; --method qlora for a 4-bit frozen base)"},
    // GPT2Config add_cross_attention: a cross-attention block per layer (an encoder-decoder's
    // decoder), 4 * hidden^2 more weights a layer.
    {"add_cross_attention", "cross-attention blocks (an encoder-decoder's decoder) are not costed"},
    // MPT attn_config (llm-foundry): masks that change the attention's FLOPs.
    {"prefix_lm", "prefix-LM attention (bidirectional over the prompt) is costed as causal"},
    {"attn_uses_sequence_id",
     "attention within each packed sequence (document masking) is costed as causal attention over "
     "the whole sequence: document lengths are not in the model file"},
    {"lm_head_bias", "a bias on the output layer (vocab_size values) is not counted"},
    {"final_logit_softcapping",
     "tanh soft-capping of the logits is not costed (one more vocabulary-sized element-wise "
     "pass and saved tensor)"},
    {"attn_logit_softcapping",
     "tanh soft-capping of the attention scores is not costed (attention is costed as plain "
     "softmax attention)"},
    {"use_mtp", kMtp},
    {"num_mtp_modules", kMtp},
    {"mtp_transformer_layers", kMtp},
    {"pre_seq_len", "P-tuning v2 prefix tokens (ChatGLM) are not costed"},
    {"n_special", "embedding rows of special tokens (GPT-1) are not counted"},
};

constexpr std::string_view kUnknown =
    "not read by trainsim's config.json reader: if it changes the architecture, the model "
    "costed differs from this one";

// A value that leaves a feature off.
bool IsOff(const json& v) {
  if (v.is_null()) return true;
  if (v.is_boolean()) return !v.get<bool>();
  if (v.is_number()) return v.get<double>() == 0;
  if (v.is_string()) return v.get_ref<const std::string&>().empty();
  if (v.is_array() || v.is_object()) return v.empty();
  return false;
}

std::string ShortValue(const json& v) {
  std::string s = v.dump();
  constexpr size_t kMax = 60;
  if (s.size() > kMax) s = s.substr(0, kMax - 3) + "...";
  return s;
}

}  // namespace

void ListIgnoredHfKeys(const json& obj, const std::function<bool(const std::string&)>& read,
                       const std::string& prefix, std::vector<IgnoredModelKey>& out) {
  if (!obj.is_object()) return;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& key = it.key();
    if (read(key) || IsOff(it.value())) continue;
    if (std::find(std::begin(kHarmless), std::end(kHarmless), key) != std::end(kHarmless)) continue;
    std::string_view why = kUnknown;
    for (const NotModelled& n : kNotModelled)
      if (key == n.key) why = n.why;
    out.push_back({prefix + key, ShortValue(it.value()), std::string(why)});
  }
}

void ListUnreadModelKeys(const json& obj, const std::function<bool(const std::string&)>& read,
                         std::string_view why, std::vector<IgnoredModelKey>& out) {
  if (!obj.is_object()) return;
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (!read(it.key()) && !IsOff(it.value()))
      out.push_back({it.key(), ShortValue(it.value()), std::string(why)});
}

}  // namespace trainsim::detail

// Reader for Hugging Face config.json files of decoder-only language models (any model_type):
// the architecture is read from the keys present, with each model class's defaults for absent
// keys. See docs/INPUTS.md, "Hugging Face config.json".
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/model.h"
#include "trainsim/status.h"

namespace trainsim::detail {

class FieldReader;

// Python's json module writes NaN, Infinity and -Infinity as bare tokens and HF's loader reads
// them. Returns `text` with those tokens (outside strings) replaced by the JSON strings
// kNonFiniteMarker + token, so that a strict JSON parser accepts the text and no reader can take
// them for a number.
std::string QuoteNonFiniteTokens(std::string_view text);
inline constexpr std::string_view kNonFiniteMarker = "__trainsim_non_finite__:";

// True for a JSON object that looks like an HF config.json (hidden_size / n_embd / d_model,
// model_type or a nested text_config).
bool LooksLikeHfConfig(const nlohmann::json& j);

// Fills `m` from an HF config.json. Refuses, naming the key, what ModelSpec cannot represent
// (hybrid Mamba / linear-attention layer patterns, per-layer block_configs, encoder-decoder
// models, dense-layer lists that are not a prefix). It also lists, in m.ignored_keys, the set keys
// it did not read that are not known to be harmless (hf_config_keys.cc: metadata, token ids,
// numerics, positions are not listed).
Status ReadHfConfig(const nlohmann::json& root, ModelSpec& m, const std::string& origin);

// MPT / DBRX attn_config and ffn_config (hf_config_nested.cc): reads the K/V head count by
// attention type, q/k norms, a sliding window and MPT's MLP kind, refuses unknown kinds naming
// "attn_config.attn_type" / "ffn_config.ffn_type", and lists the sub-keys it neither reads nor
// knows to be harmless in m.ignored_keys as "attn_config.<key>". REQUIRES: the shape (heads) and
// the class's gated flag are read.
void ReadNestedLayerConfigs(const nlohmann::json& j, FieldReader& r, const std::string& type,
                            ModelSpec& m);

// Appends to `out` the keys of `obj` for which `read` is false, that are set (not null, false,
// 0 or empty) and not in the table of harmless keys, each named `prefix` + key with why.
void ListIgnoredHfKeys(const nlohmann::json& obj,
                       const std::function<bool(const std::string&)>& read,
                       const std::string& prefix, std::vector<IgnoredModelKey>& out);

// Appends to `out` every set key of `obj` (not null, false, 0 or empty) for which `read` is
// false, with `why`: for readers of formats with a fixed key set (SimuMax model files).
void ListUnreadModelKeys(const nlohmann::json& obj,
                         const std::function<bool(const std::string&)>& read, std::string_view why,
                         std::vector<IgnoredModelKey>& out);

}  // namespace trainsim::detail

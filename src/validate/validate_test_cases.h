// Small built-in validation cases for unit tests that must not depend on ../shared.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace trainsim::testing {

// One GPT-1.7B run on 32 A100s (Narayanan et al. 2021), as a JSONL line.
inline std::string BuiltinCaseLine() {
  return R"({"id": "builtin-001", "source": "Narayanan et al. 2021 (SC21) Table 1", "model": {"name": "GPT-1.7B", "hidden_size": 2304, "num_hidden_layers": 24, "num_attention_heads": 24, "num_key_value_heads": 24, "head_dim": 96, "intermediate_size": 9216, "vocab_size": 51200, "hidden_act": "gelu", "tie_word_embeddings": true, "moe": null, "mla": null, "mtp_layers": 0}, "hardware": "a100_sxm_80gb", "hardware_overrides": null, "gpus": 32, "precision": "bf16", "parallel": {"tp": 1, "pp": 1, "vpp": null, "cp": null, "ep": null, "etp": null, "dp": null, "sp": false, "zero": 0, "fsdp": false}, "recompute": null, "seq": 2048, "mbs": null, "gbs": 512, "measured": {"iter_time_s": null, "tokens_per_s_per_gpu": null, "tflops_per_gpu": 137.0, "mfu": 0.44, "peak_mem_gib": 30.0}, "target_iter_time_s": 3.52802, "target_derived": true, "notes": ""})";
}

// The built-in case with another id, global batch and target (i = 1, 2, ...).
inline std::string BuiltinCaseVariant(int i, const std::string& family = "builtin") {
  nlohmann::json j = nlohmann::json::parse(BuiltinCaseLine());
  j["id"] = family + "-" + std::to_string(100 + i);
  j["gbs"] = 128 * i;
  j["target_iter_time_s"] = 0.9 * i * (1.0 + 0.05 * (i % 3));
  return j.dump();
}

}  // namespace trainsim::testing

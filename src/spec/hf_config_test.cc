// Published architectures as data: every row of src/spec/testdata/hf_configs/params.jsonl names a
// config.json gathered from a public source (listed in that folder's README.md) and the parameter
// count its authors published (total, and active for MoE). CountParams must agree to 1 %.
// Behavioural tests of the HF reader (class defaults, key spellings, refusals) follow the table.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "trainsim/model.h"
#include "trainsim/presets.h"
#include "trainsim/strategy.h"

namespace trainsim {
namespace {

using nlohmann::json;

const std::string kDir = std::string(TRAINSIM_SOURCE_DIR) + "/src/spec/testdata/hf_configs/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<json> Rows() {
  std::vector<json> rows;
  std::istringstream in(ReadFile(kDir + "params.jsonl"));
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) rows.push_back(json::parse(line));
  return rows;
}

// The count the publisher reports as "active". Conventions differ: OpenAI (gpt-oss) and DeepSeek
// count the output head but not the embedding lookup (row: "active_excludes": "embedding");
// Zhipu (GLM-4.5) counts neither ("embedding_and_head").
double Active(const json& row, const ModelSpec& m, const ParamCounts& c) {
  double active = static_cast<double>(c.active);
  const std::string excludes = row.value("active_excludes", "");
  if (excludes == "embedding" || excludes == "embedding_and_head")
    active -= static_cast<double>(m.vocab * m.hidden);
  if (excludes == "embedding_and_head") active -= static_cast<double>(c.output);
  return active;
}

TEST(HfConfigTable, PublishedParameterCountsWithinOnePercent) {
  const std::vector<json> rows = Rows();
  // A ratchet: the table only grows (the issue's target is 30; see hf_configs/README.md).
  EXPECT_GE(rows.size(), 30u);
  std::set<std::string> listed;
  for (const json& row : rows) {
    // "file": a config gathered into hf_configs/; "path": a model preset (data/models/) that is
    // itself a published config.json (data/models/README.md gives its source).
    const bool preset = row.contains("path");
    const std::string file = row.at(preset ? "path" : "file").get<std::string>();
    if (!preset) listed.insert(file);
    SCOPED_TRACE(file);
    const double tol = row.value("tolerance", 0.01);  // wider only where the row says why
    if (tol != 0.01) {
      EXPECT_TRUE(row.contains("tolerance_why")) << "a wider tolerance needs a reason";
    }
    auto m = ParseModelJson(
        ReadFile(preset ? std::string(TRAINSIM_SOURCE_DIR) + "/" + file : kDir + file), file);
    ASSERT_TRUE(m.ok()) << m.status().message();
    const ParamCounts c = CountParams(m.value());
    const double want_total = row.at("total_b").get<double>() * 1e9;
    // A checkpoint's safetensors size counts the MTP modules it ships ("total_includes": "mtp");
    // a model card's figure is the main model's.
    const double total = static_cast<double>(c.total) +
                         (row.value("total_includes", "") == "mtp" ? c.mtp_total : 0.0);
    EXPECT_NEAR(total / want_total, 1.0, tol)
        << "total " << total / 1e9 << " B, published " << want_total / 1e9 << " B";
    if (row.contains("active_b") && !row["active_b"].is_null()) {
      const double want_active = row["active_b"].get<double>() * 1e9;
      EXPECT_NEAR(Active(row, m.value(), c) / want_active, 1.0, tol)
          << "active " << Active(row, m.value(), c) / 1e9 << " B, published " << want_active / 1e9
          << " B";
      EXPECT_TRUE(m->is_moe());
    }
  }
  // Every stored config is in the table.
  for (const auto& e : std::filesystem::directory_iterator(kDir)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".json") {
      EXPECT_TRUE(listed.count(name)) << name << " has no row";
    }
  }
}

// The graph's parameter groups (what memory and the optimizer see) hold exactly CountParams for
// every published architecture, so the counts checked above are the ones simulated.
TEST(HfConfigTable, GraphParameterGroupsMatchTheCount) {
  for (const json& row : Rows()) {
    const bool preset = row.contains("path");
    const std::string file = row.at(preset ? "path" : "file").get<std::string>();
    auto m = ParseModelJson(
        ReadFile(preset ? std::string(TRAINSIM_SOURCE_DIR) + "/" + file : kDir + file), file);
    ASSERT_TRUE(m.ok()) << file << ": " << m.status().message();
    graph::StageLayers sl;
    for (int i = 0; i < m->layers; ++i) (m->layer_is_moe(i) ? sl.moe : sl.dense)++;
    sl.first = sl.last = true;
    sl.mtp = m->mtp_layers;  // the MTP modules run on the stage that holds them
    double n = 0;
    for (const graph::ParamGroup& g : graph::StageParamGroups(m.value(), Strategy{}, sl))
      n += g.count;
    const ParamCounts c = CountParams(m.value());
    // Exact for every row: the graph's MTP modules carry their two input norms, as CountParams'
    // mtp_total does (MiMo-7B's checkpoint size checks the pair).
    EXPECT_NEAR(n / static_cast<double>(c.total + c.mtp_total), 1.0, 1e-12) << file;
  }
}

Result<ModelSpec> Parse(const std::string& text) {
  return ParseModelJson(text, "t.json");
}

constexpr const char* kBase =
    R"("hidden_size": 1024, "num_attention_heads": 16, "num_hidden_layers": 4,
       "intermediate_size": 4096, "vocab_size": 32000)";

std::string Cfg(const std::string& type, const std::string& extra = "") {
  return "{\"model_type\": \"" + type + "\", " + kBase + (extra.empty() ? "" : ", " + extra) + "}";
}

TEST(HfConfigClass, GatedFollowsTheClassNotTheActivation) {
  const std::string act = R"("hidden_act": "gelu_pytorch_tanh")";
  auto gemma = Parse(Cfg("gemma2", act));
  auto starcoder = Parse(Cfg("starcoder2", act));
  ASSERT_TRUE(gemma.ok() && starcoder.ok());
  EXPECT_TRUE(gemma->gated_mlp);       // Gemma2MLP: gate_proj, up_proj, down_proj
  EXPECT_FALSE(starcoder->gated_mlp);  // Starcoder2MLP: c_fc, c_proj
  EXPECT_TRUE(gemma->tied_embeddings);
  EXPECT_TRUE(starcoder->tied_embeddings);
  EXPECT_TRUE(starcoder->linear_bias);
  auto untied = Parse(Cfg("gemma", R"("tie_word_embeddings": false)"));
  ASSERT_TRUE(untied.ok());
  EXPECT_FALSE(untied->tied_embeddings);
}

TEST(HfConfigClass, FalconAndChatGlmSpellings) {
  auto falcon = Parse(R"({"model_type": "falcon", "hidden_size": 4544, "n_head": 71,
      "n_layer": 32, "multi_query": true, "vocab_size": 65024})");
  ASSERT_TRUE(falcon.ok()) << falcon.status().message();
  EXPECT_EQ(falcon->layers, 32);
  EXPECT_EQ(falcon->kv_heads, 1);
  EXPECT_EQ(falcon->ffn, 4 * 4544);
  auto glm = Parse(ReadFile(kDir + "chatglm2-6b.json"));
  ASSERT_TRUE(glm.ok()) << glm.status().message();
  EXPECT_EQ(glm->layers, 28);
  EXPECT_EQ(glm->kv_heads, 2);
  EXPECT_EQ(glm->head_dim, 128);
  EXPECT_EQ(glm->vocab, 65024);
  EXPECT_TRUE(glm->qkv_bias);
}

TEST(HfConfigKeys, MoeFromKeysForAnyModelType) {
  auto m = Parse(Cfg("some_new_moe", R"("n_routed_experts": 64, "num_experts_per_tok": 6,
      "moe_intermediate_size": 1408, "n_shared_experts": 2, "first_k_dense_replace": 1)"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->moe.num_experts, 64);
  EXPECT_EQ(m->moe.top_k, 6);
  EXPECT_EQ(m->moe.shared_ffn, 2 * 1408);
  EXPECT_EQ(m->moe.first_k_dense, 1);
  EXPECT_EQ(m->moe.dense_ffn, 4096);
}

TEST(HfConfigKeys, SparseStepAndDensePrefixPlaceLayersExactly) {
  // Qwen2MoeDecoderLayer: layer i is sparse when (i + 1) % decoder_sparse_step == 0.
  auto step = Parse(Cfg("qwen2_moe", R"("num_experts": 8, "num_experts_per_tok": 2,
      "moe_intermediate_size": 512, "decoder_sparse_step": 2)"));
  ASSERT_TRUE(step.ok()) << step.status().message();
  EXPECT_FALSE(step->layer_is_moe(0));
  EXPECT_TRUE(step->layer_is_moe(1));
  EXPECT_FALSE(step->layer_is_moe(2));
  EXPECT_TRUE(step->layer_is_moe(3));
  auto prefix = Parse(Cfg("qwen3_moe", R"("num_experts": 8, "num_experts_per_tok": 2,
      "moe_intermediate_size": 512, "mlp_only_layers": [1, 0])"));
  ASSERT_TRUE(prefix.ok()) << prefix.status().message();
  EXPECT_EQ(prefix->moe.first_k_dense, 2);
}

TEST(HfConfigKeys, TextConfigIsTheLanguageModel) {
  auto m = Parse(R"({"model_type": "gemma3", "vision_config": {"hidden_size": 1152},
      "text_config": {"hidden_size": 2560, "num_attention_heads": 8, "num_key_value_heads": 4,
      "head_dim": 256, "num_hidden_layers": 34, "intermediate_size": 10240,
      "vocab_size": 262208, "sliding_window": 1024}})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->hidden, 2560);
  EXPECT_TRUE(m->tied_embeddings);  // gemma3_text default
  EXPECT_TRUE(m->qk_norm);
  EXPECT_EQ(m->windowed_layers(), 34 - 34 / 6);  // 5 sliding : 1 global
}

// Published multimodal checkpoints leave size keys of text_config to the class, which
// transformers fills with its defaults: google/gemma-3-4b-it gives no head counts, no head size and
// no vocabulary, gemma-3-27b-it no vocabulary, llava-1.5-7b-hf nothing but the vocabulary. Text
// parameters against the Gemma 3 technical report (Table 1: embedding + non-embedding, 4B 675 M +
// 3,209 M, 27B 1,416 M + 25,600 M) and Vicuna-7B (Llama-2-7B's 6.74 B, 64 more vocabulary rows).
TEST(HfConfigKeys, NestedTextConfigTakesItsClassDefaults) {
  auto g4 = Parse(R"({"model_type": "gemma3", "vision_config": {"hidden_size": 1152},
      "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
      "num_hidden_layers": 34, "sliding_window": 1024}})");
  ASSERT_TRUE(g4.ok()) << g4.status().message();
  EXPECT_EQ(g4->heads, 8);
  EXPECT_EQ(g4->kv_heads, 4);
  EXPECT_EQ(g4->head_dim, 256);
  EXPECT_EQ(g4->vocab, 262208);
  EXPECT_NEAR(CountParams(g4.value()).total / 3.884e9, 1, 0.01);
  auto g27 = Parse(R"({"model_type": "gemma3", "text_config": {"head_dim": 128,
      "hidden_size": 5376, "intermediate_size": 21504, "model_type": "gemma3_text",
      "num_attention_heads": 32, "num_hidden_layers": 62, "num_key_value_heads": 16,
      "query_pre_attn_scalar": 168, "sliding_window": 1024}})");
  ASSERT_TRUE(g27.ok()) << g27.status().message();
  EXPECT_NEAR(CountParams(g27.value()).total / 27.016e9, 1, 0.01);
  auto llava = Parse(R"({"model_type": "llava", "tie_word_embeddings": false,
      "text_config": {"architectures": ["LlamaForCausalLM"], "max_position_embeddings": 4096,
      "model_type": "llama", "rms_norm_eps": 1e-05, "vocab_size": 32064}})");
  ASSERT_TRUE(llava.ok()) << llava.status().message();
  EXPECT_EQ(llava->layers, 32);
  EXPECT_EQ(llava->ffn, 11008);
  EXPECT_NEAR(CountParams(llava.value()).total / 6.74e9, 1, 0.01);
  // A Mistral-3 / Pixtral text_config saved with MistralConfig's defaults left out.
  auto pixtral = Parse(R"({"model_type": "mistral3", "text_config": {"model_type": "mistral",
      "hidden_size": 5120, "head_dim": 128, "intermediate_size": 32768, "num_hidden_layers": 40,
      "vocab_size": 131072, "sliding_window": null}})");
  ASSERT_TRUE(pixtral.ok()) << pixtral.status().message();
  EXPECT_EQ(pixtral->heads, 32);
  EXPECT_EQ(pixtral->kv_heads, 8);
  EXPECT_EQ(pixtral->attention.window, 0);
  EXPECT_NEAR(CountParams(pixtral.value()).total / 23.57e9, 1, 0.01);  // Mistral-Small-3.1 text
  // At the top level a missing key is still named, not defaulted.
  EXPECT_FALSE(Parse(R"({"model_type": "gemma3_text", "hidden_size": 2560,
      "intermediate_size": 10240, "num_hidden_layers": 34})")
                   .ok());
}

// A top-level key that shapes the model without sizing it takes its class's default when absent
// (transformers builds Class(**config)); `null` is Python's None. Regression: a hand-written
// Mixtral config without expert keys was costed as a dense model, a Mistral one as MHA without
// its 4096-token window.
TEST(HfConfigKeys, TopLevelShapeKeysTakeTheClassDefaults) {
  auto mistral = Parse(Cfg("mistral"));
  ASSERT_TRUE(mistral.ok()) << mistral.status().message();
  EXPECT_EQ(mistral->kv_heads, 8);  // MistralConfig num_key_value_heads
  EXPECT_EQ(mistral->attention.window, 4096);
  EXPECT_EQ(mistral->windowed_layers(), 4);
  auto none = Parse(Cfg("mistral", R"("sliding_window": null, "num_key_value_heads": null)"));
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ(none->attention.window, 0);
  EXPECT_EQ(none->kv_heads, 16);
  auto mixtral = Parse(Cfg("mixtral"));
  ASSERT_TRUE(mixtral.ok()) << mixtral.status().message();
  EXPECT_EQ(mixtral->moe.num_experts, 8);
  EXPECT_EQ(mixtral->moe.top_k, 2);
  EXPECT_EQ(mixtral->attention.window, 0);  // MixtralConfig sliding_window None
  auto gemma2 = Parse(Cfg("gemma2"));
  ASSERT_TRUE(gemma2.ok()) << gemma2.status().message();
  EXPECT_EQ(gemma2->head_dim, 256);
  EXPECT_EQ(gemma2->kv_heads, 4);
  EXPECT_EQ(gemma2->windowed_layers(), 2);
  auto cohere2 = Parse(Cfg("cohere2"));
  ASSERT_TRUE(cohere2.ok()) << cohere2.status().message();
  EXPECT_EQ(cohere2->windowed_layers(), 3);  // every 4th layer global
  // A file's own value wins, and the llama class keeps MHA without a window.
  auto llama = Parse(Cfg("llama"));
  ASSERT_TRUE(llama.ok());
  EXPECT_EQ(llama->kv_heads, 16);
  EXPECT_EQ(llama->attention.window, 0);
  EXPECT_EQ(Parse(Cfg("mistral", R"("num_key_value_heads": 2)"))->kv_heads, 2);
  auto qwen3 = Parse(R"({"model_type": "qwen3", "hidden_size": 1024, "num_attention_heads": 16,
      "num_hidden_layers": 32, "intermediate_size": 4096, "vocab_size": 32000,
      "use_sliding_window": true})");
  ASSERT_TRUE(qwen3.ok()) << qwen3.status().message();
  EXPECT_EQ(qwen3->head_dim, 128);  // Qwen3Config head_dim, not hidden / heads (64)
  EXPECT_EQ(qwen3->attention.window, 4096);
  EXPECT_EQ(qwen3->windowed_layers(), 4);               // layers 28..31 (max_window_layers 28)
  EXPECT_EQ(Parse(Cfg("qwen2"))->attention.window, 0);  // no use_sliding_window
  auto qmoe = Parse(Cfg("qwen3_moe"));
  ASSERT_TRUE(qmoe.ok()) << qmoe.status().message();
  EXPECT_EQ(qmoe->kv_heads, 4);
  EXPECT_EQ(qmoe->moe.num_experts, 128);
  EXPECT_EQ(qmoe->moe.top_k, 8);
  EXPECT_EQ(qmoe->moe.expert_ffn, 768);
}

// EXAONE-4.0 / 4.5 checkpoints spell the local/global layout as letters ("LLLG"), beside
// layer_types; an integer pattern is Exaone4Config's (i + 1) % N. Regression: the published
// configs were refused ("sliding_window_pattern: must be an integer, got string").
TEST(HfConfigKeys, ExaoneLetterPatternNamesTheLocalLayers) {
  const std::string base =
      R"("hidden_size": 5120, "intermediate_size": 27392, "num_attention_heads": 40,
         "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 102400, "sliding_window": 4096)";
  auto lllg = Parse(R"({"model_type": "exaone4", "num_hidden_layers": 64,
      "sliding_window_pattern": "LLLG", )" +
                    base + "}");
  ASSERT_TRUE(lllg.ok()) << lllg.status().message();
  EXPECT_EQ(lllg->windowed_layers(), 48);
  // The last layer is global whatever its letter (TensorRT-LLM check_is_sliding).
  auto llg = Parse(R"({"model_type": "exaone4", "num_hidden_layers": 6,
      "sliding_window_pattern": "LLG", )" +
                   base + "}");
  ASSERT_TRUE(llg.ok()) << llg.status().message();
  EXPECT_EQ(llg->windowed_layers(), 4);  // L L G L L (G)
  auto listed = Parse(R"({"model_type": "exaone4", "num_hidden_layers": 4,
      "sliding_window_pattern": "LLLG", "layer_types": ["sliding_attention",
      "full_attention", "full_attention", "full_attention"], )" +
                      base + "}");
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  EXPECT_EQ(listed->windowed_layers(), 1);
  // Exaone4Config's defaults: a 4096 window on all but every 4th layer.
  auto dflt = Parse(Cfg("exaone4"));
  ASSERT_TRUE(dflt.ok()) << dflt.status().message();
  EXPECT_EQ(dflt->attention.window, 4096);
  EXPECT_EQ(dflt->windowed_layers(), 3);
  EXPECT_EQ(Parse(Cfg("exaone4", R"("sliding_window": null)"))->attention.window, 0);
}

// EXAONE-MoE names its MoE layers per layer: is_moe_layer (TensorRT-LLM's ExaoneMoEConfig
// fixture, which sets no first_k_dense_replace) or mlp_layer_types (transformers). Regression:
// without first_k_dense_replace the dense first layer was costed as an MoE layer.
TEST(HfConfigKeys, ExaoneMoeLayerListsPlaceTheDenseLayer) {
  const std::string base =
      R"("model_type": "exaone_moe", "hidden_size": 6144, "intermediate_size": 18432,
         "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
         "num_hidden_layers": 4, "vocab_size": 153600, "moe_intermediate_size": 2048,
         "num_experts": 128, "num_experts_per_tok": 8, "num_shared_experts": 1)";
  for (const char* list : {R"("is_moe_layer": [false, true, true, true])",
                           R"("mlp_layer_types": ["dense", "sparse", "sparse", "sparse"])"}) {
    auto m = Parse("{" + base + ", " + list + "}");
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(m->moe.first_k_dense, 1) << list;
    EXPECT_EQ(m->moe.layer_freq, 1) << list;
    EXPECT_EQ(m->moe.dense_ffn, 18432) << list;
    EXPECT_TRUE(m->qk_norm) << list;  // ExaoneMoeAttention normalises q and k
  }
  EXPECT_FALSE(Parse("{" + base + R"(, "mlp_layer_types": ["dense", "sparse", "sparse"]})").ok());
}

// Granite-4.0 dense models (granite-4.0-micro, -1b, -350m) are GraniteMoeHybrid configs whose
// layer_types are all "attention"; their MLP is the shared_mlp of shared_intermediate_size.
// Regression: refused by model_type as a state-space hybrid. Layers from the "4.0-micro" entry of
// a Granite-4 test's GRANITE4_FULLSIZE table (code index file id 56628895354).
TEST(HfConfigKeys, GraniteHybridWithOnlyAttentionLayers) {
  std::string types;
  for (int i = 0; i < 40; ++i) types += std::string(i ? ", " : "") + "\"attention\"";
  const std::string micro =
      R"("model_type": "granitemoehybrid", "vocab_size": 100352, "hidden_size": 2560,
         "num_hidden_layers": 40, "num_attention_heads": 40, "num_key_value_heads": 8,
         "intermediate_size": 8192, "shared_intermediate_size": 8192, "num_local_experts": 0,
         "num_experts_per_tok": 0, "position_embedding_type": "rope", "mamba_d_state": 128,
         "tie_word_embeddings": true, "layer_types": [)" +
      types + "]";
  auto m = Parse("{" + micro + "}");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(m->is_moe());
  EXPECT_EQ(m->ffn, 8192);
  EXPECT_TRUE(m->gated_mlp);
  EXPECT_TRUE(m->ignored_keys.empty()) << m->ignored_keys[0].key;
  EXPECT_NEAR(CountParams(m.value()).total / 3.403e9, 1, 0.001);
  // With experts: routed experts of intermediate_size beside the shared MLP on every layer.
  auto moe = Parse(R"({"model_type": "granitemoehybrid", "vocab_size": 100352,
      "hidden_size": 2560, "num_hidden_layers": 2, "num_attention_heads": 40,
      "intermediate_size": 768, "shared_intermediate_size": 1536, "num_local_experts": 72,
      "num_experts_per_tok": 10, "layer_types": ["attention", "attention"]})");
  ASSERT_TRUE(moe.ok()) << moe.status().message();
  EXPECT_EQ(moe->moe.num_experts, 72);
  EXPECT_EQ(moe->moe.expert_ffn, 768);
  EXPECT_EQ(moe->moe.shared_ffn, 1536);
  // Mamba layers, or no list (every layer Mamba), stay refused naming the key.
  auto hybrid = Parse(R"({"model_type": "granitemoehybrid", "vocab_size": 100352,
      "hidden_size": 2560, "num_hidden_layers": 2, "num_attention_heads": 40,
      "intermediate_size": 768, "layer_types": ["mamba", "attention"]})");
  ASSERT_FALSE(hybrid.ok());
  EXPECT_NE(hybrid.status().message().find("layer_types"), std::string::npos);
  EXPECT_FALSE(Parse(Cfg("granitemoehybrid")).ok());
}

// A model_type the class table does not know takes PretrainedConfig's tie_word_embeddings
// default (True): transformers writes the key whenever it is false, so a saved config that names
// its type and leaves the key out ties. Regression: such files were costed with a separate
// output layer (vocab x hidden more weights).
TEST(HfConfigKeys, UnknownClassTiesLikePretrainedConfig) {
  auto minicpm = Parse(Cfg("minicpm", R"("scale_emb": 12, "dim_model_base": 256)"));
  ASSERT_TRUE(minicpm.ok()) << minicpm.status().message();
  EXPECT_TRUE(minicpm->tied_embeddings);
  EXPECT_FALSE(Parse(Cfg("minicpm", R"("tie_word_embeddings": false)"))->tied_embeddings);
  // No model_type (trainsim's own model objects), or a nested text model without one: untied.
  std::string plain_text = "{";
  plain_text += kBase;
  plain_text += "}";
  auto plain = Parse(plain_text);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_FALSE(plain->tied_embeddings);
  std::string wrapped_text = R"({"model_type": "llava", "text_config": {)";
  wrapped_text += kBase;
  wrapped_text += "}}";
  auto wrapped = Parse(wrapped_text);
  ASSERT_TRUE(wrapped.ok()) << wrapped.status().message();
  EXPECT_FALSE(wrapped->tied_embeddings);
}

TEST(HfConfigKeys, NonFiniteMeansNoLimitOrIsRefused) {
  auto m = Parse(Cfg("mistral", R"("sliding_window": Infinity, "rope_theta": NaN)"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->attention.window, 0);
  auto bad = Parse(Cfg("llama", R"("num_key_value_heads": Infinity)"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "num_key_value_heads");
  // Inside strings the tokens are text.
  auto s = Parse(Cfg("llama", R"("note": "NaN and Infinity \" NaN")"));
  EXPECT_TRUE(s.ok()) << s.status().message();
}

TEST(HfConfigKeys, AbsentKeysAreNamedNotMustBePositive) {
  auto m = Parse(R"({"model_type": "llama", "hidden_size": 1024, "num_attention_heads": 16,
      "intermediate_size": 4096, "vocab_size": 32000})");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().field(), "num_hidden_layers");
  EXPECT_NE(m.status().message().find("n_layer"), std::string::npos) << m.status().message();
  EXPECT_EQ(m.status().message().find("> 0"), std::string::npos) << m.status().message();
}

// GPT-OSS shapes from OpenAI's gpt-oss model card (arXiv:2508.10925, Table 1): 36 layers,
// 128 experts of width 2880, top-4, 64 query / 8 kv heads of 64, o200k_harmony vocabulary
// (201,088), alternating sliding (128) and full attention layers; 116.83B total.
TEST(HfConfigKeys, GptOssExpertsSlidingLayersAndBiases) {
  std::string types;
  for (int i = 0; i < 36; ++i)
    types += std::string(i ? ", " : "") + (i % 2 ? "\"full_attention\"" : "\"sliding_attention\"");
  auto m = Parse(R"({"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 36,
      "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
      "intermediate_size": 2880, "num_local_experts": 128, "experts_per_token": 4,
      "vocab_size": 201088, "sliding_window": 128, "layer_types": [)" +
                 types + "]}");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->moe.num_experts, 128);
  EXPECT_EQ(m->moe.top_k, 4);
  EXPECT_EQ(m->moe.expert_ffn, 2880);
  EXPECT_EQ(m->windowed_layers(), 18);
  EXPECT_TRUE(m->qkv_bias);  // GptOssConfig attention_bias defaults to True
  EXPECT_FALSE(m->tied_embeddings);
  EXPECT_NEAR(CountParams(m.value()).total / 116.83e9, 1.0, 0.01);
}

// Llama4TextDecoderLayer: layer i is MoE when (i + 1) % interleave_moe_layer_step == 0; dense
// layers use intermediate_size_mlp; each MoE layer adds one shared expert of intermediate_size.
TEST(HfConfigKeys, Llama4InterleavedMoePlacement) {
  auto m = Parse(R"({"model_type": "llama4", "text_config": {"model_type": "llama4_text",
      "hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8, "head_dim": 64,
      "num_key_value_heads": 2, "intermediate_size": 256, "intermediate_size_mlp": 1024,
      "num_local_experts": 16, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2,
      "vocab_size": 1000}})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(m->layer_is_moe(0));
  EXPECT_TRUE(m->layer_is_moe(1));
  EXPECT_FALSE(m->layer_is_moe(2));
  EXPECT_TRUE(m->layer_is_moe(3));
  EXPECT_EQ(m->moe.dense_ffn, 1024);
  EXPECT_EQ(m->moe.shared_ffn, 256);
}

// Llama4TextConfig: attention_chunk_size (default 8192) on the RoPE layers; no_rope_layers
// empty = every no_rope_layer_interval-th (4th) layer NoPE and global.
TEST(HfConfigKeys, Llama4ChunkedLocalAttention) {
  auto m = Parse(R"({"model_type": "llama4", "text_config": {"model_type": "llama4_text",
      "hidden_size": 512, "num_hidden_layers": 8, "num_attention_heads": 8, "head_dim": 64,
      "num_key_value_heads": 2, "intermediate_size": 256, "intermediate_size_mlp": 1024,
      "num_local_experts": 16, "num_experts_per_tok": 1, "interleave_moe_layer_step": 1,
      "attention_chunk_size": 8192, "no_rope_layers": [], "vocab_size": 1000}})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->attention.kind, AttentionKind::kChunkedLocal);
  EXPECT_EQ(m->attention.window, 8192);
  EXPECT_EQ(m->windowed_layers(), 6);
  auto given = Parse(R"({"model_type": "llama4_text", "hidden_size": 512,
      "num_hidden_layers": 4, "num_attention_heads": 8, "head_dim": 64, "num_key_value_heads": 2,
      "intermediate_size": 256, "intermediate_size_mlp": 1024, "num_local_experts": 16,
      "num_experts_per_tok": 1, "attention_chunk_size": 4096, "no_rope_layers": [1, 0, 0, 1],
      "vocab_size": 1000})");
  ASSERT_TRUE(given.ok()) << given.status().message();
  EXPECT_EQ(given->attention.window, 4096);
  EXPECT_EQ(given->windowed_layers(), 2);
}

// ERNIE-4.5 MoE (Ernie4_5_MoeDecoderLayer): layer i is MoE when (i + 1) % moe_layer_interval == 0
// and moe_layer_start_index <= i; the published 21B-A3B config has a dense layer 0. These keys were
// not read before, so every layer was costed as MoE; the class also ties the embedding by default.
TEST(HfConfigKeys, ErnieMoeLayerStartAndInterval) {
  auto m = Parse(R"({"model_type": "ernie4_5_moe",
      "hidden_size": 2560, "intermediate_size": 12288, "num_attention_heads": 20,
      "num_key_value_heads": 4, "num_hidden_layers": 28, "vocab_size": 103424,
      "moe_num_experts": 64, "moe_k": 6, "moe_intermediate_size": 1536,
      "moe_num_shared_experts": 2, "moe_layer_start_index": 1, "moe_layer_interval": 1,
      "moe_layer_end_index": null})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->moe.first_k_dense, 1);
  EXPECT_EQ(m->moe.layer_freq, 1);
  EXPECT_EQ(m->moe.dense_ffn, 12288);
  EXPECT_EQ(m->moe.shared_ffn, 2 * 1536);
  EXPECT_TRUE(m->tied_embeddings);  // Ernie4_5_MoeConfig: tie_word_embeddings=True
  int moe_layers = 0;
  for (int i = 0; i < m->layers; ++i) moe_layers += m->layer_is_moe(i);
  EXPECT_EQ(moe_layers, 27);
  // Interval 2 from start 1: layers 1, 3, 5, 7 ((i + 1) % 2 == 0).
  auto every2 = Parse(Cfg("ernie4_5_moe", R"("moe_num_experts": 8, "moe_k": 2,
      "moe_intermediate_size": 512, "moe_layer_start_index": 2, "moe_layer_interval": 2)"));
  ASSERT_TRUE(every2.ok()) << every2.status().message();
  EXPECT_FALSE(every2->layer_is_moe(2));
  EXPECT_TRUE(every2->layer_is_moe(3));
  EXPECT_FALSE(every2->layer_is_moe(1));
}

// Hunyuan (modeling_hunyuan.py): per-layer lists of equal entries, a shared MLP of
// intermediate_size with use_mixed_mlp_moe, head size from attention_head_dim; num_experts 1 is
// the dense Hunyuan-7B (a plain MLP), not a one-expert MoE.
TEST(HfConfigKeys, HunyuanListsSharedMlpAndDenseOneExpert) {
  auto moe = Parse(ReadFile(kDir + "hunyuan-a13b.json"));
  ASSERT_TRUE(moe.ok()) << moe.status().message();
  EXPECT_EQ(moe->moe.num_experts, 64);
  EXPECT_EQ(moe->moe.top_k, 8);
  EXPECT_EQ(moe->moe.expert_ffn, 3072);
  EXPECT_EQ(moe->moe.shared_ffn, 3072);
  EXPECT_EQ(moe->head_dim, 128);
  EXPECT_TRUE(moe->qk_norm);
  auto dense = Parse(Cfg("hunyuan", R"("num_experts": 1, "moe_topk": [1, 1, 1, 1],
      "num_shared_expert": [1, 1, 1, 1], "use_mixed_mlp_moe": false)"));
  ASSERT_TRUE(dense.ok()) << dense.status().message();
  EXPECT_FALSE(dense->is_moe());
  EXPECT_EQ(dense->ffn, 4096);
}

// GraniteMoeShared (shared_intermediate_size) and InternLM3 (qkv_bias) spellings.
TEST(HfConfigKeys, GraniteSharedExpertAndQkvBiasSpelling) {
  auto g = Parse(Cfg("granitemoeshared", R"("num_local_experts": 32, "num_experts_per_tok": 8,
      "shared_intermediate_size": 1024)"));
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->moe.shared_ffn, 1024);
  EXPECT_EQ(g->moe.expert_ffn, 4096);  // GraniteMoe experts are intermediate_size wide
  auto i3 = Parse(Cfg("internlm3", R"("qkv_bias": true, "bias": false)"));
  ASSERT_TRUE(i3.ok()) << i3.status().message();
  EXPECT_TRUE(i3->qkv_bias);
  EXPECT_FALSE(i3->linear_bias);
}

// GPT-Neo (GPTNeoConfig): attention_types expands to global/local layers, local ones windowed
// by window_size; learned positions; intermediate_size null is 4h; embeddings tied.
TEST(HfConfigClass, GptNeoLocalLayersAndLearnedPositions) {
  auto m = Parse(R"({"model_type": "gpt_neo", "hidden_size": 2048, "num_layers": 24,
      "num_heads": 16, "intermediate_size": null, "vocab_size": 50257, "window_size": 256,
      "max_position_embeddings": 2048, "activation_function": "gelu_new",
      "attention_types": [[["global", "local"], 12]]})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->ffn, 4 * 2048);
  EXPECT_FALSE(m->gated_mlp);
  EXPECT_TRUE(m->tied_embeddings);
  EXPECT_EQ(m->learned_pos_emb, 2048);
  EXPECT_EQ(m->attention.kind, AttentionKind::kSlidingWindow);
  EXPECT_EQ(m->attention.window, 256);
  EXPECT_EQ(m->attention.window_layers, 12);
}

// Snowflake Arctic: the dense residual MLP beside the MoE is an always-active shared expert of
// intermediate_size ("10B dense + residual 128x3.66B MoE MLP", 480B total, 17B active);
// moe_layer_frequency places MoE layers like Qwen's decoder_sparse_step.
TEST(HfConfigKeys, ArcticResidualMlpIsASharedExpert) {
  auto m = Parse(Cfg("arctic", R"("num_local_experts": 128, "num_experts_per_tok": 2,
      "parallel_attn_mlp_res": true, "moe_layer_frequency": 2)"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->moe.shared_ffn, 4096);
  EXPECT_EQ(m->moe.expert_ffn, 4096);
  EXPECT_FALSE(m->layer_is_moe(0));
  EXPECT_TRUE(m->layer_is_moe(1));
  // Apertus: xIELU in a plain (non-gated) MLP, q/k norms.
  auto a = Parse(Cfg("apertus", R"("hidden_act": "xielu")"));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_FALSE(a->gated_mlp);
  EXPECT_TRUE(a->qk_norm);
}

TEST(HfConfigClass, MptDbrxOptBloomSpellings) {
  // MPT: d_model / n_heads / n_layers, MLP = expansion_ratio * d_model, no_bias, tied.
  auto mpt = Parse(R"({"model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32,
      "expansion_ratio": 4, "vocab_size": 50432, "no_bias": true,
      "attn_config": {"alibi": true, "attn_type": "grouped_query_attention", "kv_n_heads": 8}})");
  ASSERT_TRUE(mpt.ok()) << mpt.status().message();
  EXPECT_EQ(mpt->ffn, 4 * 4096);
  EXPECT_EQ(mpt->kv_heads, 8);
  EXPECT_FALSE(mpt->gated_mlp);
  EXPECT_FALSE(mpt->linear_bias);
  EXPECT_TRUE(mpt->tied_embeddings);
  // DBRX: the MoE is described inside ffn_config.
  auto dbrx = Parse(R"({"model_type": "dbrx", "d_model": 6144, "n_heads": 48, "n_layers": 40,
      "vocab_size": 100352, "attn_config": {"kv_n_heads": 8},
      "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4}})");
  ASSERT_TRUE(dbrx.ok()) << dbrx.status().message();
  EXPECT_EQ(dbrx->moe.num_experts, 16);
  EXPECT_EQ(dbrx->moe.top_k, 4);
  EXPECT_EQ(dbrx->moe.expert_ffn, 10752);
  EXPECT_FALSE(dbrx->tied_embeddings);
  // OPT: ffn_dim, ReLU two-matrix MLP, biases, tied, learned positions with an offset of 2.
  auto opt = Parse(Cfg("opt", R"("ffn_dim": 16384, "max_position_embeddings": 2048,
      "activation_function": "relu")"));
  ASSERT_TRUE(opt.ok()) << opt.status().message();
  EXPECT_EQ(opt->learned_pos_emb, 2050);
  EXPECT_TRUE(opt->linear_bias);
  EXPECT_TRUE(opt->tied_embeddings);
  EXPECT_FALSE(opt->gated_mlp);
  // BLOOM: n_layer / n_head spellings, 4h MLP, LayerNorm and biases, tied.
  auto bloom = Parse(R"({"model_type": "bloom", "hidden_size": 4096, "n_layer": 30,
      "n_head": 32, "vocab_size": 250880})");
  ASSERT_TRUE(bloom.ok()) << bloom.status().message();
  EXPECT_EQ(bloom->layers, 30);
  EXPECT_EQ(bloom->ffn, 4 * 4096);
  EXPECT_TRUE(bloom->layernorm);
  EXPECT_TRUE(bloom->tied_embeddings);
}

TEST(HfConfigKeys, RefusalsNameTheConstruct) {
  struct Case {
    const char* extra;
    const char* field;
  };
  for (const Case& c : {Case{R"("block_configs": [{"attention": {}}])", "block_configs"},
                        Case{R"("hybrid_override_pattern": "M-M*")", "hybrid_override_pattern"},
                        Case{R"("layers_block_type": ["mamba", "attention"])", "layers_block_type"},
                        Case{R"("attn_type_list": [0, 1, 1, 1])", "attn_type_list"},
                        Case{R"("layer_types": ["full_attention", "mamba"])", "layer_types"}}) {
    auto m = Parse(Cfg("llama", c.extra));
    ASSERT_FALSE(m.ok()) << c.field;
    EXPECT_EQ(m.status().field(), c.field) << m.status().message();
  }
  auto jamba = Parse(Cfg("jamba"));
  ASSERT_FALSE(jamba.ok());
  EXPECT_EQ(jamba.status().field(), "model_type");
}

// Keys of current checkpoints that were refused or misread (issue 9). MiniMax-M2's
// attn_type_list is all 1s (softmax attention on every layer): it was refused as hybrid
// lightning attention. LlamaConfig's mlp_bias was dropped. A checkpoint's quantization_config
// (DeepSeek-V3 / R1 block FP8, gpt-oss MXFP4) describes how the released weights are stored, not
// the bf16 training being simulated: it changes no count.
TEST(HfConfigKeys, CurrentCheckpointKeys) {
  auto m2 = Parse(Cfg("minimax_m2", R"("num_local_experts": 8, "num_experts_per_tok": 2,
      "attn_type_list": [1, 1, 1, 1], "use_qk_norm": true, "qk_norm_type": "per_layer")"));
  ASSERT_TRUE(m2.ok()) << m2.status().message();
  EXPECT_EQ(m2->moe.num_experts, 8);
  EXPECT_EQ(m2->moe.expert_ffn, 4096);  // MiniMaxM2: intermediate_size is the expert's
  EXPECT_EQ(m2->attention.kind, AttentionKind::kDenseCausal);
  for (const char* list : {R"("attn_type_list": [1, 0, 1, 1])", R"("attn_type_list": [1, "x"])"}) {
    auto hybrid = Parse(Cfg("minimax_m2", list));
    ASSERT_FALSE(hybrid.ok()) << list;
    EXPECT_EQ(hybrid.status().field(), "attn_type_list");
  }
  auto plain = Parse(Cfg("llama"));
  auto biased = Parse(Cfg("llama", R"("mlp_bias": true)"));
  ASSERT_TRUE(plain.ok() && biased.ok());
  EXPECT_FALSE(plain->linear_bias);
  EXPECT_TRUE(biased->linear_bias);
  EXPECT_GT(CountParams(biased.value()).total, CountParams(plain.value()).total);
  // Ministral (MinistralConfig): untied, every layer sliding unless layer_types says otherwise.
  auto ministral = Parse(Cfg("ministral", R"("sliding_window": 32768)"));
  ASSERT_TRUE(ministral.ok()) << ministral.status().message();
  EXPECT_FALSE(ministral->tied_embeddings);
  EXPECT_EQ(ministral->windowed_layers(), 4);
  // The DeepSeek-V3 preset with its released checkpoint's quantization_config.
  auto text = ReadFile(std::string(TRAINSIM_SOURCE_DIR) + "/data/models/deepseek-v3.json");
  json v3 = json::parse(text);
  v3["quantization_config"] = json::parse(R"({"activation_scheme": "dynamic", "fmt": "e4m3",
      "quant_method": "fp8", "weight_block_size": [128, 128]})");
  auto bf16 = Parse(text);
  auto fp8 = Parse(v3.dump());
  ASSERT_TRUE(bf16.ok() && fp8.ok()) << fp8.status().message();
  EXPECT_EQ(CountParams(fp8.value()).total, CountParams(bf16.value()).total);
  // gpt-oss: num_experts_per_tok and its alias experts_per_token; the 120b checkpoint as
  // released (MXFP4 quantization_config included) windows 18 of 36 layers to 128 tokens.
  auto oss = Parse(ReadFile(kDir + "gpt-oss-120b.json"));
  ASSERT_TRUE(oss.ok()) << oss.status().message();
  EXPECT_EQ(oss->layers, 36);
  EXPECT_EQ(oss->moe.num_experts, 128);
  EXPECT_EQ(oss->moe.top_k, 4);
  EXPECT_EQ(oss->attention.window, 128);
  EXPECT_EQ(oss->windowed_layers(), 18);
  EXPECT_TRUE(oss->qkv_bias);
  auto alias = Parse(Cfg("gpt_oss", R"("num_local_experts": 8, "experts_per_token": 2)"));
  ASSERT_TRUE(alias.ok()) << alias.status().message();
  EXPECT_EQ(alias->moe.top_k, 2);
  // Without layer_types GptOssConfig windows the even layers, to 128 tokens by default (all four
  // layers were windowed before).
  EXPECT_EQ(alias->attention.window, 128);
  EXPECT_EQ(alias->windowed_layers(), 2);
  // Llama-4 moe_layers is what the modeling code uses (is_moe_layer = layer_idx in moe_layers);
  // interleave_moe_layer_step only gives its default. It was ignored.
  auto every = Parse(Cfg("llama4_text", R"("num_local_experts": 4, "num_experts_per_tok": 1,
      "interleave_moe_layer_step": 2, "moe_layers": [0, 1, 2, 3])"));
  ASSERT_TRUE(every.ok()) << every.status().message();
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(every->layer_is_moe(i)) << i;
  auto odd = Parse(Cfg("llama4_text", R"("num_local_experts": 4, "num_experts_per_tok": 1,
      "moe_layers": [3, 1])"));
  ASSERT_TRUE(odd.ok()) << odd.status().message();
  EXPECT_FALSE(odd->layer_is_moe(0));
  EXPECT_TRUE(odd->layer_is_moe(1));
  EXPECT_FALSE(odd->layer_is_moe(2));
  EXPECT_TRUE(odd->layer_is_moe(3));
  for (const char* bad :
       {R"("moe_layers": [0, 1, 3])", R"("moe_layers": [1, 2])", R"("moe_layers": [0, 9])"}) {
    auto m = Parse(Cfg("llama4_text", std::string(R"("num_local_experts": 4,
        "num_experts_per_tok": 1, )") + bad));
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_EQ(m.status().field(), "moe_layers");
  }
  // OpenAI's original/config.json of gpt-oss-20b (no model_type; as tinygrad's
  // examples/gpt_oss.py and TensorRT-LLM's gpt-oss test quote it): read as gpt_oss, the same
  // model as the HF config (it was read with no biases and every layer windowed).
  auto original = Parse(R"({"num_hidden_layers": 24, "num_experts": 32, "experts_per_token": 4,
      "vocab_size": 201088, "hidden_size": 2880, "intermediate_size": 2880, "swiglu_limit": 7.0,
      "head_dim": 64, "num_attention_heads": 64, "num_key_value_heads": 8, "sliding_window": 128,
      "initial_context_length": 4096, "rope_theta": 150000, "rope_scaling_factor": 32.0,
      "rope_ntk_alpha": 1, "rope_ntk_beta": 32})");
  auto hf = Parse(ReadFile(kDir + "gpt-oss-20b.json"));
  ASSERT_TRUE(original.ok() && hf.ok()) << original.status().message();
  EXPECT_EQ(CountParams(original.value()).total, CountParams(hf.value()).total);
  EXPECT_EQ(original->windowed_layers(), 12);
  EXPECT_EQ(original->moe.top_k, 4);
}

// The keys a config sets that the reader does not read (issue 11, "silent misreading"): rows of
// src/spec/testdata/hf_ignored_keys.jsonl give a config ("config" inline, "file" in hf_configs/
// or "path" from the source tree) and the keys listed as ignored, exactly; "dropout", "kv_heads",
// "gated_mlp", "qk_norm", "window" and "experts" when given are the ModelSpec's.
TEST(HfConfigKeys, UnreadKeysAreListedUnlessHarmless) {
  std::istringstream in(
      ReadFile(std::string(TRAINSIM_SOURCE_DIR) + "/src/spec/testdata/hf_ignored_keys.jsonl"));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const json row = json::parse(line);
    ++n;
    std::string text, name;
    if (row.contains("config")) {
      text = row["config"].dump();
      name = row.value("name", "inline");
    } else if (row.contains("file")) {
      name = row["file"].get<std::string>();
      text = ReadFile(kDir + name);
    } else {
      name = row.at("path").get<std::string>();
      text = ReadFile(std::string(TRAINSIM_SOURCE_DIR) + "/" + name);
    }
    SCOPED_TRACE(name);
    auto m = ParseModelJson(text, name);
    ASSERT_TRUE(m.ok()) << m.status().message();
    std::vector<std::string> got;
    for (const IgnoredModelKey& k : m->ignored_keys) {
      got.push_back(k.key);
      EXPECT_FALSE(k.why.empty());
    }
    EXPECT_EQ(got, row.at("ignored").get<std::vector<std::string>>());
    if (row.contains("dropout")) {
      EXPECT_EQ(m->dropout, row["dropout"].get<bool>());
    }
    // What nested configs (MPT / DBRX attn_config, ffn_config) set, when the row says.
    if (row.contains("kv_heads")) {
      EXPECT_EQ(m->kv_heads, row["kv_heads"].get<int>());
    }
    if (row.contains("gated_mlp")) {
      EXPECT_EQ(m->gated_mlp, row["gated_mlp"].get<bool>());
    }
    if (row.contains("qk_norm")) {
      EXPECT_EQ(m->qk_norm, row["qk_norm"].get<bool>());
    }
    if (row.contains("window")) {
      EXPECT_EQ(m->attention.window, row["window"].get<int64_t>());
      EXPECT_EQ(m->windowed_layers(), m->layers);
    }
    if (row.contains("experts")) {
      EXPECT_EQ(m->moe.num_experts, row["experts"].get<int>());
    }
  }
  EXPECT_GE(n, 16);
}

// Every model preset is a config.json read whole: nothing of it is left unread.
TEST(HfConfigKeys, PresetsLeaveNoKeyUnread) {
  for (const std::string& id : ListModelPresets()) {
    auto m = LoadModelPreset(id);
    ASSERT_TRUE(m.ok()) << id;
    for (const IgnoredModelKey& k : m->ignored_keys) ADD_FAILURE() << id << ": " << k.key;
  }
}

}  // namespace
}  // namespace trainsim

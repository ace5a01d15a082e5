// The validation reader's attention object, optimizer and framework field; HF sliding windows.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "trainsim/trainsim.h"
#include "trainsim/validate.h"

namespace trainsim {
namespace {

nlohmann::json SmallCase() {
  return nlohmann::json::parse(R"({
    "id": "sp_test-001", "source": "KellerJordan/modded-nanogpt README.md record #1 llm.c",
    "model": {"name": "gpt2", "hidden_size": 768, "num_hidden_layers": 12,
              "num_attention_heads": 6, "num_key_value_heads": null, "head_dim": 128,
              "intermediate_size": 3072, "vocab_size": 50304, "hidden_act": "gelu",
              "tie_word_embeddings": false, "moe": null, "mla": null, "mtp_layers": 0},
    "hardware": "h100_sxm_80gb", "hardware_overrides": null, "gpus": 8, "precision": "bf16",
    "parallel": {"tp": 1, "pp": 1, "vpp": null, "cp": 1, "ep": null, "etp": null, "dp": 8,
                 "sp": false, "zero": 0, "fsdp": false},
    "recompute": "none", "seq": 65536, "mbs": 1, "gbs": 8, "target_iter_time_s": 0.15,
    "optimizer": "muon", "framework": "modded-nanogpt",
    "attention": {"kind": "block_sparse_windowed", "window_tokens": 1792,
                  "window_schedule": "free text", "document_masking": true,
                  "mean_document_tokens": null}})");
}

TEST(AttentionCase, ReadsThePatternOptimizerAndFramework) {
  auto c = ParseValidationCase(SmallCase().dump(), "case");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->model.attention.kind, AttentionKind::kBlockSparse);
  EXPECT_EQ(c->model.attention.window, 1792);
  EXPECT_TRUE(c->model.attention.document_masking);
  EXPECT_EQ(c->model.attention.mean_document_tokens, 0);  // null: the default applies
  EXPECT_EQ(c->strategy.exec.optimizer, OptimizerKind::kMuon);
  EXPECT_EQ(c->framework, "modded-nanogpt");
  EXPECT_TRUE(c->strategy.fused_cross_entropy);
  // The strategy column shows the default document length in use.
  const ValidationSummary s = ScoreCases({c.value()});
  EXPECT_NE(s.cases[0].strategy_used.find("bsa1792+doc622(default) muon"), std::string::npos)
      << s.cases[0].strategy_used;
}

TEST(AttentionCase, ChunkedLocalKind) {
  nlohmann::json j = SmallCase();
  j["attention"] = {{"kind", "chunked_local"}, {"window_tokens", 8192}};
  auto c = ParseValidationCase(j.dump(), "case");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->model.attention.kind, AttentionKind::kChunkedLocal);
  const ValidationSummary s = ScoreCases({c.value()});
  EXPECT_NE(s.cases[0].strategy_used.find("chunk8192"), std::string::npos)
      << s.cases[0].strategy_used;
}

TEST(AttentionCase, FrameworkFieldWinsOverTheSource) {
  nlohmann::json j = SmallCase();
  j["framework"] = "llm.c";  // the source names modded-nanogpt too
  auto c = ParseValidationCase(j.dump(), "case");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->framework, "llm.c");
  EXPECT_EQ(c->strategy.exec.host_issue_us_per_kernel, 3.0);
}

TEST(AttentionCase, BadPatternNamesTheField) {
  nlohmann::json j = SmallCase();
  j["attention"]["kind"] = "ring";
  auto c = ParseValidationCase(j.dump(), "case");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("attention: kind"), std::string::npos)
      << c.status().message();
  j = SmallCase();
  j["attention"]["mean_document_tokens"] = -5;
  EXPECT_FALSE(ParseValidationCase(j.dump(), "case").ok());
  j = SmallCase();
  j["attention"]["window_tokens"] = nullptr;
  j["attention"]["document_masking"] = false;  // block-sparse with nothing to skip
  EXPECT_FALSE(ParseValidationCase(j.dump(), "case").ok());
}

TEST(HfSlidingWindow, MistralQwen2AndLayerTypes) {
  auto mistral = ParseModelJson(R"({"model_type": "mistral", "hidden_size": 4096,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
      "intermediate_size": 14336, "vocab_size": 32000, "sliding_window": 4096})",
                                "m");
  ASSERT_TRUE(mistral.ok()) << mistral.status().message();
  EXPECT_EQ(mistral->attention.kind, AttentionKind::kSlidingWindow);
  EXPECT_EQ(mistral->windowed_layers(), 32);
  const char* qwen = R"({"model_type": "qwen2", "hidden_size": 1024, "num_hidden_layers": 24,
      "num_attention_heads": 16, "intermediate_size": 2816, "vocab_size": 151936,
      "sliding_window": 4096, "max_window_layers": 21, "use_sliding_window": USE})";
  std::string on = qwen, off = qwen;
  on.replace(on.find("USE"), 3, "true");
  off.replace(off.find("USE"), 3, "false");
  auto q_on = ParseModelJson(on, "q"), q_off = ParseModelJson(off, "q");
  ASSERT_TRUE(q_on.ok() && q_off.ok());
  EXPECT_EQ(q_on->windowed_layers(), 3);  // layers 21, 22, 23
  EXPECT_EQ(q_off->windowed_layers(), 0);
  auto typed = ParseModelJson(R"({"model_type": "qwen2", "hidden_size": 1024,
      "num_hidden_layers": 4, "num_attention_heads": 16, "intermediate_size": 2816,
      "vocab_size": 1000, "sliding_window": 128, "use_sliding_window": true,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention",
                      "full_attention"]})",
                              "t");
  ASSERT_TRUE(typed.ok());
  EXPECT_EQ(typed->windowed_layers(), 2);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(SmallPretrain, StaysUnderItsRatchet) {
  const std::string cases =
      std::string(TRAINSIM_SHARED_DIR) + "/validation/cases/small_pretrain.jsonl";
  if (!std::filesystem::exists(cases)) GTEST_SKIP() << "no " << cases;
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation_ratchet.json");
  const nlohmann::json ratchet = nlohmann::json::parse(in);
  auto res = RunValidation({cases});
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->skipped, 0);
  EXPECT_LE(res->mape, ratchet["small_pretrain_time_mape_max"].get<double>());
}

// A copy of a case file as runs whose stack nobody named (tools/blind_validate.py: source
// "(unknown source)", framework null), in a temporary file; the caller removes it.
std::string BlindCopy(const std::string& cases, const char* tag) {
  std::ifstream src(cases);
  const std::string blind =
      (std::filesystem::temp_directory_path() /
       ("trainsim_blind_" + std::string(tag) + "_" + std::to_string(::getpid()) + ".jsonl"))
          .string();
  std::ofstream out(blind);
  for (std::string line; std::getline(src, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json c = nlohmann::json::parse(line);
    c["source"] = "(unknown source)";
    if (c.contains("framework")) c["framework"] = nullptr;
    out << c.dump() << "\n";
  }
  return blind;
}

// The same cases scored as a run whose stack nobody named: the fallback profiles must give a
// new user a sound answer.
TEST(SmallPretrain, SourceBlindStaysUnderItsRatchet) {
  const std::string cases =
      std::string(TRAINSIM_SHARED_DIR) + "/validation/cases/small_pretrain.jsonl";
  if (!std::filesystem::exists(cases)) GTEST_SKIP() << "no " << cases;
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation_ratchet.json");
  const nlohmann::json ratchet = nlohmann::json::parse(in);
  const std::string blind = BlindCopy(cases, "small");
  auto res = RunValidation({blind});
  std::filesystem::remove(blind);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->skipped, 0);
  EXPECT_LE(res->mape, ratchet["small_pretrain_blind_time_mape_max"].get<double>());
}

// The public pre-training cases scored source-blind (docs/VALIDATION.md, "Source-blind"): the
// gap a held-out run from a stack without a profile meets.
TEST(PublicCases, SourceBlindStaysUnderItsRatchet) {
  const std::string cases = std::string(TRAINSIM_SHARED_DIR) + "/validation/cases/public.jsonl";
  if (!std::filesystem::exists(cases)) GTEST_SKIP() << "no " << cases;
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation_ratchet.json");
  const nlohmann::json ratchet = nlohmann::json::parse(in);
  const std::string blind = BlindCopy(cases, "public");
  auto res = RunValidation({blind});
  std::filesystem::remove(blind);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_LE(res->skipped, ratchet["skipped_max"].get<int>());
  EXPECT_LE(res->mape, ratchet["public_blind_time_mape_max"].get<double>());
}

// The fine-tuning cases scored source-blind: every row takes the hf-trainer fallback (the
// Trainer stacks most fine-tuning runs use); time and memory (docs/VALIDATION.md,
// "Source-blind").
TEST(FinetuneCases, SourceBlindStaysUnderItsRatchet) {
  const std::string cases = std::string(TRAINSIM_SHARED_DIR) + "/validation/cases/finetune.jsonl";
  if (!std::filesystem::exists(cases)) GTEST_SKIP() << "no " << cases;
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation_ratchet.json");
  const nlohmann::json ratchet = nlohmann::json::parse(in);
  const std::string blind = BlindCopy(cases, "finetune");
  auto res = RunValidation({blind});
  std::filesystem::remove(blind);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_LE(res->skipped, ratchet["finetune_skipped_max"].get<int>());
  EXPECT_LE(res->mape, ratchet["finetune_blind_time_mape_max"].get<double>());
  EXPECT_LE(res->mem_mape, ratchet["finetune_blind_memory_mape_max"].get<double>());
}

// The RL cases scored source-blind: every row takes the rl fallback (docs/VALIDATION.md,
// "Source-blind").
TEST(RlCases, SourceBlindStaysUnderItsRatchet) {
  const std::string cases = std::string(TRAINSIM_SHARED_DIR) + "/validation/cases/rl.jsonl";
  if (!std::filesystem::exists(cases)) GTEST_SKIP() << "no " << cases;
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation_ratchet.json");
  const nlohmann::json ratchet = nlohmann::json::parse(in);
  const std::string blind = BlindCopy(cases, "rl");
  auto res = RunValidation({blind});
  std::filesystem::remove(blind);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_LE(res->skipped, ratchet["rl_skipped_max"].get<int>());
  EXPECT_LE(res->mape, ratchet["rl_blind_time_mape_max"].get<double>());
}

}  // namespace
}  // namespace trainsim

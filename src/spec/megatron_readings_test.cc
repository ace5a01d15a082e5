// Megatron-LM argument lists read with Megatron-LM's meaning: one row of
// src/spec/testdata/megatron_readings.jsonl per reading that was once wrong, each naming the
// framework source it follows. A row gives `args` (and `gpus`, default 8) and what must come
// out: `strategy` (schema keys of the normalised strategy), `model` (fields of the model built
// from the arguments), `ignored` (arguments listed as not modelled, in any order: exactly these)
// and `assumed` (fields the reader says it decided), or `error_field` when the model refuses it.
// Refusals that need no model are rows of parse_errors.jsonl.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trainsim/megatron.h"
#include "trainsim/schema.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

struct Row {
  nlohmann::json j;
  int line = 0;
};

std::vector<Row> Rows() {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/src/spec/testdata/megatron_readings.jsonl");
  std::vector<Row> rows;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line)
    if (!text.empty()) rows.push_back({nlohmann::json::parse(text), line});
  return rows;
}

long long ModelField(const ModelSpec& m, const std::string& key) {
  if (key == "layers") return m.layers;
  if (key == "heads") return m.heads;
  if (key == "kv_heads") return m.kv_heads;
  if (key == "ffn") return m.ffn;
  if (key == "vocab") return m.vocab;
  if (key == "kv_lora_rank") return m.mla.kv_lora_rank;
  if (key == "q_lora_rank") return m.mla.q_lora_rank;
  ADD_FAILURE() << "unknown model field " << key;
  return -1;
}

class MegatronReadings : public ::testing::TestWithParam<Row> {};

TEST_P(MegatronReadings, ReadAsMegatronLmReadsThem) {
  const nlohmann::json& row = GetParam().j;
  auto cmd = ParseMegatronScript(row.at("args").get<std::string>());
  ASSERT_TRUE(cmd.ok()) << cmd.status().message();
  Strategy s;
  s.world_size = row.value("gpus", 8);
  MegatronReading r;
  const Status st = ReadMegatronArgs(cmd->args, s, nullptr, r);
  ASSERT_TRUE(st.ok()) << st.message();
  if (row.contains("error_field")) {  // refused once the model is known
    auto m = ResolveMegatronModel(r, nullptr, s);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().field(), row["error_field"].get<std::string>()) << m.status().message();
    return;
  }
  if (row.contains("model")) {
    auto m = ResolveMegatronModel(r, nullptr, s);
    ASSERT_TRUE(m.ok()) << m.status().message();
    for (const auto& [key, want] : row["model"].items())
      EXPECT_EQ(ModelField(*m, key), want.get<long long>()) << key;
  }
  const Strategy n = NormaliseStrategy(s);
  const nlohmann::json strategy = row.value("strategy", nlohmann::json::object());
  for (const auto& item : strategy.items()) {
    // A named copy, not a structured binding: clang 14 (the sanitizer build) cannot capture one.
    const std::string key = item.key();
    const auto& fields = StrategySchema();
    const auto f = std::find_if(fields.begin(), fields.end(),
                                [&](const StrategyField& x) { return x.key == key; });
    ASSERT_NE(f, fields.end()) << key;
    EXPECT_EQ(f->get(n), item.value().get<std::string>()) << key;
  }
  std::vector<std::string> ignored, want_ignored;
  for (const IgnoredInput& i : r.ignored) ignored.push_back(i.field);
  for (const auto& f : row.value("ignored", nlohmann::json::array()))
    want_ignored.push_back(f.get<std::string>());
  std::sort(ignored.begin(), ignored.end());
  std::sort(want_ignored.begin(), want_ignored.end());
  EXPECT_EQ(ignored, want_ignored);
  for (const auto& f : row.value("assumed", nlohmann::json::array()))
    EXPECT_TRUE(std::any_of(r.assumed.begin(), r.assumed.end(), [&](const Assumption& a) {
      return a.field == f.get<std::string>();
    })) << f;
}

INSTANTIATE_TEST_SUITE_P(Rows, MegatronReadings, ::testing::ValuesIn(Rows()),
                         [](const ::testing::TestParamInfo<Row>& info) {
                           return "line" + std::to_string(info.param.line);
                         });

}  // namespace
}  // namespace trainsim

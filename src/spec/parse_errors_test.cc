// Parse errors as data: every row of src/spec/testdata/parse_errors.jsonl is one bad input that
// must come back as an error Status whose field() is the row's "field" (and whose message names
// it). Adding a case is adding a line; see src/spec/testdata/README.md for the row format.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "trainsim/formats.h"
#include "trainsim/hardware.h"
#include "trainsim/megatron.h"
#include "trainsim/model.h"
#include "trainsim/presets.h"
#include "trainsim/strategy.h"

namespace trainsim {
namespace {

using nlohmann::json;

constexpr const char* kOrigin = "row.json";

struct Row {
  int line = 0;
  json j;
  std::string kind() const { return j.is_object() ? j.value("kind", "") : ""; }
  std::string field() const { return j.is_object() ? j.value("field", "") : ""; }
};

std::string ReadSource(const std::string& rel) {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/" + rel, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<Row> LoadRows() {
  std::vector<Row> rows;
  std::istringstream in(ReadSource("src/spec/testdata/parse_errors.jsonl"));
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.empty()) continue;
    Row r;
    r.line = line;
    r.j = json::parse(text, nullptr, false);  // a broken row fails in RowsAreWellFormed
    rows.push_back(r);
  }
  return rows;
}

const std::vector<Row>& Rows() {
  static const std::vector<Row> rows = LoadRows();
  return rows;
}

// The text handed to the parser: "input" verbatim when it is a string (Megatron arguments, dtype
// names, malformed JSON), else the JSON value, or the "base" file with "patch" merged in
// (RFC 7386: a null deletes the key).
std::string InputText(const json& j) {
  if (j.contains("base")) {
    json doc = json::parse(ReadSource(j["base"].get<std::string>()));
    doc.merge_patch(j.value("patch", json::object()));
    return doc.dump();
  }
  const json& in = j["input"];
  return in.is_string() ? in.get<std::string>() : in.dump();
}

// Runs the row through its parser; returns the Status it gives.
Status RunRow(const Row& row) {
  const std::string kind = row.kind();
  const std::string text = InputText(row.j);
  if (kind == "model") return ParseModelJson(text, kOrigin).status();
  if (kind == "hardware") return ParseHardwareJson(text, kOrigin).status();
  if (kind == "strategy") return ParseStrategyJson(text, kOrigin).status();
  if (kind == "megatron") return ParseMegatronArgs(text, Strategy{}).status();
  if (kind == "megatron_script") return ParseMegatronScript(text).status();
  if (kind == "dtype") return ParseDType(text).status();
  if (kind == "deepspeed") return ParseDeepSpeedConfig(text, kOrigin).status();
  if (kind == "torchtitan") return ParseTorchtitanToml(text, kOrigin).status();
  if (kind == "llamafactory") return ParseLlamaFactoryYaml(text, kOrigin, 32).status();
  if (kind == "trl") return ParseTrlArgsJson(text, kOrigin).status();
  if (kind == "accelerate") return ParseAccelerateConfig(text, kOrigin).status();
  if (kind == "override") {
    const HardwareSpec base = LoadHardware("h100_sxm_80gb").value();
    HardwareSpec h = base;
    Status st = ApplyHardwareOverrides(h, text, kOrigin);
    // All or nothing: a rejected override leaves the spec as it was.
    EXPECT_EQ(h.hbm_bytes, base.hbm_bytes);
    EXPECT_EQ(h.nic_bw_bytes_per_s, base.nic_bw_bytes_per_s);
    EXPECT_EQ(h.peak_bf16_flops, base.peak_bf16_flops);
    EXPECT_EQ(h.eff.fp8_gemm_speedup, base.eff.fp8_gemm_speedup);
    return st;
  }
  if (kind == "validate") {  // a strategy that parses but breaks a rule for the model
    auto s = ParseStrategyJson(text, kOrigin);
    if (!s.ok())
      return Status::Invalid("test", "the strategy does not parse: " + s.status().message());
    auto m = LoadModel(row.j.value("model", ""));
    if (!m.ok()) return Status::Invalid("test", "bad model preset: " + m.status().message());
    return ValidateStrategy(s.value(), m.value());
  }
  return Status::Invalid("test", "unknown kind '" + kind + "'");
}

std::string RowName(const ::testing::TestParamInfo<Row>& info) {
  std::string name =
      "line" + std::to_string(info.param.line) + "_" + info.param.kind() + "_" + info.param.field();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return name;
}

class ParseErrorRowTest : public ::testing::TestWithParam<Row> {};

TEST_P(ParseErrorRowTest, NamesTheField) {
  const Row& row = GetParam();
  ASSERT_FALSE(row.j.is_discarded()) << "line " << row.line << " is not JSON";
  SCOPED_TRACE("parse_errors.jsonl line " + std::to_string(row.line) + ": " + row.j.dump());
  const Status st = RunRow(row);
  ASSERT_FALSE(st.ok()) << "the input was accepted";
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.message();
  EXPECT_EQ(st.field(), row.field()) << st.message();
  EXPECT_NE(st.message().find(row.field()), std::string::npos) << st.message();
  if (row.j.contains("contains")) {
    EXPECT_NE(st.message().find(row.j["contains"].get<std::string>()), std::string::npos)
        << st.message();
  }
  // Errors about a document say which document.
  const std::string kind = row.kind();
  if (kind == "model" || kind == "hardware" || kind == "strategy" || kind == "override" ||
      kind == "deepspeed" || kind == "torchtitan" || kind == "llamafactory" || kind == "trl" ||
      kind == "accelerate") {
    EXPECT_NE(st.message().find(kOrigin), std::string::npos) << st.message();
  }
}

INSTANTIATE_TEST_SUITE_P(Rows, ParseErrorRowTest, ::testing::ValuesIn(Rows()), RowName);

TEST(ParseErrorRowsTest, RowsAreWellFormed) {
  const std::vector<Row>& rows = Rows();
  EXPECT_GE(rows.size(), 60u) << "src/spec/testdata/parse_errors.jsonl";
  for (const Row& r : rows) {
    ASSERT_TRUE(r.j.is_object()) << "line " << r.line;
    EXPECT_FALSE(r.field().empty()) << "line " << r.line << ": no field";
    EXPECT_TRUE(r.j.contains("input") != r.j.contains("base"))
        << "line " << r.line << ": give input or base (+ patch)";
    for (auto it = r.j.begin(); it != r.j.end(); ++it) {
      static const char* kKeys[] = {"kind",  "field", "model",    "base",
                                    "patch", "input", "contains", "note"};
      bool known = false;
      for (const char* k : kKeys) known = known || it.key() == k;
      EXPECT_TRUE(known) << "line " << r.line << ": unknown key " << it.key();
    }
  }
}

}  // namespace
}  // namespace trainsim

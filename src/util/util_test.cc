// Status (message, code, field), the unit conversions and the from_chars number parsers.
#include <gtest/gtest.h>

#include <string>

#include "spec/json_fields.h"
#include "trainsim/limits.h"
#include "trainsim/status.h"
#include "util/parse_number.h"
#include "util/text_guard.h"
#include "util/units.h"

namespace trainsim {
namespace {

// ---------------------------------------------------------------------------------------------
// Status::field()

TEST(StatusTest, OkHasNoFieldOrMessage) {
  const Status s = Status::Ok();
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.field(), "");
}

TEST(StatusTest, FieldAndRuleFactory) {
  const Status s = Status::Invalid("tp", "must be >= 1, got 0");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "tp: must be >= 1, got 0");
  EXPECT_EQ(s.field(), "tp");
  const Status inf = Status::Infeasible("hbm_gib", "stage 0 needs 96 GiB");
  EXPECT_EQ(inf.code(), StatusCode::kInfeasible);
  EXPECT_EQ(inf.message(), "hbm_gib: stage 0 needs 96 GiB");
  EXPECT_EQ(inf.field(), "hbm_gib");
}

TEST(StatusTest, EmptyFieldGivesTheRuleAlone) {
  const Status s = Status::Invalid("", "must be a JSON object");
  EXPECT_EQ(s.message(), "must be a JSON object");
  EXPECT_EQ(s.field(), "");
}

TEST(StatusTest, OneArgumentMessageDerivesFieldBeforeFirstColonSpace) {
  EXPECT_EQ(Status::Invalid("gbs: must be divisible by mbs*dp").field(), "gbs");
  // Only the first ": " counts; later ones belong to the rule.
  const Status s = Status::Invalid("world_size: must be divisible: tp*pp*cp");
  EXPECT_EQ(s.field(), "world_size");
  EXPECT_EQ(s.message(), "world_size: must be divisible: tp*pp*cp");
  // No ": " at all: no field (a colon without a space does not count either).
  EXPECT_EQ(Status::Invalid("something went wrong").field(), "");
  EXPECT_EQ(Status::Invalid("a:b").field(), "");
  // The other one-argument factories derive it the same way.
  EXPECT_EQ(Status::NotFound("model: unknown preset 'x'").field(), "model");
  EXPECT_EQ(Status::Infeasible("memory: does not fit").field(), "memory");
  EXPECT_EQ(Status::Parse("x.json: malformed JSON at byte 3").field(), "x.json");
}

TEST(StatusTest, WithContextPrefixesMessageAndKeepsFieldAndCode) {
  const Status s = Status::Invalid("hidden_size", "must be > 0").WithContext("model x");
  EXPECT_EQ(s.message(), "model x: hidden_size: must be > 0");
  EXPECT_EQ(s.field(), "hidden_size");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  const Status twice = s.WithContext("config.json");
  EXPECT_EQ(twice.message(), "config.json: model x: hidden_size: must be > 0");
  EXPECT_EQ(twice.field(), "hidden_size");
  // No-ops: an ok Status stays ok and empty; an empty context changes nothing.
  EXPECT_TRUE(Status::Ok().WithContext("x").ok());
  EXPECT_EQ(Status::Ok().WithContext("x").message(), "");
  EXPECT_EQ(s.WithContext("").message(), s.message());
  // Derived fields survive a context too.
  EXPECT_EQ(Status::Invalid("tp: must be >= 1").WithContext("s.json").field(), "tp");
}

TEST(StatusTest, ResultCarriesStatusWithField) {
  Result<int> r = Status::Invalid("seq", "must be >= 1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "seq");
  Result<int> v = 3;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 3);
  EXPECT_EQ(v.status().field(), "");
}

// ---------------------------------------------------------------------------------------------
// units

TEST(UnitsTest, BinaryAndDecimalSizes) {
  static_assert(units::kGiB == 1073741824.0);
  static_assert(units::kMiB == 1048576.0);
  static_assert(units::kGB == 1e9);
  EXPECT_DOUBLE_EQ(units::BytesToGiB(80 * units::kGiB), 80.0);
  EXPECT_DOUBLE_EQ(units::GiBToBytes(1.5), 1.5 * 1073741824.0);
  EXPECT_DOUBLE_EQ(units::BytesToMiB(units::kMiB * 3), 3.0);
}

TEST(UnitsTest, RatesAndTimes) {
  // A 400 Gb/s NIC moves 50 GB/s.
  static_assert(units::GbpsToBytesPerS(400) == 50e9);
  EXPECT_DOUBLE_EQ(units::BytesPerSToGbps(50e9), 400.0);
  EXPECT_DOUBLE_EQ(units::GBpsToBytesPerS(450), 450e9);
  EXPECT_DOUBLE_EQ(units::BytesPerSToGBps(450e9), 450.0);
  EXPECT_DOUBLE_EQ(units::TBpsToBytesPerS(3.35), 3.35e12);
  EXPECT_DOUBLE_EQ(units::TflopsToFlops(989.4), 989.4e12);
  EXPECT_DOUBLE_EQ(units::FlopsToTflops(989.4e12), 989.4);
  EXPECT_DOUBLE_EQ(units::UsToS(2.5), 2.5e-6);
  EXPECT_DOUBLE_EQ(units::SToUs(2.5e-6), 2.5);
  EXPECT_DOUBLE_EQ(units::SToMs(0.25), 250.0);
  static_assert(units::kFp32Bytes == 4 && units::kBf16Bytes == 2 && units::kFp8Bytes == 1);
}

// ---------------------------------------------------------------------------------------------
// util::ParseInt / ParseDouble

TEST(ParseNumberTest, Integers) {
  EXPECT_EQ(util::ParseInt("0"), 0);
  EXPECT_EQ(util::ParseInt("42"), 42);
  EXPECT_EQ(util::ParseInt("-7"), -7);
  EXPECT_EQ(util::ParseInt("08"), 8);    // decimal, never octal
  EXPECT_EQ(util::ParseInt("010"), 10);  // not 8
  for (const char* bad :
       {"", " 1", "1 ", "+1", "0x10", "1e3", "1.0", "eight", "4096x", "-", "99999999999999999999"})
    EXPECT_FALSE(util::ParseInt(bad).has_value()) << bad;
  EXPECT_FALSE(util::ParseInt<int>("4294967296").has_value());  // out of int range
  EXPECT_EQ(util::ParseInt<int>("2147483647"), 2147483647);
}

TEST(ParseNumberTest, Doubles) {
  EXPECT_EQ(util::ParseDouble("1.5"), 1.5);
  EXPECT_EQ(util::ParseDouble("2e-3"), 2e-3);
  EXPECT_EQ(util::ParseDouble("-0.25"), -0.25);
  EXPECT_EQ(util::ParseDouble("3"), 3.0);
  for (const char* bad : {"", "1.5x", " 1", "+1", "inf", "nan", "1e999", "0x1p3", "1,5"})
    EXPECT_FALSE(util::ParseDouble(bad).has_value()) << bad;
}

// ---------------------------------------------------------------------------------------------
// Input limits (issue 11): nesting depth, size and duplicate keys of every JSON input, and
// one-line error messages.

TEST(TextGuardTest, NestingDepthCountsBracketsOutsideStrings) {
  EXPECT_EQ(util::JsonNestingDepth("{}", 64), 1);
  EXPECT_EQ(util::JsonNestingDepth(R"({"a": [1, {"b": []}]})", 64), 4);
  EXPECT_EQ(util::JsonNestingDepth(R"({"a": "[[[[\"[[["})", 64), 1);    // brackets in a string
  EXPECT_EQ(util::JsonNestingDepth(std::string(100000, '['), 64), 65);  // stops past the cap
}

TEST(TextGuardTest, EscapeGivesOneLine) {
  EXPECT_EQ(util::EscapeForTerminal("a\nb\x01"
                                    "c\td"),
            "a\\nb\\x01c\\td");
  EXPECT_EQ(util::EscapeForTerminal("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 kept
  const std::string cut = util::EscapeForTerminal(std::string(5000, 'x'), 100);
  EXPECT_EQ(cut, std::string(100, 'x') + " ... (5000 bytes)");
  EXPECT_EQ(Status::Invalid("model", "unknown preset 'a\nb'").OneLine(),
            "model: unknown preset 'a\\nb'");
}

TEST(JsonLimitsTest, DeepNestingIsOneClearError) {
  const std::string ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_TRUE(detail::ParseJsonText(ok, "x.json").ok());
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const auto r = detail::ParseJsonText(deep, "x.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "x.json: JSON nested deeper than 64 levels");
}

TEST(JsonLimitsTest, DuplicateKeysAtAnyDepthAreErrors) {
  EXPECT_TRUE(detail::ParseJsonText(R"({"a": {"b": 1}, "b": {"a": 2}})", "x").ok());
  const auto top = detail::ParseJsonText(R"({"a": 1, "a": 2})", "x");
  ASSERT_FALSE(top.ok());
  EXPECT_EQ(top.status().message(), "x: a: duplicate key");
  const auto nested = detail::ParseJsonText(R"({"e": [{"k": 1, "j": 2, "k": 3}]})", "x");
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.status().field(), "e[0].k");
  // Named by the path, not by a key that may be anywhere (regression: "attn_type: duplicate key"
  // for a key inside attn_config).
  const auto deep = detail::ParseJsonText(
      R"({"a": {"t": 1}, "c": {"x": [1, [2], {"t": 1}], "y": {"t": 1, "t": 2}}})", "x");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().field(), "c.y.t");
  const auto in_array = detail::ParseJsonText(R"([1, {"a": 1}, [], {"b": 1, "b": 2}])", "x");
  ASSERT_FALSE(in_array.ok());
  EXPECT_EQ(in_array.status().field(), "[3].b");
}

TEST(JsonLimitsTest, TextOverTheSizeLimitIsRefused) {
  const std::string big = "[" + std::string(limits::kMaxInputFileBytes, ' ') + "]";
  const auto r = detail::ParseJsonText(big, "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("at most 16777216"), std::string::npos);
}

}  // namespace
}  // namespace trainsim

// The CLI flags come from the Strategy schema: each field's flag sets it (and "--no-<name>" clears
// a boolean).
#include "strategy_flags.h"

#include <gtest/gtest.h>

namespace trainsim::cli {
namespace {

Result<Strategy> ParseFlags(const std::string& line) {
  CLI::App app{"test"};
  StrategyFlagValues values;
  AddStrategyFlags(&app, values, "Strategy");
  try {
    app.parse(line, false);
  } catch (const CLI::ParseError& e) {
    return Status::Invalid(e.what());
  }
  Strategy s;
  if (Status st = ApplyStrategySettings(s, values, true); !st.ok()) return st;
  return s;
}

TEST(StrategyFlags, EachFieldRoundTripsThroughItsFlag) {
  for (const StrategyField& f : StrategySchema()) {
    SCOPED_TRACE(std::string(f.key));
    std::string line = std::string(f.flag) + " " + std::string(f.example);
    if (f.kind == FieldKind::kBool)
      line = f.example == "true" ? std::string(f.flag) : "--no-" + std::string(f.flag.substr(2));
    auto s = ParseFlags(line);
    ASSERT_TRUE(s.ok()) << line << ": " << s.status().message();
    EXPECT_EQ(f.get(s.value()), f.example) << line;
  }
}

TEST(StrategyFlags, BooleansHaveBothSwitchesAndBadValuesNameTheFlag) {
  auto on = ParseFlags("--sp --no-fsdp");
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(on->sp);
  EXPECT_FALSE(on->fsdp);
  // A switch with its --no- form, or a flag given twice, is an error naming it (issue 11), not
  // "the last one wins".
  auto both = ParseFlags("--no-sp --sp");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().message().rfind("--sp: given twice", 0), 0u) << both.status().message();
  auto twice = ParseFlags("--tp 2 --tp 4");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message().rfind("--tp: given twice", 0), 0u) << twice.status().message();
  auto bad = ParseFlags("--tp two");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("--tp: ", 0), 0u) << bad.status().message();
  auto order = ParseFlags("--order tp-tp");
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().message().rfind("--order: ", 0), 0u) << order.status().message();
}

TEST(StrategyFlags, SchemaOptionForSearch) {
  CLI::App app{"test"};
  int gbs = 0;
  std::string dtype = "bf16";
  AddSchemaOption(&app, "global_batch_size", gbs);
  AddSchemaOption(&app, "dtype", dtype);
  app.parse("--gbs 128 --dtype fp8", false);
  EXPECT_EQ(gbs, 128);
  EXPECT_EQ(dtype, "fp8");
}

}  // namespace
}  // namespace trainsim::cli

// The command line's integer options are decimal: CLI11 alone reads "010" as octal 8.
#include "cli_numbers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace trainsim::cli {
namespace {

TEST(CliNumbersTest, IsPlainDecimal) {
  for (const char* ok : {"0", "7", "10", "8192", "-3", "-0"}) EXPECT_TRUE(IsPlainDecimal(ok)) << ok;
  for (const char* bad : {"", "-", "010", "00", "0x10", "0X1F", "0b1", "0o7", "+5", "1e3", "1.0",
                          " 7", "7 ", "1_000", "eight"})
    EXPECT_FALSE(IsPlainDecimal(bad)) << bad;
}

TEST(CliNumbersTest, ParseDecimalIntAndFiniteDouble) {
  EXPECT_EQ(ParseDecimalInt("3"), 3);
  EXPECT_EQ(ParseDecimalInt<int>("-12"), -12);
  EXPECT_FALSE(ParseDecimalInt("010").has_value());
  EXPECT_FALSE(ParseDecimalInt<int>("2147483648").has_value());
  EXPECT_EQ(ParseFiniteDouble("1.5"), 1.5);
  EXPECT_EQ(ParseFiniteDouble("2e1"), 20.0);
  for (const char* bad : {"", "1.5x", "inf", "nan", "1e400", "0x1p3"})
    EXPECT_FALSE(ParseFiniteDouble(bad).has_value()) << bad;
}

// Parses `args` (after the program name) into an app with a "run" subcommand; returns the
// CLI11 error text, or "" on success.
struct Parsed {
  std::optional<int> gpus;
  int tp = 1;
  std::vector<int> list;
  double factor = 0;
  std::string error;
};

Parsed Parse(std::vector<std::string> args) {
  Parsed p;
  CLI::App app;
  CLI::App* run = app.add_subcommand("run");
  run->add_option("--gpus", p.gpus);
  run->add_option("--tp", p.tp)->check(CLI::PositiveNumber);
  run->add_option("--list", p.list)->delimiter(',');
  run->add_option("--factor", p.factor);
  RequireDecimalIntegers(app);
  RequireFiniteFloats(app);
  std::vector<std::string> argv = {"run"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::reverse(argv.begin(), argv.end());  // CLI11 takes a reversed vector
  try {
    app.parse(argv);
  } catch (const CLI::ParseError& e) {
    p.error = e.what();
  }
  return p;
}

TEST(CliNumbersTest, OctalAndHexIntegersAreRejectedNamingTheFlag) {
  Parsed octal = Parse({"--gpus", "010"});
  EXPECT_NE(octal.error.find("--gpus"), std::string::npos) << octal.error;
  EXPECT_NE(octal.error.find("010"), std::string::npos) << octal.error;
  EXPECT_NE(Parse({"--gpus", "0x10"}).error.find("--gpus"), std::string::npos);
  // A check added before RequireDecimalIntegers (PositiveNumber) does not hide the option.
  EXPECT_NE(Parse({"--tp", "010"}).error.find("--tp"), std::string::npos);
  EXPECT_NE(Parse({"--list", "8,010"}).error.find("--list"), std::string::npos);
}

// Issue 11: CLI11 reads floats with strtold ("nan", "inf", hex); a Range check passes NaN, so
// `infer --gpu-memory-utilization nan` ran with the default and `--prompt-len 0x10` meant 16.
TEST(CliNumbersTest, NonFiniteAndHexFloatsAreRejectedNamingTheFlag) {
  for (const char* bad : {"nan", "inf", "-inf", "0x10", "0x1p3", "+1.5", "1e400", "NaN"}) {
    const Parsed p = Parse({"--factor", bad});
    EXPECT_NE(p.error.find("--factor"), std::string::npos) << bad << ": " << p.error;
  }
}

TEST(CliNumbersTest, DecimalIntegersAndFloatsStillParse) {
  Parsed p = Parse({"--gpus", "10", "--tp", "8", "--list", "1,0,16", "--factor", "010.5"});
  EXPECT_EQ(p.error, "");
  ASSERT_TRUE(p.gpus.has_value());
  EXPECT_EQ(*p.gpus, 10);
  EXPECT_EQ(p.tp, 8);
  EXPECT_EQ(p.list, (std::vector<int>{1, 0, 16}));
  EXPECT_DOUBLE_EQ(p.factor, 10.5);  // floating-point options are not integer options
}

}  // namespace
}  // namespace trainsim::cli

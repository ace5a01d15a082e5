// Number parsing for the command line, shared by every verb.
//
// CLI11 (2.1) converts integer options with strtoll(..., base 0), so `--gpus 010` would be read
// as octal 8 and `--gpus 0x10` as 16. trainsim's integers are counts and sizes written in
// decimal: RequireDecimalIntegers() puts a check on every integer option of an app (and its
// subcommands) that rejects anything but plain decimal, naming the flag. ParseDecimalInt() and
// ParseFiniteDouble() are the std::from_chars parsers for hand-split values such as
// `--slowdown STAGE:FACTOR`.
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace trainsim::cli {

// True for [-]digits with no leading zero ("0", "12", "-3"); false for "010", "0x10", "+5",
// "1e3", "1_000", "", " 7".
inline bool IsPlainDecimal(std::string_view s) {
  if (!s.empty() && s.front() == '-') s.remove_prefix(1);
  if (s.empty()) return false;
  if (s.size() > 1 && s.front() == '0') return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// A plain decimal integer (IsPlainDecimal) that fits in T; nullopt otherwise.
template <typename T = long long>
std::optional<T> ParseDecimalInt(std::string_view s) {
  if (!IsPlainDecimal(s)) return std::nullopt;
  T v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// A finite floating-point number in decimal or scientific notation ("1.5", "2e-3"); rejects
// hex floats, "inf", "nan", trailing text and a leading '+'.
inline std::optional<double> ParseFiniteDouble(std::string_view s) {
  double v = 0;
  const auto [end, ec] =
      std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

// CLI11 check for one integer value: "" when it is plain decimal, else the reason.
inline CLI::Validator DecimalInteger() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (IsPlainDecimal(value)) return "";
        return "'" + value +
               "' is not a decimal integer (no leading zeros, no 0x/0b prefixes, no sign '+')";
      },
      "", "DECIMAL");
}

// Adds DecimalInteger() to every integer option (CLI11 type INT or UINT, including
// std::optional<int> and delimited std::vector<int>) of `app` and of all its subcommands.
// Call once, after every verb has added its options.
inline void RequireDecimalIntegers(CLI::App& app) {
  for (CLI::Option* opt : app.get_options([](CLI::Option*) { return true; })) {
    // The type name carries the descriptions of earlier checks: "INT:POSITIVE".
    const std::string full = opt->get_type_name();
    const std::string type = full.substr(0, full.find(':'));
    if (type == "INT" || type == "UINT") opt->check(DecimalInteger());
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    RequireDecimalIntegers(*sub);
}

// CLI11 check for one floating-point value: "" when ParseFiniteDouble reads it, else the reason.
// CLI11 reads a FLOAT with strtold, which takes "nan", "inf" and hex ("0x10" = 16); its Range
// check is false for NaN, so `--gpu-memory-utilization nan` passed and was read as the default.
inline CLI::Validator FiniteDecimal() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (ParseFiniteDouble(value)) return "";
        return "'" + value + "' is not a finite decimal number (no nan, inf, 0x or sign '+')";
      },
      "", "FINITE");
}

// Adds FiniteDecimal() to every floating-point option (CLI11 type FLOAT, including
// std::optional<double> and delimited lists) of `app` and of all its subcommands, after the
// option's own checks. Call once, after every verb has added its options.
inline void RequireFiniteFloats(CLI::App& app) {
  for (CLI::Option* opt : app.get_options([](CLI::Option*) { return true; })) {
    const std::string full = opt->get_type_name();
    if (full.substr(0, full.find(':')) == "FLOAT") opt->check(FiniteDecimal());
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    RequireFiniteFloats(*sub);
}

// CLI11 check for a count or size that must be positive: "must be >= 1, got 0" for an integer,
// "must be > 0, got X" otherwise. CLI11's own PositiveNumber printed its bounds in full
// ("Value 0 not in range 0.000000 to 179769313486...", 300 digits; issue 11, "Messages"). A
// value that is not a number is left to the option's type and DecimalInteger / FiniteDecimal.
inline CLI::Validator Positive() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const std::optional<double> v = ParseFiniteDouble(value);
        if (!v || *v > 0) return "";
        return (IsPlainDecimal(value) ? "must be >= 1, got " : "must be > 0, got ") + value;
      },
      "POSITIVE", "POSITIVE");
}

// CLI11 check: a value may not be empty (`--strategy ''` is a mistake, not "not given").
inline CLI::Validator NonEmptyValue() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        return value.empty() ? std::string("an empty value (give one, or leave the flag out)") : "";
      },
      "", "NONEMPTY");
}

// A value given twice ("--gpus 8 --gpus 16") is an error naming the flag, not "the last one
// wins": every single-valued option of `app` and its subcommands gets MultiOptionPolicy::Throw,
// and every option that takes values rejects an empty one. Call once, after the options are added.
inline void RejectRepeatsAndEmpties(CLI::App& app) {
  for (CLI::Option* opt : app.get_options([](CLI::Option*) { return true; })) {
    if (opt->get_expected_max() == 0) continue;  // a flag: no value
    opt->check(NonEmptyValue());
    if (opt->get_items_expected_max() == 1 &&
        opt->get_multi_option_policy() != CLI::MultiOptionPolicy::TakeAll)
      opt->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    RejectRepeatsAndEmpties(*sub);
}

}  // namespace trainsim::cli

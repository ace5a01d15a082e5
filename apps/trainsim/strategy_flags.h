// CLI flags registered from the Strategy schema (trainsim/schema.h): one flag per field, plus
// "--no-<name>" for the booleans.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <string_view>

#include "trainsim/schema.h"

namespace trainsim::cli {

// Canonical key -> the text given on the command line (the last one given wins).
using StrategyFlagValues = std::map<std::string, std::string>;

// Registers every schema field that has a flag; `group` titles them in --help.
void AddStrategyFlags(CLI::App* c, StrategyFlagValues& values, const std::string& group);

// Registers the flag of one schema field bound to a typed variable (search and sweep, which
// take part of the workload). Fails loudly at start-up for an unknown key (a programming error).
CLI::Option* AddSchemaOption(CLI::App* c, std::string_view key, int& out);
CLI::Option* AddSchemaOption(CLI::App* c, std::string_view key, std::string& out);

}  // namespace trainsim::cli

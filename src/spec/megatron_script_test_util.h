// Test helpers shared by megatron_script_test.cc and megatron_scripts_test.cc: the published
// scripts of src/spec/testdata/megatron_scripts/ read as a user would, arguments included.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trainsim/megatron.h"
#include "trainsim/trainsim.h"

namespace trainsim::testing {

inline std::string ReadScript(const std::string& name) {
  auto t = ReadTextFile(std::string(TRAINSIM_SOURCE_DIR) + "/src/spec/testdata/megatron_scripts/" +
                        name);
  EXPECT_TRUE(t.ok()) << name;
  return t.ok() ? t.value() : std::string();
}

struct Loaded {
  MegatronCommand cmd;
  Strategy s;
  MegatronReading r;
};

// The script run with `args` (its $1 $2 ..., split as the shell splits them), then read.
inline Loaded LoadText(const std::string& text, const std::string& args = "") {
  Loaded l;
  auto words = SplitShellWords(args);
  EXPECT_TRUE(words.ok());
  auto cmd = ParseMegatronScript(text, words.ok() ? words.value() : std::vector<std::string>{});
  EXPECT_TRUE(cmd.ok()) << cmd.status().message();
  if (!cmd.ok()) return l;
  l.cmd = cmd.value();
  Status st = ReadMegatronArgs(l.cmd.args, l.s, nullptr, l.r);
  EXPECT_TRUE(st.ok()) << st.message();
  return l;
}

inline Loaded LoadScript(const std::string& name, const std::string& args = "") {
  return LoadText(ReadScript(name), args);
}

inline std::vector<std::string> IgnoredNames(const MegatronReading& r) {
  std::vector<std::string> out;
  for (const IgnoredInput& i : r.ignored) out.push_back(i.field);
  return out;
}

}  // namespace trainsim::testing

// Helpers shared by the CLI verbs.
#pragma once

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "trainsim/trainsim.h"
#include "trainsim/validate.h"

namespace trainsim::cli {

// Prints "trainsim: <message>" on stderr, as one line (control characters and newlines of
// echoed input escaped), and returns the exit code for bad input (2).
inline int Fail(const Status& st) {
  std::fprintf(stderr, "trainsim: %s\n", st.OneLine().c_str());
  return 2;
}

// Writes `text` to `path` and checks the stream after closing it (a full disk or /dev/full
// fails only when the buffer is flushed). `flag` names the option that gave the path.
inline Status WriteTextFile(std::string_view flag, const std::string& path,
                            const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return Status::Invalid(std::string(flag), "cannot write '" + path + "'");
  return Status::Ok();
}

// Flushes standard output at exit: a write error (a closed pipe, /dev/full) is an error, not a
// success; `rc` is the command's exit code.
inline int CheckStdout(int rc) {
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
    std::fprintf(stderr, "trainsim: cannot write standard output\n");
    return rc != 0 ? rc : 2;
  }
  return rc;
}

// The model `id_or_path` (LoadModel), naming on stderr, once per process and key, each key of
// its file that it did not read and that may change the architecture (the simulate report lists
// them as ignored too; issue 11).
inline Result<ModelSpec> LoadModelArg(std::string_view id_or_path) {
  auto m = LoadModel(id_or_path);
  if (!m.ok()) return m;
  static std::set<std::string> warned;
  for (const IgnoredModelKey& k : m->ignored_keys)
    if (warned.insert(k.key).second)
      std::fprintf(stderr, "trainsim: warning: ignored model-file key %s: %s\n",
                   Status::Invalid(k.key).OneLine().c_str(), k.why.c_str());
  return m;
}

// A success that left cases out says so on stderr, once (issue 11's terminal contract; the report
// lists each with its reason): "trainsim: warning: validate: 2 of 40 cases skipped, not scored
// (first: ID: REASON)". `total`: the cases read (0: cases.size()).
inline void WarnSkipped(const std::vector<CaseResult>& cases, const char* verb, const char* what,
                        size_t total = 0) {
  const CaseResult* first = nullptr;
  size_t n = 0;
  for (const CaseResult& c : cases)
    if (c.skipped && ++n == 1) first = &c;
  if (n == 0) return;
  if (total == 0) total = cases.size();
  const bool named = first->reason.rfind(first->id + ":", 0) == 0;
  const std::string why = named ? first->reason : first->id + ": " + first->reason;
  std::fprintf(stderr, "trainsim: warning: %s: %zu of %zu %s skipped, %s (first: %s)\n", verb, n,
               total, total == 1 ? "case" : "cases", what,
               Status::Invalid("", why).OneLine().c_str());
}

// Keys of the cases outside the case schema (CaseResult::ignored), named once on stderr:
// "trainsim: warning: validate: case keys not read: parallel.bogus (2 cases), x (1 case)".
template <typename Case>
void WarnIgnoredCaseKeys(const std::vector<Case>& cases, const char* verb) {
  std::map<std::string, int> count;
  for (const Case& c : cases)
    for (const IgnoredInput& k : c.ignored) ++count[k.field];
  if (count.empty()) return;
  std::string keys;
  for (const auto& [k, n] : count)
    keys +=
        (keys.empty() ? "" : ", ") + k + " (" + std::to_string(n) + (n == 1 ? " case)" : " cases)");
  std::fprintf(stderr, "trainsim: warning: %s: case keys not read (not in the case schema): %s\n",
               verb, Status::Invalid("", keys).OneLine().c_str());
}

// A hardware preset (or file) with the --hw-override JSON applied.
inline Result<HardwareSpec> LoadHardwareWithOverride(const std::string& id,
                                                     const std::string& override_json) {
  auto hw = LoadHardware(id);
  if (!hw.ok() || override_json.empty()) return hw;
  HardwareSpec h = hw.value();
  if (Status st = ApplyHardwareOverrides(h, override_json, "hw-override"); !st.ok()) return st;
  return h;
}

}  // namespace trainsim::cli

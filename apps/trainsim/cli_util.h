// Helpers shared by the CLI verbs.
#pragma once

#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <string_view>

#include "trainsim/trainsim.h"

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

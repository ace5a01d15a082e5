#include "megatron_input.h"

#include <cstdio>

#include "trainsim/trainsim.h"

namespace trainsim::cli {

Result<std::optional<MegatronInput>> LoadMegatronInput(const std::string& args,
                                                       const std::string& script_file,
                                                       const std::string& script_args) {
  if (!script_args.empty() && script_file.empty())
    return Status::Invalid("megatron-script-args",
                           "needs --megatron-script (the script they are for)");
  if (args.empty() && script_file.empty()) return std::optional<MegatronInput>();
  if (!args.empty() && !script_file.empty())
    return Status::Invalid("megatron-script",
                           "give --from-megatron-args or --megatron-script, not both");
  std::string text = args;
  if (!script_file.empty()) {
    auto t = ReadTextFile(script_file);
    if (!t.ok()) return Status::NotFound("megatron-script: " + t.status().message());
    text = t.value();
  }
  auto job =
      ParseMegatronJob(text, script_args, script_file.empty() ? "from-megatron-args" : script_file,
                       "megatron-script-args");
  if (!job.ok()) return job.status();
  return std::optional<MegatronInput>(std::move(job).value());
}

void WarnIgnored(const MegatronReading& r) {
  std::string unmodelled, unknown;
  for (const IgnoredInput& i : r.ignored) {
    const bool is_unknown = i.why.rfind("unknown", 0) == 0;
    std::string& list = is_unknown ? unknown : unmodelled;
    list += (list.empty() ? "" : ", ") + i.field;
    if (is_unknown && i.why.find("did you mean") != std::string::npos)
      list += " (" + i.why.substr(i.why.find("did you mean")) + ")";
  }
  if (!unmodelled.empty())
    std::fprintf(
        stderr,
        "trainsim: warning: Megatron-LM arguments not modelled or overridden (see \"ignored\" "
        "in the report): %s\n",
        unmodelled.c_str());
  if (!unknown.empty())
    std::fprintf(stderr,
                 "trainsim: warning: unknown Megatron-LM arguments, not used (see \"ignored\" in "
                 "the report): %s\n",
                 unknown.c_str());
}

}  // namespace trainsim::cli

// Megatron-LM launch scripts and argument strings for every front-end (include/trainsim/
// front_end.h, "Megatron-LM inputs"): the CLI, the REST service and the Python module read them
// with these functions, so that the three cannot disagree.
#include "trainsim/front_end.h"

namespace trainsim {

Result<MegatronJob> ParseMegatronJob(std::string_view text, std::string_view script_args,
                                     const std::string& text_field, const std::string& args_field) {
  auto positional = SplitShellWords(script_args);
  if (!positional.ok()) return positional.status().WithContext(args_field);
  auto cmd = ParseMegatronScript(text, positional.value());
  if (!cmd.ok()) return cmd.status().WithContext(text_field);
  MegatronJob job;
  job.command = std::move(cmd).value();
  return job;
}

Status ApplyMegatronJob(MegatronJob& job, Strategy& s, StrategyKeys& given) {
  if (Status st = ReadMegatronArgs(job.command.args, s, &given, job.reading); !st.ok()) return st;
  if (job.command.launcher_gpus > 0) {  // --nproc_per_node x --nnodes, unless a setting says
    s.world_size = job.command.launcher_gpus;
    given.insert("world_size");
  }
  return Status::Ok();
}

Result<ModelSpec> MegatronJobModel(const MegatronJob& job, const ModelSpec* preset, Strategy& s) {
  auto m = ResolveMegatronModel(job.reading, preset, s);
  if (!m.ok()) return m.status();
  s = NormaliseStrategy(s);
  return m;
}

void AddMegatronNotes(const MegatronJob& job, StepReport& r) {
  r.ignored.insert(r.ignored.end(), job.reading.ignored.begin(), job.reading.ignored.end());
  const auto& a = job.reading.assumed;
  r.assumed.insert(r.assumed.begin(), a.begin(), a.end());
}

}  // namespace trainsim

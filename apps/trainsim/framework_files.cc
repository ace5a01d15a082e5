#include "framework_files.h"

#include <cstdio>
#include <string>

#include "trainsim/presets.h"

namespace trainsim::cli {

void AddFrameworkFlags(CLI::App* c, SimulateArgs& a) {
  c->add_option("--deepspeed-config", a.deepspeed_config,
                "DeepSpeed config JSON (ZeRO stage, offload, batch, precision; flags override)");
  c->add_option("--torchtitan-config", a.torchtitan_config,
                "torchtitan training TOML ([parallelism], [training], [model]; flags override)");
  if (CLI::Option* m = c->get_option_no_throw("--model"))
    m->each([&a](const std::string&) { a.model_given = true; });
}

Result<FrameworkConfig> ReadFrameworkFiles(const SimulateArgs& a, ModelSpec& model) {
  if (!a.deepspeed_config.empty() && !a.torchtitan_config.empty())
    return Status::Invalid("give one of --deepspeed-config and --torchtitan-config");
  const std::string& path = a.deepspeed_config.empty() ? a.torchtitan_config : a.deepspeed_config;
  if (path.empty()) return FrameworkConfig{};
  auto text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  auto fw = a.deepspeed_config.empty()
                ? ParseTorchtitanToml(text.value(), path, model.layers, a.model_given)
                : ParseDeepSpeedConfig(text.value(), path);
  if (!fw.ok() || fw->model.empty()) return fw;
  if (a.model_given && a.model != fw->model)
    return Status::Invalid("model: --model " + a.model + " contradicts " + path +
                           " ([model] name and flavor: preset " + fw->model + ")");
  auto m = LoadModel(fw->model);
  if (!m.ok()) return m.status();
  model = m.value();
  return fw;
}

void AddInputNotes(const SimulateArgs& a, const FrameworkConfig& fw, StepReport& r) {
  const size_t before = r.ignored.size();  // the Megatron-LM reader warned about its own
  r.ignored.insert(r.ignored.end(), fw.ignored.begin(), fw.ignored.end());
  if (!a.strategy_file.empty())
    if (auto text = ReadTextFile(a.strategy_file); text.ok()) {
      auto ignored = IgnoredStrategyJsonKeys(text.value());
      r.ignored.insert(r.ignored.end(), ignored.begin(), ignored.end());
    }
  if (a.hardware.find('/') != std::string::npos || a.hardware.ends_with(".json"))
    if (auto text = ReadTextFile(a.hardware); text.ok()) {
      auto notes = HardwareFileAssumptions(text.value(), a.hardware);
      r.assumed.insert(r.assumed.begin(), notes.begin(), notes.end());
    }
  r.assumed.insert(r.assumed.begin(), fw.assumed.begin(), fw.assumed.end());
  if (r.ignored.size() == before) return;
  std::string keys;
  for (size_t i = before; i < r.ignored.size(); ++i)
    keys += (keys.empty() ? "" : ", ") + r.ignored[i].field;
  std::fprintf(stderr,
               "trainsim: warning: %zu input keys not simulated: %s (the report's "
               "ignored list says why)\n",
               r.ignored.size() - before, keys.c_str());
}

}  // namespace trainsim::cli

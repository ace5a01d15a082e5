#include "framework_files.h"

#include <cstdio>
#include <filesystem>
#include <string>

#include "cli_util.h"
#include "trainsim/front_end.h"
#include "trainsim/presets.h"

namespace trainsim::cli {

void AddFrameworkFlags(CLI::App* c, SimulateArgs& a) {
  c->add_option("--deepspeed-config", a.deepspeed_config,
                "DeepSpeed config JSON (ZeRO stage, offload, batch, precision; flags override)");
  c->add_option("--torchtitan-config", a.torchtitan_config,
                "torchtitan training TOML ([parallelism], [training], [model]; flags override)");
  c->add_option("--llamafactory", a.llamafactory,
                "LLaMA-Factory training YAML (stage, finetuning_type, LoRA, batch, cutoff_len, "
                "deepspeed; flags override)");
  c->add_option("--trl-args", a.trl_args,
                "TRL / HF TrainingArguments JSON (SFT, DPO, GRPO configs; flags override)");
  c->add_option("--accelerate-config", a.accelerate_config,
                "Hugging Face Accelerate config YAML (FSDP, DeepSpeed, Megatron-LM, processes, "
                "mixed precision; flags override)");
  c->add_option(
      "--framework", a.framework,
      "run as this framework runs it: its profile's defaults (data/frameworks.json) for "
      "the settings no other input gives, listed as assumed (" +
          [] {
            std::string ids;
            for (const std::string& id : FrameworkProfileIds())
              ids += (ids.empty() ? "" : ", ") + id;
            return ids;
          }() +
          ")");
  if (CLI::Option* m = c->get_option_no_throw("--model"))
    m->each([&a](const std::string&) { a.model_given = true; });
}

namespace {

// LLaMA-Factory's model_name_or_path: a trainsim preset id or a local folder holding an HF
// config.json (hub ids are not fetched).
Result<ModelSpec> NamedModel(const std::string& name, const std::string& origin) {
  std::error_code ec;
  if (std::filesystem::is_directory(name, ec))
    if (auto m = LoadModelArg(name + "/config.json"); m.ok()) return m;
  if (auto m = LoadModelArg(name); m.ok()) return m;
  return Status::Invalid("model_name_or_path", "'" + name +
                                                   "' is neither a trainsim preset nor a local "
                                                   "folder with a config.json: give --model")
      .WithContext(origin);
}

// The DeepSpeed file a training file names, relative to the working directory or to the
// training file's folder (LLaMA-Factory's examples name it from the repository root).
void ReadNamedDeepSpeed(const std::string& origin, FrameworkConfig& fw, Status& st) {
  if (fw.deepspeed_file.empty()) return;
  std::string path = fw.deepspeed_file;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    const auto beside = std::filesystem::path(origin).parent_path() / path;
    if (std::filesystem::exists(beside, ec)) path = beside.string();
  }
  auto text = ReadTextFile(path);
  if (!text.ok()) {
    for (auto& n : fw.assumed)
      if (n.field == "deepspeed")
        n.why = "file not found (relative to the working directory or " + origin +
                "'s folder): ZeRO stage and offload from the strategy (--zero, "
                "--offload-optimizer)";
    return;
  }
  auto ds = ParseDeepSpeedConfig(text.value(), path);
  if (!ds.ok()) {
    st = ds.status();
    return;
  }
  MergeDeepSpeedConfig(ds.value(), fw);
}

// --llamafactory / --trl-args: the model from --model, else the file's model_name_or_path;
// a LLaMA-Factory freeze count needs the model's layers, so the YAML is read again once the
// model is known.
Result<FrameworkConfig> ReadTrainerFile(const SimulateArgs& a, const std::string& text,
                                        ModelSpec& model) {
  const std::string& path = a.llamafactory.empty() ? a.trl_args : a.llamafactory;
  const bool lf = !a.llamafactory.empty();
  auto fw = lf ? ParseLlamaFactoryYaml(text, path, model.layers) : ParseTrlArgsJson(text, path);
  if (!fw.ok()) return fw;
  if (lf && !a.model_given) {
    if (fw->model_path.empty())
      return Status::Invalid("model_name_or_path", "absent: give --model").WithContext(path);
    auto m = NamedModel(fw->model_path, path);
    if (!m.ok()) return m.status();
    model = std::move(m).value();
    fw = ParseLlamaFactoryYaml(text, path, model.layers);
    if (!fw.ok()) return fw;
  } else if (!fw->model_path.empty()) {
    fw.value().assumed.push_back(
        {"model_name_or_path", fw->model_path, "the model simulated is --model " + a.model});
  }
  Status st;
  ReadNamedDeepSpeed(path, fw.value(), st);
  if (!st.ok()) return st;
  return fw;
}

// --accelerate-config: the DeepSpeed file deepspeed_config.deepspeed_config_file names (relative
// to the working directory or the YAML's folder) is read under the YAML; a file that cannot be
// read is an error, since without it nothing says the ZeRO stage.
Result<FrameworkConfig> ReadAccelerateFile(const std::string& path) {
  auto text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  auto fw = ParseAccelerateConfig(text.value(), path);
  if (!fw.ok() || fw->deepspeed_file.empty()) return fw;
  std::error_code ec;
  const auto beside = std::filesystem::path(path).parent_path() / fw->deepspeed_file;
  if (!std::filesystem::exists(fw->deepspeed_file, ec) && !std::filesystem::exists(beside, ec))
    return Status::Invalid("deepspeed_config.deepspeed_config_file",
                           "'" + fw->deepspeed_file +
                               "' not found (relative to the working directory or the YAML's "
                               "folder): the ZeRO stage is in that file")
        .WithContext(path);
  Status st;
  ReadNamedDeepSpeed(path, fw.value(), st);
  if (!st.ok()) return st;
  return fw;
}

}  // namespace

Result<FrameworkConfig> ReadFrameworkFiles(const SimulateArgs& a, ModelSpec& model) {
  const int files = !a.deepspeed_config.empty() + !a.torchtitan_config.empty() +
                    !a.llamafactory.empty() + !a.trl_args.empty() + !a.accelerate_config.empty();
  const bool trainer = !a.llamafactory.empty() || !a.trl_args.empty();
  // `accelerate launch --config_file A train.py FILE`: the launcher's file under the training
  // file's (MergeAccelerateUnderTrainer).
  const bool launched = trainer && !a.accelerate_config.empty() && files == 2;
  if (files > 1 && !launched)
    return Status::Invalid(
        "give one of --deepspeed-config, --torchtitan-config, --llamafactory, --trl-args and "
        "--accelerate-config (--accelerate-config may come with --llamafactory or --trl-args)");
  if (!a.accelerate_config.empty() && !trainer) return ReadAccelerateFile(a.accelerate_config);
  if (trainer) {
    auto text = ReadTextFile(a.llamafactory.empty() ? a.trl_args : a.llamafactory);
    if (!text.ok()) return text.status();
    auto fw = ReadTrainerFile(a, text.value(), model);
    if (!fw.ok() || !launched) return fw;
    auto launcher = ReadAccelerateFile(a.accelerate_config);
    if (!launcher.ok()) return launcher.status();
    MergeAccelerateUnderTrainer(launcher.value(), fw.value());
    return fw;
  }
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
  auto m = LoadModelArg(fw->model);
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
  // Keys come from the file: control characters (a NUL cut the line, "seq\0len" printed as
  // "seq") are written as \xNN, so the warning stays one whole line.
  std::string keys;
  for (size_t i = before; i < r.ignored.size(); ++i) {
    if (!keys.empty()) keys += ", ";
    for (unsigned char ch : r.ignored[i].field) {
      if (ch >= 0x20 && ch != 0x7f) {
        keys += static_cast<char>(ch);
      } else {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", ch);
        keys += buf;
      }
    }
  }
  std::fprintf(stderr,
               "trainsim: warning: %zu input keys not simulated: %s (the report's "
               "ignored list says why)\n",
               r.ignored.size() - before, keys.c_str());
}

}  // namespace trainsim::cli

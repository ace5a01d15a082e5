#include "serve/inputs.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "spec/json_fields.h"
#include "trainsim/formats.h"
#include "trainsim/front_end.h"
#include "trainsim/presets.h"
#include "trainsim/schema.h"
#include "trainsim/uncertainty.h"

namespace trainsim::serve {

using nlohmann::json;

Result<json> ParseBody(std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return json::object();
  auto parsed = detail::ParseJsonText(body, "request");
  if (!parsed.ok()) return parsed.status();
  if (!parsed.value().is_object())
    return Status::Invalid("", "request: the body must be a JSON object");
  return parsed;
}

Status CheckKeys(const json& body, const std::vector<std::string_view>& allowed) {
  for (const auto& [key, value] : body.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || key == a;
    if (known) continue;
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    return Status::Invalid(key, "unknown key (this endpoint takes " + list + ")")
        .WithContext("request");
  }
  return Status::Ok();
}

namespace {

// The embedded presets, parsed once: parsing them took ~200 us of a ~700 us request (a hardware
// preset alone ~150 us). Presets are immutable, so the maps are shared by every thread.
template <typename Spec>
const std::map<std::string, Spec, std::less<>>& Presets(std::vector<std::string> (*list)(),
                                                        Result<Spec> (*load)(std::string_view)) {
  static const std::map<std::string, Spec, std::less<>> presets = [&] {
    std::map<std::string, Spec, std::less<>> m;
    for (const std::string& id : list())
      if (auto spec = load(id); spec.ok()) m.emplace(id, std::move(spec).value());
    return m;
  }();
  return presets;
}

Result<ModelSpec> ModelPreset(std::string_view id) {
  const auto& m = Presets<ModelSpec>(&ListModelPresets, &LoadModelPreset);
  if (auto it = m.find(id); it != m.end()) return it->second;
  return LoadModelPreset(id);  // its error names the presets
}

Result<HardwareSpec> HardwarePreset(std::string_view id) {
  const auto& m = Presets<HardwareSpec>(&ListHardwarePresets, &LoadHardwarePreset);
  if (auto it = m.find(id); it != m.end()) return it->second;
  return LoadHardwarePreset(id);
}

}  // namespace

Result<ModelSpec> ReadModel(const json& body) {
  if (!body.contains("model") || body["model"].is_null()) return ModelPreset("llama3-8b");
  const json& m = body["model"];
  if (m.is_string()) return ModelPreset(m.get<std::string>());
  if (m.is_object()) return ParseModelJson(m.dump(), "model");
  return Status::Invalid("model", "must be a preset id (string) or a config.json object");
}

Result<HardwareSpec> ReadHardware(const json& body, std::vector<Assumption>* notes) {
  Result<HardwareSpec> hw = Status::Invalid("hardware", "unset");
  const json* h =
      body.contains("hardware") && !body["hardware"].is_null() ? &body["hardware"] : nullptr;
  if (!h) {
    hw = HardwarePreset("h100_sxm_80gb");
  } else if (h->is_string()) {
    hw = HardwarePreset(h->get<std::string>());
  } else if (h->is_object()) {
    const std::string text = h->dump();
    hw = ParseHardwareJson(text, "hardware");
    if (hw.ok() && notes) *notes = HardwareFileAssumptions(text, "hardware");
  } else {
    return Status::Invalid("hardware", "must be a preset id (string) or a hardware JSON object");
  }
  if (!hw.ok() || !body.contains("hw_override") || body["hw_override"].is_null()) return hw;
  if (!body["hw_override"].is_object())
    return Status::Invalid("hw_override", "must be a JSON object of hardware fields");
  HardwareSpec out = hw.value();
  if (Status st = ApplyHardwareOverrides(out, body["hw_override"].dump(), "hw-override"); !st.ok())
    return st;
  return out;
}

namespace {

Result<std::string> TextField(const json& fc, const char* key, bool required) {
  if (!fc.contains(key) || fc[key].is_null()) {
    if (required)
      return Status::Invalid(std::string("framework_config.") + key, "is required (a string)");
    return std::string();
  }
  if (!fc[key].is_string())
    return Status::Invalid(std::string("framework_config.") + key,
                           "must be a string (the file's contents; a request never names a path)");
  return fc[key].get<std::string>();
}

// The model a request simulates with a framework file: the body's "model"; else the model the
// file names (torchtitan [model] flavour, LLaMA-Factory model_name_or_path as a preset id);
// else simulate's default. A torchtitan flavour that contradicts the body's model is refused.
Result<ModelSpec> FrameworkModel(const json& body, const FrameworkConfig& first) {
  const bool given = body.contains("model") && !body["model"].is_null();
  if (!first.model.empty()) {
    if (given && !(body["model"].is_string() && body["model"].get<std::string>() == first.model))
      return Status::Invalid("model",
                             "contradicts framework_config ([model] name and flavor: "
                             "preset " +
                                 first.model + ")");
    return ModelPreset(first.model);
  }
  if (given || first.model_path.empty()) return ReadModel(body);
  auto m = ModelPreset(first.model_path);
  if (!m.ok())
    return Status::Invalid("framework_config.text",
                           "model_name_or_path '" + first.model_path +
                               "' is not a trainsim preset (hub ids and folders are not read): "
                               "give \"model\"");
  return m;
}

// "framework_config": {"format", "text", "deepspeed_text"}: the framework file's settings (and
// the DeepSpeed file a LLaMA-Factory / TRL file names, sent as text), its model, its notes.
Status ReadFrameworkConfig(const json& body, SimInputs& in, FrameworkConfig& fw) {
  const json& fc = body["framework_config"];
  if (!fc.is_object())
    return Status::Invalid("framework_config",
                           "must be an object {\"format\": ..., \"text\": ...}");
  if (Status st = CheckKeys(fc, {"format", "text", "deepspeed_text"}); !st.ok())
    return st.WithContext("framework_config");
  auto format = TextField(fc, "format", true);
  if (!format.ok()) return format.status();
  auto text = TextField(fc, "text", true);
  if (!text.ok()) return text.status();
  auto ds_text = TextField(fc, "deepspeed_text", false);
  if (!ds_text.ok()) return ds_text.status();
  const FrameworkText ft{*format, *text, *ds_text};
  const bool model_given = body.contains("model") && !body["model"].is_null();
  auto first = ReadFrameworkText(ft, "framework_config", 0, model_given);
  if (!first.ok()) return first.status();
  auto model = FrameworkModel(body, first.value());
  if (!model.ok()) return model.status();
  in.model = std::move(model).value();
  auto parsed = ReadFrameworkText(ft, "framework_config", in.model.layers, model_given);
  if (!parsed.ok()) return parsed.status();
  fw = std::move(parsed).value();
  return Status::Ok();
}

// "megatron": {"script": TEXT, "args": TEXT}: a Megatron-LM launch script or argument string,
// run with `args` as its $1, $2, ... (the CLI's --megatron-script with --megatron-script-args).
Result<std::optional<MegatronJob>> ReadMegatron(const json& body) {
  if (!body.contains("megatron") || body["megatron"].is_null()) return std::optional<MegatronJob>();
  const json& mg = body["megatron"];
  if (!mg.is_object())
    return Status::Invalid("megatron", "must be an object {\"script\": ..., \"args\": ...}");
  if (Status st = CheckKeys(mg, {"script", "args"}); !st.ok()) return st.WithContext("megatron");
  if (!mg.contains("script") || !mg["script"].is_string())
    return Status::Invalid("megatron.script",
                           "is required: the launch script's or argument string's text (a "
                           "request never names a path)");
  std::string args;
  if (mg.contains("args") && !mg["args"].is_null()) {
    if (!mg["args"].is_string())
      return Status::Invalid("megatron.args",
                             "must be a string: the script's arguments as a shell command line");
    args = mg["args"].get<std::string>();
  }
  auto job =
      ParseMegatronJob(mg["script"].get<std::string>(), args, "megatron.script", "megatron.args");
  if (!job.ok()) return job.status();
  return std::optional<MegatronJob>(std::move(job).value());
}

// The model of a Megatron-LM request: built from the script's shape arguments, or the body's
// "model" checked against them (the CLI's --model with --megatron-script).
Result<ModelSpec> MegatronModel(const json& body, const MegatronJob& job, Strategy& s) {
  std::optional<ModelSpec> preset;
  if (body.contains("model") && !body["model"].is_null()) {
    auto m = ReadModel(body);
    if (!m.ok()) return m.status();
    preset = std::move(m).value();
  }
  auto m = MegatronJobModel(job, preset ? &*preset : nullptr, s);
  if (!m.ok()) return preset ? m.status().WithContext("model") : m.status();
  return m;
}

}  // namespace

Result<SimInputs> ReadSimInputs(const json& body, const std::vector<std::string_view>& more) {
  std::vector<std::string_view> keys = {
      "model", "hardware", "hw_override", "strategy", "framework_config", "megatron", "framework"};
  keys.insert(keys.end(), more.begin(), more.end());
  if (Status st = CheckKeys(body, keys); !st.ok()) return st;
  SimInputs in;
  // The CLI's order: hardware, strategy, model (the first error is the one it would print).
  auto hw = ReadHardware(body, &in.hw_notes);
  if (!hw.ok()) return hw.status();
  in.hardware = std::move(hw).value();
  FrameworkConfig fw;
  const bool with_file = body.contains("framework_config") && !body["framework_config"].is_null();
  auto mg = ReadMegatron(body);
  if (!mg.ok()) return mg.status();
  if (with_file && mg.value())
    return Status::Invalid("megatron", "give megatron or framework_config, not both");
  if (with_file)
    if (Status st = ReadFrameworkConfig(body, in, fw); !st.ok()) return st;
  Strategy s;
  // The file (or the Megatron-LM arguments) first, then the strategy object over it (the CLI:
  // the file, then the flags).
  if (Status st = ApplyStrategySettings(s, fw.settings, false); !st.ok()) return st;
  for (const auto& [key, value] : fw.settings) in.given.insert(key);
  if (mg.value())
    if (Status st = ApplyMegatronJob(*mg.value(), s, in.given); !st.ok())
      return st.WithContext("megatron.script");
  StrategyKeys from_object;
  if (body.contains("strategy") && !body["strategy"].is_null()) {
    if (!body["strategy"].is_object())
      return Status::Invalid("strategy", "must be a JSON object (what a strategy file holds)");
    const std::string text = body["strategy"].dump();
    if (Status st = ApplyStrategyJson(text, "strategy", s, &from_object); !st.ok()) return st;
    in.given.insert(from_object.begin(), from_object.end());
    in.ignored = IgnoredStrategyJsonKeys(text);
  }
  auto finished = FinishStrategy(s, {}, in.given);  // as the CLI and the Python module do
  if (!finished.ok()) return finished.status();
  in.strategy = std::move(finished).value();
  // "framework": a framework profile's defaults for what nothing above gave (simulate
  // --framework).
  if (body.contains("framework") && !body["framework"].is_null()) {
    if (!body["framework"].is_string())
      return Status::Invalid("framework", "must be a string naming a framework profile");
    const std::string name = body["framework"].get<std::string>();
    auto profile = ApplyFrameworkProfile(name, in.hardware, in.strategy, in.given);
    if (!profile.ok()) return profile.status();
    in.stack_named = name.rfind("generic-", 0) != 0;
    fw.assumed.insert(fw.assumed.end(), profile->begin(), profile->end());
  }
  if (Status st = ResolveFrameworkBatch(fw, in.strategy, from_object.count("global_batch_size"));
      !st.ok())
    return st;
  if (Status st = CheckFrameworkBatch(fw, in.strategy); !st.ok()) return st;
  if (Status st = ResolveFrameworkLayout(fw, in.strategy, in.hardware.gpus_per_node,
                                         from_object.count("dist_opt_instances") > 0);
      !st.ok())
    return st;
  in.ignored.insert(in.ignored.begin(), fw.ignored.begin(), fw.ignored.end());
  in.hw_notes.insert(in.hw_notes.end(), fw.assumed.begin(), fw.assumed.end());
  if (with_file || mg.value()) in.stack_named = true;
  if (with_file) return in;
  if (mg.value()) {
    auto m = MegatronModel(body, *mg.value(), in.strategy);
    if (!m.ok()) return m.status();
    in.model = std::move(m).value();
    const MegatronReading& r = mg.value()->reading;  // listed as the CLI lists them
    in.ignored.insert(in.ignored.begin(), r.ignored.begin(), r.ignored.end());
    in.hw_notes.insert(in.hw_notes.end(), r.assumed.begin(), r.assumed.end());
    return in;
  }
  auto m = ReadModel(body);
  if (!m.ok()) return m.status();
  in.model = std::move(m).value();
  return in;
}

Result<StepReport> SimulateInputs(SimInputs& in, bool detail) {
  SimOptions opt;
  opt.detail = detail;
  auto rep = SimulateWithAssumptions(in.model, in.hardware, in.strategy, in.given, opt);
  if (!rep.ok()) return rep.status();
  StepReport& r = rep.value();
  // The CLI's order (cmd_simulate.cc, AddInputNotes): the file's notes before the defaults.
  r.ignored.insert(r.ignored.end(), in.ignored.begin(), in.ignored.end());
  r.assumed.insert(r.assumed.begin(), in.hw_notes.begin(), in.hw_notes.end());
  if (!in.stack_named) WidenForInferredStack(r, in.strategy);
  return rep;
}

}  // namespace trainsim::serve

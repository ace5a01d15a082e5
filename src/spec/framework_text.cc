// A training framework's file sent as text (REST "framework_config", Python framework_config=):
// read with the parser the CLI uses for the file, never from a path.
#include <string>

#include "trainsim/formats.h"

namespace trainsim {

namespace {

Result<FrameworkConfig> ParseOne(std::string_view format, std::string_view text,
                                 std::string_view origin, int layers, bool model_given) {
  if (format == "deepspeed") return ParseDeepSpeedConfig(text, origin);
  if (format == "torchtitan") return ParseTorchtitanToml(text, origin, layers, model_given);
  if (format == "llamafactory") return ParseLlamaFactoryYaml(text, origin, layers);
  if (format == "accelerate") return ParseAccelerateConfig(text, origin);
  return ParseTrlArgsJson(text, origin);
}

}  // namespace

Result<FrameworkConfig> ReadFrameworkText(const FrameworkText& in, std::string_view origin,
                                          int model_layers, bool model_given) {
  if (in.format != "deepspeed" && in.format != "torchtitan" && in.format != "llamafactory" &&
      in.format != "trl" && in.format != "accelerate")
    return Status::Invalid(
        std::string(origin) + ".format",
        "must be deepspeed, torchtitan, llamafactory, trl or accelerate, got '" + in.format + "'");
  const std::string text_origin = std::string(origin) + ".text";
  auto fw = ParseOne(in.format, in.text, text_origin, model_layers, model_given);
  if (!fw.ok()) return fw;
  if (!in.deepspeed_text.empty()) {
    auto ds = ParseDeepSpeedConfig(in.deepspeed_text, std::string(origin) + ".deepspeed_text");
    if (!ds.ok()) return ds.status();
    MergeDeepSpeedConfig(ds.value(), fw.value());
  } else if (!fw->deepspeed_file.empty() && in.format == "accelerate") {
    // Accelerate's deepspeed_config_file replaces its other DeepSpeed keys: nothing else says
    // the ZeRO stage (the CLI refuses a file it cannot find, too).
    return Status::Invalid(std::string(origin) + ".deepspeed_text",
                           "required: the Accelerate config names deepspeed_config_file '" +
                               fw->deepspeed_file + "' (send its contents)");
  } else if (!fw->deepspeed_file.empty()) {
    for (Assumption& n : fw.value().assumed)
      if (n.field == "deepspeed")
        n.why = "not sent (a request never reads files: send its contents as " +
                std::string(origin) + ".deepspeed_text): ZeRO stage and offload from the strategy";
  }
  return fw;
}

}  // namespace trainsim

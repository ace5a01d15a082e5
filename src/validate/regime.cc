// The physical features that group runs into uncertainty regimes.
#include "validate/regime.h"

#include <string>

#include "trainsim/finetune.h"

namespace trainsim {
namespace {

struct GenerationPrefix {
  std::string_view prefix, generation;
};

// Longest prefixes first where one is a prefix of another ("gb200" before "b200" is not needed:
// both are blackwell; "h20" after "h200" is harmless for the same reason).
constexpr GenerationPrefix kGenerations[] = {{"v100", "volta"},
                                             {"a100", "ampere"},
                                             {"a6000", "ampere"},
                                             {"a10", "ampere"},
                                             {"l4", "ada"},
                                             {"rtx4090", "ada"},
                                             {"h100", "hopper"},
                                             {"h200", "hopper"},
                                             {"h800", "hopper"},
                                             {"h20", "hopper"},
                                             {"gh200", "hopper"},
                                             {"b200", "blackwell"},
                                             {"b300", "blackwell"},
                                             {"gb200", "blackwell"},
                                             {"gb300", "blackwell"},
                                             {"rtx5090", "blackwell"},
                                             {"rtx_pro_6000", "blackwell"},
                                             {"mi", "amd"},
                                             {"tpu", "tpu"},
                                             {"gaudi", "gaudi"},
                                             {"trn", "trainium"}};

// The generation of a preset id by its prefix; "" = none matches.
std::string_view GenerationOfId(std::string_view id) {
  for (const GenerationPrefix& g : kGenerations)
    if (id.substr(0, g.prefix.size()) == g.prefix) return g.generation;
  return "";
}

// Total parameters that separate the size buckets (10 B and 100 B).
constexpr double kSizeEdges[] = {10e9, 100e9};

}  // namespace

std::string_view HardwareGeneration(const HardwareSpec& hw) {
  // A cloud instance shape (aws_p5_48xlarge) is named after the instance, not the silicon: the
  // preset it is built on (instance_of), else the one it borrows efficiencies from, names it.
  for (std::string_view id : {std::string_view(hw.id), std::string_view(hw.instance_of),
                              std::string_view(hw.efficiency_from)})
    if (std::string_view g = GenerationOfId(id); !g.empty()) return g;
  if (hw.peak_fp4_flops > 0) return "blackwell";
  if (hw.peak_fp8_flops > 0) return "hopper";
  if (hw.peak_bf16_flops > 0) return "ampere";
  return "volta";
}

namespace detail {

int GenerationIndex(std::string_view generation) {
  for (int i = 0; i < kGenerationCount; ++i)
    if (kGenerationNames[i] == generation) return i;
  return 0;
}

RegimeFeatures RegimeOfRun(double params_total, bool moe, const HardwareSpec& hw,
                           const Strategy& s) {
  RegimeFeatures f;
  f.generation = HardwareGeneration(hw);
  f.multi_node = s.world_size > 8;
  f.rl = IsRlStage(s.stage);
  f.finetune = !f.rl && (s.stage != TrainStage::kPretrain || s.method != FtMethod::kFull);
  f.moe = moe;
  f.size_bucket = params_total < kSizeEdges[0] ? 0 : params_total < kSizeEdges[1] ? 1 : 2;
  return f;
}

}  // namespace detail

RegimeFeatures RegimeOf(const ModelSpec& m, const HardwareSpec& hw, const Strategy& s) {
  return detail::RegimeOfRun(static_cast<double>(CountParams(m).total), m.is_moe(), hw, s);
}

std::vector<std::string> RegimeNames(const RegimeFeatures& f) {
  static const char* const kSizes[] = {"<10B", "10-100B", ">100B"};
  const std::string gen(f.generation);
  if (f.rl) return {"rl/" + gen, kRlRegime, "all"};
  if (f.finetune) return {"finetune/" + gen, "finetune", "all"};
  const std::string scale = gen + (f.multi_node ? "/multi-node" : "/1-node");
  const std::string kind = scale + (f.moe ? "/moe" : "/dense");
  return {kind + "/" + kSizes[f.size_bucket], kind, scale, gen, "all"};
}

}  // namespace trainsim

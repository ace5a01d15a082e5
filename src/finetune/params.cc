// The linear modules of a layer and the parameter groups of a stage under a fine-tuning
// method.
#include <algorithm>
#include <string>
#include <string_view>

#include "finetune/method.h"
#include "finetune/modules.h"

namespace trainsim::finetune {

std::vector<Linear> LayerLinears(const ModelSpec& m, const Strategy& s, bool moe) {
  const double h = static_cast<double>(m.hidden), t = s.tp;
  const double q = static_cast<double>(m.heads) * m.head_dim;
  const double kv = static_cast<double>(m.kv_heads) * m.head_dim;
  std::vector<Linear> out;
  if (s.lora_targets & kLoraQkvFused) {
    out.push_back({kLoraQ | kLoraK | kLoraV, h, (q + 2 * kv) / t, false});
  } else {
    out.push_back({kLoraQ, h, q / t, false});
    out.push_back({kLoraK, h, kv / t, false});
    out.push_back({kLoraV, h, kv / t, false});
  }
  out.push_back({kLoraO, q / t, h, false});
  double ffn = static_cast<double>((m.is_moe() && m.moe.dense_ffn > 0) ? m.moe.dense_ffn : m.ffn);
  if (moe) ffn = static_cast<double>(m.moe.shared_ffn);  // routed experts: no adapters
  if (ffn > 0) {
    if (m.gated_mlp && (s.lora_targets & kLoraFc1Fused)) {
      out.push_back({kLoraGate | kLoraUp, h, 2 * ffn / t, true});
    } else {
      if (m.gated_mlp) out.push_back({kLoraGate, h, ffn / t, true});
      out.push_back({kLoraUp, h, ffn / t, true});
    }
    out.push_back({kLoraDown, ffn / t, h, true});
  }
  return out;
}

bool Adapted(const Strategy& s, const Linear& l) {
  return (s.lora_targets & l.target) != 0;
}

namespace {

graph::ParamGroup* Find(std::vector<graph::ParamGroup>& groups, const char* name) {
  for (graph::ParamGroup& g : groups)
    if (std::string_view(g.name) == name) return &g;
  return nullptr;
}

// Method freeze: the frozen layers' parameters move from "layers" / "experts" to frozen
// groups.
void SplitFrozenLayers(const ModelSpec& m, const Strategy& s, const graph::StageLayers& sl,
                       std::vector<graph::ParamGroup>& groups) {
  const graph::LayerParams dense = graph::RankLayerParams(m, s, false);
  const graph::LayerParams moe =
      sl.frozen_moe > 0 ? graph::RankLayerParams(m, s, true) : graph::LayerParams{};
  const double frozen = sl.frozen_dense * (dense.tp_sharded + dense.replicated) +
                        sl.frozen_moe * (moe.tp_sharded + moe.replicated);
  const double w_b = WeightBytes(s.dtype);
  if (graph::ParamGroup* g = Find(groups, "layers"); g && frozen > 0) {
    g->count -= frozen;
    groups.push_back({"frozen_layers", frozen, false, false, w_b});
  }
  const double frozen_experts = sl.frozen_moe * moe.expert;
  if (graph::ParamGroup* g = Find(groups, "experts"); g && frozen_experts > 0) {
    g->count -= frozen_experts;
    groups.push_back({"frozen_experts", frozen_experts, true, false, w_b});
  }
}

// Trained parameters outside the layers: the virtual tokens of prompt tuning, and p-tuning's
// MLP prompt encoder (PEFT PromptEncoder: three h x h linears with biases).
double FirstStageAdapterParams(const ModelSpec& m, const Strategy& s) {
  const double h = static_cast<double>(m.hidden), nv = VirtualTokens(s);
  if (s.method == FtMethod::kPromptTuning) return nv * h;
  if (s.method == FtMethod::kPTuning) return nv * h + 3 * (h * h + h);
  return 0;
}

}  // namespace

void ApplyMethodToParams(const ModelSpec& m, const Strategy& s, const graph::StageLayers& sl,
                         std::vector<graph::ParamGroup>& groups) {
  const double w_b = WeightBytes(s.dtype);
  if (s.method == FtMethod::kFreeze) SplitFrozenLayers(m, s, sl, groups);
  const bool embeddings = EmbeddingsTrained(s);
  for (graph::ParamGroup& g : groups) {
    const std::string_view name = g.name;
    if (name == "embedding" || name == "head") g.trainable = embeddings;
    // A reward model's scalar head (h weights) is new and always trained.
    if (name == "head" && s.stage == TrainStage::kRm)
      g.count = static_cast<double>(m.hidden) * (m.layernorm ? 3 : 2), g.trainable = true;
    if (IsPeftMethod(s.method) && (name == "layers" || name == "experts" || name == "mtp")) {
      g.trainable = false;
      if (s.method == FtMethod::kQlora) g.bytes_per_param = kNf4BytesPerParam;
    }
  }
  // PEFT trains the embedding and output layer as modules_to_save: ModulesToSaveWrapper keeps
  // the original module, frozen, for the adapter-disabled model beside the trained deep copy
  // (peft/utils/other.py), so each is held twice.
  if (IsPeftMethod(s.method) && embeddings) {
    std::vector<graph::ParamGroup> originals;
    for (const graph::ParamGroup& g : groups)
      if (std::string_view(g.name) == "embedding" || std::string_view(g.name) == "head")
        originals.push_back({"saved_module_original", g.count, g.expert, false, g.bytes_per_param});
    groups.insert(groups.end(), originals.begin(), originals.end());
  }
  if (IsPeftMethod(s.method)) {
    const double n = sl.dense * LayerAdapterParams(m, s, false) +
                     sl.moe * LayerAdapterParams(m, s, true) +
                     (sl.first ? FirstStageAdapterParams(m, s) : 0);
    if (n > 0) groups.push_back({"adapters", n, false, true, w_b});
  }
  // A full-parameter policy needs a separate frozen reference model (TRL DPOTrainer creates
  // one); a PEFT policy's reference is its base with the adapters disabled.
  if (HasReferenceModel(s.stage) && !IsPeftMethod(s.method)) {
    double dense = 0, expert = 0;
    for (const graph::ParamGroup& g : groups) (g.expert ? expert : dense) += g.count;
    if (dense > 0) groups.push_back({"reference", dense, false, false, w_b});
    if (expert > 0) groups.push_back({"reference_experts", expert, true, false, w_b});
  }
}

}  // namespace trainsim::finetune

// EstimateUncertainty(): the band of one prediction, from the embedded data/uncertainty.json.
#include <map>
#include <nlohmann/json.hpp>

#include "spec/embedded.h"
#include "trainsim/finetune.h"
#include "validate/regime.h"

namespace trainsim {
namespace {

using detail::kGenerationCount;
using detail::kSizeBuckets;

// The table, and for every combination of features the index of the band that applies (the
// first of RegimeNames present in the table), resolved once so that a prediction allocates
// nothing.
struct Table {
  std::vector<RegimeBand> bands;
  // ...[kind]: 0 pre-training, 1 fine-tuning, 2 RL.
  int resolved[kGenerationCount][2][2][kSizeBuckets][3] = {};
  int uncalibrated = -1;       // index of the "uncalibrated" band; -1 = none in the table
  int stack_inferred = -1;     // index of the "stack-inferred" band; -1 = none in the table
  int stack_inferred_ft = -1;  // of "stack-inferred/finetune"
  bool ok = false;
};

std::vector<RegimeBand> ParseBands(std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  std::vector<RegimeBand> out;
  if (!j.is_object() || !j.contains("regimes") || !j["regimes"].is_array()) return out;
  for (const nlohmann::json& r : j["regimes"]) {
    if (!r.is_object()) return {};
    RegimeBand b;
    b.regime = r.value("regime", "");
    b.cases = r.value("cases", 0);
    b.error_q10 = r.value("error_q10", 0.0);
    b.error_q90 = r.value("error_q90", 0.0);
    b.rel_below = r.value("rel_below", 0.0);
    b.rel_above = r.value("rel_above", 0.0);
    if (b.regime.empty() || !(b.rel_below >= 0 && b.rel_below < 1) || !(b.rel_above >= 0))
      return {};
    out.push_back(std::move(b));
  }
  return out;
}

Table LoadTable() {
  Table t;
  const std::string_view* text = detail::FindEmbeddedFile("uncertainty.json");
  if (!text) return t;
  t.bands = ParseBands(*text);
  std::map<std::string, int> index;
  for (size_t i = 0; i < t.bands.size(); ++i) index[t.bands[i].regime] = static_cast<int>(i);
  if (!index.count("all")) return t;
  if (auto u = index.find(kUncalibratedRegime); u != index.end()) t.uncalibrated = u->second;
  if (auto u = index.find(kStackInferredRegime); u != index.end()) t.stack_inferred = u->second;
  if (auto u = index.find(kStackInferredFinetuneRegime); u != index.end())
    t.stack_inferred_ft = u->second;
  for (int g = 0; g < kGenerationCount; ++g)
    for (int multi = 0; multi < 2; ++multi)
      for (int moe = 0; moe < 2; ++moe)
        for (int size = 0; size < kSizeBuckets; ++size)
          for (int kind = 0; kind < 3; ++kind) {
            const RegimeFeatures f{
                detail::kGenerationNames[g], multi == 1, moe == 1, size, kind == 1, kind == 2};
            for (const std::string& name : RegimeNames(f)) {
              auto it = index.find(name);
              if (it == index.end()) continue;
              t.resolved[g][multi][moe][size][kind] = it->second;
              break;
            }
          }
  t.ok = true;
  return t;
}

const Table& GetTable() {
  static const Table table = LoadTable();
  return table;
}

}  // namespace

void EstimateUncertainty(StepReport& r, const ModelSpec& m, const HardwareSpec& hw,
                         const Strategy& s) {
  const Table& t = GetTable();
  r.step_time_s_low = r.step_time_s_high = r.step_time_s;
  r.uncertainty = StepUncertainty{};
  r.uncertainty.uncalibrated_hardware = !hw.calibrated;
  if (!t.ok) return;
  const RegimeFeatures f = detail::RegimeOfRun(r.params_total, m.is_moe(), hw, s);
  const RegimeBand* b = &t.bands[t.resolved[detail::GenerationIndex(f.generation)][f.multi_node]
                                           [f.moe][f.size_bucket][f.rl ? 2 : f.finetune]];
  if (!hw.calibrated && t.uncalibrated >= 0) {
    const RegimeBand& u = t.bands[t.uncalibrated];
    if (u.rel_below + u.rel_above > b->rel_below + b->rel_above) b = &u;
  }
  r.uncertainty.regime = b->regime;
  r.uncertainty.rel_below = b->rel_below;
  r.uncertainty.rel_above = b->rel_above;
  r.uncertainty.cases = b->cases;
  r.step_time_s_low = r.step_time_s * (1 - b->rel_below);
  r.step_time_s_high = r.step_time_s * (1 + b->rel_above);
}

void WidenForInferredStack(StepReport& r, const Strategy& s) {
  r.uncertainty.stack_inferred = true;
  const Table& t = GetTable();
  if (!t.ok || IsRlStage(s.stage)) return;
  const bool finetune = s.stage != TrainStage::kPretrain || s.method != FtMethod::kFull;
  const int index = finetune && t.stack_inferred_ft >= 0 ? t.stack_inferred_ft : t.stack_inferred;
  if (index < 0) return;
  const RegimeBand& b = t.bands[index];
  if (b.rel_below + b.rel_above <= r.uncertainty.rel_below + r.uncertainty.rel_above) return;
  r.uncertainty.regime = b.regime;
  r.uncertainty.rel_below = b.rel_below;
  r.uncertainty.rel_above = b.rel_above;
  r.uncertainty.cases = b.cases;
  r.step_time_s_low = r.step_time_s * (1 - b.rel_below);
  r.step_time_s_high = r.step_time_s * (1 + b.rel_above);
}

}  // namespace trainsim

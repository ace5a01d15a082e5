#include "trainsim/front_end.h"

#include <vector>

#include "trainsim/batch_default.h"

namespace trainsim {

const StrategyField* FindStrategyFieldByName(std::string_view name) {
  if (const StrategyField* f = FindStrategyField(name)) return f;
  for (const StrategyField& f : StrategySchema()) {
    std::string_view flag = f.flag;
    if (flag.size() < 3 || flag.substr(0, 2) != "--") continue;
    flag.remove_prefix(2);
    if (flag.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < flag.size() && same; ++i)
      same = flag[i] == name[i] || (flag[i] == '-' && name[i] == '_');
    if (same) return &f;
  }
  return nullptr;
}

Result<Strategy> FinishStrategy(Strategy s, const std::map<std::string, std::string>& settings,
                                StrategyKeys& given) {
  if (Status st = ApplyStrategySettings(s, settings, /*name_flags=*/true); !st.ok()) return st;
  for (const auto& [key, value] : settings) given.insert(key);
  // A layer count acts only under full recompute (NormaliseStrategy drops it otherwise): refused
  // rather than dropped without a word.
  if (settings.count("recompute_layer_num") && s.recompute != Recompute::kFull)
    return Status::Invalid("--recompute-layers", "acts only with --recompute full (recompute is " +
                                                     std::string(RecomputeName(s.recompute)) + ")");
  ApplyDefaultBatch(s);  // 8 micro-batches per DP rank when neither gbs nor the count is set
  return NormaliseStrategy(s);
}

Result<StepReport> SimulateWithAssumptions(const ModelSpec& model, const HardwareSpec& hw,
                                           const Strategy& strategy, const StrategyKeys& given,
                                           const SimOptions& options) {
  auto rep = Simulate(model, hw, strategy, options);
  if (!rep.ok()) return rep;
  std::vector<Assumption> assumed = AssumedStrategyDefaults(strategy, given);
  rep.value().assumed.insert(rep.value().assumed.begin(), assumed.begin(), assumed.end());
  return rep;
}

}  // namespace trainsim

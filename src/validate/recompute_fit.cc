// Choosing the recompute policy of a run from memory (validate's `recompute: null`).
#include "validate/recompute_fit.h"

#include <algorithm>

#include "validate/case_strategy.h"

namespace trainsim::detail {
namespace {

// Many probes per case: without the assumption texts (the caller adds the split once).
Result<StepReport> Probe(const ModelSpec& m, const HardwareSpec& hw, const Strategy& s) {
  SimOptions quiet;
  quiet.assumptions = false;
  return Simulate(m, hw, s, quiet);
}

// Full recompute of the fewest layers per stage that fits (memory falls as N grows).
Result<StepReport> FewestFullLayers(const ModelSpec& m, const HardwareSpec& hw, Strategy& s) {
  const int per_stage = std::max(1, m.layers / s.pp);
  int lo = 1, hi = per_stage;
  s.recompute_layers = hi;
  Result<StepReport> rep = Probe(m, hw, s);
  if (!rep.ok() || !rep->fits) return rep;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    s.recompute_layers = mid;
    auto probe = Probe(m, hw, s);
    if (probe.ok() && probe->fits) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  s.recompute_layers = hi == per_stage ? -1 : hi;
  return Probe(m, hw, s);
}

}  // namespace

Result<StepReport> SimulateLightestFittingRecompute(const ModelSpec& m, const HardwareSpec& hw,
                                                    Strategy& s, Assumption* assumption) {
  const struct {
    Recompute policy;
    int modules;
  } ladder[] = {{Recompute::kNone, 0},
                {Recompute::kSelective, kRecomputeCoreAttn},
                {Recompute::kSelective,
                 kRecomputeCoreAttn | kRecomputeLayerNorm | kRecomputeMlaUpProj | kRecomputeMoeAct},
                {Recompute::kFull, 0}};
  Result<StepReport> rep = Status::Invalid("not run");
  for (const auto& step : ladder) {
    s.recompute = step.policy;
    if (step.modules) s.recompute_modules = step.modules;
    rep = step.policy == Recompute::kFull ? FewestFullLayers(m, hw, s) : Probe(m, hw, s);
    if (!rep.ok() || rep->fits) break;
  }
  if (assumption && rep.ok()) {
    assumption->field = "recompute";
    assumption->value = RecomputeText(s);
    assumption->why = s.recompute == Recompute::kNone
                          ? "not in the case: none, the frameworks' default; the step fits in HBM"
                      : rep->fits ? "not in the case: without it the step would not fit in HBM; "
                                    "the lightest policy that fits"
                                  : "not in the case: no policy fits in HBM; the heaviest taken";
  }
  return rep;
}

}  // namespace trainsim::detail

// Simulate(): spec -> graph -> cost + memory -> schedule -> report, for one representative rank
// per pipeline stage, as a sequence of named steps (src/sim/step.h). The cost of a 16,384-GPU
// job equals that of an 8-GPU job.
#include "finetune/method.h"
#include "sim/step.h"
#include "spec/pipeline_split.h"
#include "trainsim/trainsim.h"
#include "trainsim/uncertainty.h"

namespace trainsim {

namespace {

// Post-training phases of the step: the reference / KL forwards ("scoring") on the critical
// stage, and the rest ("training"). Empty for stages without scoring passes.
void FillPhases(const sim::StepContext& c, const std::vector<sim::StageCost>& costs,
                const sim::PipelineResult& pipe, StepReport& r) {
  const double scoring = c.micro_batches * costs[pipe.critical_rank].scoring_s;
  if (scoring <= 0 || r.step_time_s <= 0) return;
  r.phases.push_back({"scoring", scoring, scoring / r.step_time_s});
  r.phases.push_back({"training", r.step_time_s - scoring, 1 - scoring / r.step_time_s});
}

}  // namespace

Result<StepReport> Simulate(const ModelSpec& m, const HardwareSpec& hw, const Strategy& given,
                            const SimOptions& opt) {
  if (Status st = finetune::CheckWorkload(m, given); !st.ok()) return st;
  // What one step runs: pairs as two sequences, virtual tokens, packed rows (src/finetune).
  const Strategy s = finetune::EffectiveStrategy(given);
  if (Status st = sim::CheckInputs(m, hw, s); !st.ok()) return st;
  const sim::StepContext c = sim::MakeContext(m, hw, s);
  StepReport r;
  const sim::LayerKindCosts kinds = sim::CostLayerKinds(c, opt.detail ? &r.layers : nullptr);
  const std::vector<sim::StagePlan> plans = sim::PlanStages(c);
  std::vector<sim::StageCost> costs;
  costs.reserve(plans.size());
  for (const sim::StagePlan& plan : plans) costs.push_back(sim::CostStage(c, plan, kinds));

  const sim::PipelineResult pipe = sim::RunPipeline(c, costs);
  const sim::DataParallelTime dp = sim::DataParallelComm(c, plans, costs);
  const double optimizer_s = sim::OptimizerTime(c, plans, kinds);
  r.step_overhead_s = hw.eff.step_overhead_s;
  r.step_time_s = pipe.time.total_s + dp.exposed_s + optimizer_s + r.step_overhead_s;
  r.time = sim::Breakdown(c, costs, pipe, dp.exposed_s, optimizer_s);

  r.stages.resize(plans.size());
  sim::FillStageTimes(c, plans, costs, dp, r.stages);
  r.fits = sim::StageMemories(c, plans, costs, kinds, r.stages);
  for (const StageReport& st : r.stages)
    r.peak_mem_bytes = std::max(r.peak_mem_bytes, st.peak_mem_bytes);
  sim::FillThroughput(c, costs, r);
  FillPhases(c, costs, pipe, r);
  EstimateUncertainty(r, m, hw, s);
  if (opt.assumptions)
    if (auto split = detail::PipelineSplitAssumption(given, m))
      r.assumed.push_back(std::move(*split));
  return r;
}

}  // namespace trainsim

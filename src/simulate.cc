// Simulate(): spec -> graph -> cost + memory -> schedule -> report, for one representative rank
// per pipeline stage, as a sequence of named steps (src/sim/step.h). The cost of a 16,384-GPU
// job equals that of an 8-GPU job.
#include "sim/step.h"
#include "spec/pipeline_split.h"
#include "trainsim/trainsim.h"
#include "trainsim/uncertainty.h"

namespace trainsim {

Result<StepReport> Simulate(const ModelSpec& m, const HardwareSpec& hw, const Strategy& s,
                            const SimOptions& opt) {
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
  EstimateUncertainty(r, m, hw, s);
  if (opt.assumptions)
    if (auto split = detail::PipelineSplitAssumption(s, m)) r.assumed.push_back(std::move(*split));
  return r;
}

}  // namespace trainsim

// Simulate(): spec -> graph -> cost + memory -> schedule -> report, for one representative rank
// per pipeline stage, as a sequence of named steps (src/sim/step.h). The cost of a 16,384-GPU
// job equals that of an 8-GPU job.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "finetune/method.h"
#include "rl/rl.h"
#include "sim/step.h"
#include "spec/hardware_default.h"
#include "spec/pipeline_split.h"
#include "spec/workload_bounds.h"
#include "trainsim/trainsim.h"
#include "trainsim/uncertainty.h"
#include "util/units.h"
#include "workload_rules.h"

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

// The memory fields of a stage report.
void CopyMemory(const StageReport& from, StageReport& to) {
  to.params = from.params;
  to.peak_mem_bytes = from.peak_mem_bytes;
  to.reserved_bytes = from.reserved_bytes;
  to.weight_bytes = from.weight_bytes;
  to.grad_bytes = from.grad_bytes;
  to.optimizer_bytes = from.optimizer_bytes;
  to.activation_bytes = from.activation_bytes;
  to.inflight_micro_batches = from.inflight_micro_batches;
  to.transient_bytes = from.transient_bytes;
  to.overhead_bytes = from.overhead_bytes;
  to.static_bytes = from.static_bytes;
  to.mirror_static_bytes = from.mirror_static_bytes;
  to.activation_bytes_per_mb = from.activation_bytes_per_mb;
}

Result<StepReport> SimulateStep(const ModelSpec& m, const HardwareSpec& hw, const Strategy& given,
                                const SimOptions& opt);

// A stack that compiles or hand-fuses its element-wise work (Execution::fused_elementwise)
// runs its memory-bound kernels at the hardware's measured rate for such kernels
// (Efficiency::mem_fused) rather than the `mem` fitted on stacks with more, unfused kernels
// than the graph holds (docs/MODEL.md, "Memory-bound kernels"). Null when nothing changes.
std::optional<HardwareSpec> FusedElementwiseHardware(const HardwareSpec& hw, const Strategy& s) {
  if (!s.exec.fused_elementwise || hw.eff.mem_fused <= 0) return std::nullopt;
  HardwareSpec fused = hw;
  fused.eff.mem = hw.eff.mem_fused;
  return fused;
}

}  // namespace

Status CheckWorkloadRules(const ModelSpec& m, const Strategy& s) {
  // The RL and fine-tuning rules first: they name the sum or product (group_size x gbs,
  // seq_len + virtual_tokens) where a term alone would pass the plain bounds.
  if (Status st = rl::CheckRlWorkload(s); !st.ok()) return st;
  if (Status st = finetune::CheckWorkload(m, s); !st.ok()) return st;
  return detail::CheckWorkloadBounds(s);
}

Result<StepReport> Simulate(const ModelSpec& m, const HardwareSpec& hw, const Strategy& given,
                            const SimOptions& opt) {
  if (Status st = CheckWorkloadRules(m, given); !st.ok()) return st;
  if (IsRlStage(given.stage)) return rl::SimulateRlStep(m, hw, given, opt);
  const std::optional<HardwareSpec> fused = FusedElementwiseHardware(hw, given);
  const HardwareSpec& h = fused ? *fused : hw;
  Result<StepReport> r = SimulateStep(m, h, given, opt);
  if (!r.ok() || given.max_seq <= given.seq) return r;
  // Dynamically padded batches: the time at seq, the memory peak at the longest sample.
  Strategy longest = given;
  longest.seq = given.max_seq;
  Result<StepReport> mem = SimulateStep(m, h, longest, opt);
  if (!mem.ok()) return mem.status();
  StepReport out = std::move(r).value();
  for (size_t k = 0; k < out.stages.size(); ++k) CopyMemory(mem->stages[k], out.stages[k]);
  out.peak_mem_bytes = mem->peak_mem_bytes;
  out.fits = mem->fits;
  // The host bytes at the longest sample (offloaded activations grow with it), the host-link
  // copies at seq.
  const HostMemReport at_seq = out.host_mem;
  out.host_mem = mem->host_mem;
  out.host_mem.link_s = at_seq.link_s;
  out.host_mem.link_share = at_seq.link_share;
  sim::HostMemVerdict(h, out);
  return out;
}

namespace {

Result<StepReport> SimulateStep(const ModelSpec& m, const HardwareSpec& hw, const Strategy& given,
                                const SimOptions& opt) {
  // What one step runs: pairs as two sequences, virtual tokens, packed rows (src/finetune).
  Strategy s = finetune::EffectiveStrategy(given);
  // A pipeline layout implies vpp (and the interleaved schedule): the normalised form, which
  // simulates the same.
  if (!s.pipeline_layout.empty()) s = NormaliseStrategy(std::move(s));
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
  sim::HostMemory(c, plans, costs, kinds, r);
  FillPhases(c, costs, pipe, r);
  EstimateUncertainty(r, m, hw, s);
  if (opt.assumptions)
    if (auto split = detail::PipelineSplitAssumption(given, m))
      r.assumed.push_back(std::move(*split));
  if (hw.power_cap_clock < 1)
    r.assumed.push_back(
        {"tdp_w", fmt::format("{:g}", hw.tdp_w),
         fmt::format("power cap below the rated {:g} W: tensor peaks at {:.3f} of rated "
                     "(clock ~ power^0.30, H100 SXM 700 W vs NVL 400 W datasheets)",
                     hw.rated_tdp_w, hw.power_cap_clock)});
  if (detail::HardwareFieldDefaulted(hw, "sm_count"))
    r.assumed.push_back({"sm_count", std::to_string(hw.sm_count),
                         "trainsim's default (H100 SXM5's 132 SMs): the hardware file gives none; "
                         "the GEMM and attention wave quantization divide by it"});
  // Keys of the model's file that would change the architecture and that were not read (an HF
  // config.json's vision_config, lm_head_bias, ...; issue 11).
  for (const IgnoredModelKey& k : m.ignored_keys) r.ignored.push_back({k.key, k.value, k.why});
  if (detail::HardwareFieldDefaulted(hw, "host_link_gbps_per_dir"))
    r.assumed.push_back({"host_link_gbps_per_dir",
                         fmt::format("{:g}", hw.host_link_bw_bytes_per_s / 1e9),
                         "trainsim's default host link (PCIe 4.0 x16, 32 GB/s a direction): the "
                         "hardware file gives none; it bounds the host-device copies (offloads)"});
  if (auto host = sim::HostMemAssumption(hw, r)) r.assumed.push_back(std::move(*host));
  return r;
}

}  // namespace
}  // namespace trainsim

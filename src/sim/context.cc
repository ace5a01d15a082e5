// The inputs of a step: checks and the facts every later step shares.
#include <string>

#include "sim/step.h"
#include "trainsim/hardware_figures.h"

namespace trainsim::sim {

Status CheckInputs(const ModelSpec& m, const HardwareSpec& hw, const Strategy& s) {
  if (Status st = ValidateModel(m); !st.ok()) return st;
  if (Status st = ValidateStrategy(s, m); !st.ok()) return st;
  if (Status st = ValidateHardware(hw); !st.ok()) return st.WithContext("hardware " + hw.id);
  if (Status st = CheckPeakSourced(hw, s.dtype); !st.ok()) return st.WithContext("hardware");
  if (hw.PeakFlops(s.dtype) <= 0)
    return Status::Invalid("dtype: " + hw.id + " has no " + std::string(DTypeName(s.dtype)) +
                           " tensor-core throughput");
  return Status::Ok();
}

StepContext MakeContext(const ModelSpec& m, const HardwareSpec& hw, const Strategy& s) {
  StepContext c(m, hw, s);
  c.p = s.pp;
  c.v = s.vpp;
  c.sched = (s.schedule == PipelineSchedule::kInterleaved && s.vpp == 1) ? PipelineSchedule::k1F1B
                                                                         : s.schedule;
  c.micro_batches = s.num_micro_batches();
  c.pl = PlaceGroups(s, hw.scaleup_domain);
  c.shape = graph::MakeShape(m, s);
  // One activation (or its gradient) of a micro-batch crosses a stage boundary in 16 bits.
  c.p2p_s = cost::CollectiveTime(hw, graph::Coll::kP2P, c.pl.pp,
                                 c.shape.tokens_sp * static_cast<double>(m.hidden) * 2);
  c.layer_overhead_s = hw.eff.layer_overhead_us * 1e-6;
  c.host_issue_s = s.exec.host_issue_us_per_kernel * 1e-6;
  c.zero3_fetch_s = s.zero == 3 ? s.exec.zero3_fetch_us * 1e-6 : 0;
  c.full_recompute = s.recompute == Recompute::kFull;
  for (int i = 0; i < m.layers; ++i) (m.layer_is_moe(i) ? c.has_moe : c.has_dense) = true;
  c.grad_bytes_per_param = s.grad_bytes_per_param();
  return c;
}

}  // namespace trainsim::sim

// Host RAM and the host link of a plan (issue 12: "offload and paged optimizers are bounded by
// host memory and the host link"): what the offloads keep on the host, per node, against the
// server's memory, and the share of the step the host-link copies leave exposed
// (docs/FINETUNE.md, "Host memory").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/step.h"
#include "spec/hardware_default.h"
#include "util/units.h"

namespace trainsim::sim {
namespace {

// The host link limits the step when its exposed copies take at least this share of it: a faster
// link (or less offload) would then shorten the step more than anything else could.
constexpr double kLinkBoundShare = 0.5;

}  // namespace

void HostMemory(const StepContext& c, const std::vector<StagePlan>& plans,
                const std::vector<StageCost>& costs, const LayerKindCosts& kinds, StepReport& r) {
  HostMemReport h = HostBytesPerGpu(c, plans, costs, kinds);
  // The job's GPUs on one server share its host memory (a job smaller than a server has all its
  // GPUs on one).
  const int gpus = std::max(1, std::min(c.s.world_size, detail::ServerGpus(c.hw)));
  for (double* x : {&h.optimizer_bytes, &h.grad_bytes, &h.param_bytes, &h.activation_bytes,
                    &h.paged_bytes, &h.pinned_bytes, &h.bytes_per_node})
    *x *= gpus;
  h.gpus_per_node = gpus;
  h.capacity_bytes_per_node = detail::HostMemBytesPerNode(c.hw);
  h.link_s =
      r.time.exposed_offload_s + std::min(r.time.optimizer_s, OptimizerHostLinkTime(c, plans));
  h.link_share = r.step_time_s > 0 ? h.link_s / r.step_time_s : 0;
  r.host_mem = h;
  HostMemVerdict(c.hw, r);
}

void HostMemVerdict(const HardwareSpec& hw, StepReport& r) {
  HostMemReport& h = r.host_mem;
  h.fits = h.bytes_per_node <= h.capacity_bytes_per_node;
  h.link_bound = h.link_s > 0 && h.link_share >= kLinkBoundShare;
  h.reason.clear();
  if (!h.fits) {
    r.fits = false;
    h.reason = fmt::format(
        "host RAM: {:.1f} GiB per node on the host{} ({} over {} GPUs) exceeds the node's "
        "{:.0f} GiB{}",
        units::BytesToGiB(h.bytes_per_node), h.phase.empty() ? "" : " during " + h.phase,
        HostMemParts(h), h.gpus_per_node, units::BytesToGiB(h.capacity_bytes_per_node),
        hw.host_mem_bytes > 0 ? "" : " (assumed: twice its HBM)");
  }
  if (h.link_bound)
    h.reason += fmt::format(
        "{}host link: offload copies leave {:.3g} s of the {:.3g} s step exposed ({:.0f} %) at "
        "{:g} GB/s a direction per GPU",
        h.reason.empty() ? "" : "; ", h.link_s, r.step_time_s, 100 * h.link_share,
        hw.host_link_bw_bytes_per_s / 1e9);
}

std::optional<Assumption> HostMemAssumption(const HardwareSpec& hw, const StepReport& r) {
  if (r.host_mem.bytes_per_node <= 0 || hw.host_mem_bytes > 0) return std::nullopt;
  return Assumption{
      "host_mem_gib",
      fmt::format("{:g}", std::round(r.host_mem.capacity_bytes_per_node / units::kGiB)),
      fmt::format("trainsim's default host memory per node, twice the HBM of its {} GPUs: the "
                  "hardware file gives no host_mem_gib; it bounds what the plan keeps on the "
                  "host (offload, paged optimizer states, an RL step's offloaded trainer)",
                  detail::ServerGpus(hw))};
}

}  // namespace trainsim::sim

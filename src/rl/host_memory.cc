// Host RAM of an RL step (issue 12: "offload and paged optimizers are bounded by host memory";
// docs/FINETUNE.md, "RL" and "Host memory"): what each phase keeps in the memory of one server,
// the peak against the server's capacity, in the host_mem block the other stages fill.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "rl/rl.h"
#include "sim/step.h"
#include "spec/hardware_default.h"
#include "util/units.h"

namespace trainsim::rl {
namespace {

// Ray, which runs NeMo RL's and verl's workers, reserves 30 % of a node's available memory for
// its object store by default (Ray docs, "Memory Management": "By default, when starting an
// instance, Ray reserves 30% of available memory"): host bytes above the other 70 % leave the
// object store, the OS and the data loaders less than that.
constexpr double kRayObjectStoreShare = 0.3;

// The trainer's states resident in HBM on the GPU of the stage with the most (the bytes the
// colocated offload moves, WeightSync's train_static), per GPU.
struct TrainerShard {
  double weights = 0, grads = 0, optimizer = 0;
};
TrainerShard Shard(const StepReport& tr) {
  TrainerShard out;
  double most = -1;
  for (const StageReport& st : tr.stages) {
    if (st.static_bytes <= most) continue;
    most = st.static_bytes;
    out = {st.weight_bytes, st.grad_bytes, st.optimizer_bytes};
  }
  return out;
}

// The largest weight shard of a training GPU (what ReferenceSwap moves), per GPU.
double WeightShard(const StepReport& tr) {
  double w = 0;
  for (const StageReport& st : tr.stages) w = std::max(w, st.weight_bytes);
  return w;
}

HostMemReport WithTotal(HostMemReport h) {
  h.bytes_per_node = h.optimizer_bytes + h.grad_bytes + h.param_bytes + h.activation_bytes +
                     h.paged_bytes + h.reference_bytes + h.engine_bytes;
  return h;
}

}  // namespace

HostMemReport RlHostBytes(const RlPlan& p, const Generation& g, const StepReport& tr, int gpus) {
  const double n = gpus;
  // Every phase: the training plan's own host bytes (its offloads, per node, counted in every
  // phase) and, with a KL term, the reference policy's weights, kept on the host in pinned
  // memory for the whole run (NeMo RL policy workers, init_reference_model:
  // reference_model_state_dict = get_cpu_state_dict(..., pin_memory=True)).
  HostMemReport base = tr.host_mem;
  base.gpus_per_node = gpus;
  base.reference_bytes = p.kl_reference ? n * WeightShard(tr) : 0;
  base.pinned_bytes += base.reference_bytes;
  // Generation, colocated: the trainer's weights, gradients and optimizer states (the critic's
  // too for PPO) wait on the host while vLLM generates (NeMo RL offload_before_refit moves the
  // optimizer states, offload_after_refit the model with its gradient buffers; verl
  // actor_rollout_ref.actor.fsdp_config param_offload / optimizer_offload), in pageable memory
  // (Tensor.to("cpu")). A separate trainer keeps them in HBM (NeMo RL offloads only when
  // colocated).
  HostMemReport gen = base;
  gen.phase = "generation";
  if (!p.separate) {
    const TrainerShard s = Shard(tr);
    const double models = n * (1 + p.critic);
    gen.param_bytes += models * s.weights;
    gen.grad_bytes += models * s.grads;
    gen.optimizer_bytes += models * s.optimizer;
  }
  // Scoring and training, colocated: the sleeping engine's weight shard is backed up in pinned
  // host memory (vLLM sleep level 1, "the model weights are backed up in CPU memory"; NeMo RL
  // VllmGenerationWorker.sleep and verl's VLLM_SLEEP_LEVEL = 1). The reference's forward swaps
  // the policy's weights out to pinned host memory meanwhile (NeMo RL use_reference_model);
  // verl's reference is a module of its own and the policy stays in HBM (reference_swap false).
  HostMemReport train = base;
  train.phase = "training";
  if (!p.separate) {
    train.engine_bytes = n * g.weight_bytes;
    train.pinned_bytes += train.engine_bytes;
  }
  if (p.kl_reference && p.reference_swap) {
    const double policy = n * WeightShard(tr);
    train.param_bytes += policy;
    train.pinned_bytes += policy;
    train.phase = "scoring";
  }
  gen = WithTotal(gen);
  train = WithTotal(train);
  HostMemReport out = !p.separate && gen.bytes_per_node > train.bytes_per_node ? gen : train;
  if (out.bytes_per_node <= 0) out.phase.clear();
  return out;
}

void RlHostMemory(const HardwareSpec& hw, const Strategy& s, const RlPlan& p, const Generation& g,
                  const StepReport& tr, int trains, StepReport& r) {
  // The job's training GPUs on one server share its host (sim::HostMemory's rule); a separate
  // pool's hosts keep nothing the model counts (vLLM does not sleep there).
  const int gpus = std::max(1, std::min(s.world_size, detail::ServerGpus(hw)));
  HostMemReport h = RlHostBytes(p, g, tr, gpus);
  h.capacity_bytes_per_node = detail::HostMemBytesPerNode(hw);
  // The training passes' host-link copies, per RL step.
  h.link_s = tr.host_mem.link_s * p.updates * trains;
  h.link_share = r.step_time_s > 0 ? h.link_s / r.step_time_s : 0;
  r.host_mem = h;
  sim::HostMemVerdict(hw, r);
  HostMemReport& v = r.host_mem;
  if (v.fits && v.bytes_per_node > (1 - kRayObjectStoreShare) * v.capacity_bytes_per_node)
    v.reason += fmt::format(
        "{}host RAM: {:.1f} of the node's {:.0f} GiB ({:.0f} %) during {} ({}), above the "
        "{:.0f} % that Ray's object store leaves (it reserves {:.0f} % of the memory by default)",
        v.reason.empty() ? "" : "; ", units::BytesToGiB(v.bytes_per_node),
        units::BytesToGiB(v.capacity_bytes_per_node),
        100 * v.bytes_per_node / v.capacity_bytes_per_node, v.phase, HostMemParts(v),
        100 * (1 - kRayObjectStoreShare), 100 * kRayObjectStoreShare);
  if (auto a = sim::HostMemAssumption(hw, r)) {
    const bool listed = std::any_of(r.assumed.begin(), r.assumed.end(),
                                    [&a](const Assumption& x) { return x.field == a->field; });
    if (!listed) r.assumed.push_back(std::move(*a));
  }
}

}  // namespace trainsim::rl

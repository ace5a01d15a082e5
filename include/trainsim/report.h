// StepReport: the prediction for one optimizer step, with the breakdowns behind every total.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim {

// One op of one layer, per micro-batch on one rank.
struct OpReport {
  std::string name;
  std::string kind;  // gemm | attention | memory | comm
  double fwd_s = 0;  // forward time (for comm: the collective's time)
  double bwd_s = 0;  // backward time (excluding recompute)
  double fwd_flops = 0;
  double bytes = 0;     // HBM traffic (memory ops) or message bytes (comm)
  bool exposed = true;  // comm on the critical path
};

struct LayerReport {
  std::string kind;             // dense | moe
  int count = 0;                // layers of this kind in the model
  double fwd_s = 0;             // per micro-batch, incl. exposed comm
  double bwd_s = 0;             // per micro-batch, incl. exposed comm, excl. recompute
  double recompute_s = 0;       // per micro-batch
  double activation_bytes = 0;  // saved for backward, per micro-batch
  std::vector<OpReport> ops;
};

struct StageReport {
  int index = 0;
  int layers = 0;     // transformer layers on this stage (all virtual chunks)
  double params = 0;  // parameters held by one rank of this stage (before ZeRO sharding)
  double weight_bytes = 0;
  double grad_bytes = 0;
  double optimizer_bytes = 0;
  double activation_bytes = 0;  // saved activations of all in-flight micro-batches
  double inflight_micro_batches = 0;
  double transient_bytes = 0;  // short-lived peak inside a layer / the loss
  double peak_mem_bytes = 0;   // peak allocated bytes (what torch.cuda.max_memory_allocated reads)
  double overhead_bytes = 0;   // CUDA context, NCCL buffers, allocator fragmentation
  double reserved_bytes = 0;   // peak_mem_bytes + overhead_bytes: what must fit in HBM
  double fwd_per_mb_s = 0;     // forward of one micro-batch on this stage (all its chunks)
  double bwd_per_mb_s = 0;     // backward of one micro-batch, incl. recompute
  double bwd_weight_per_mb_s = 0;  // of bwd_per_mb_s: weight-gradient GEMMs (zero-bubble W)
  double recompute_per_mb_s = 0;   // of bwd_per_mb_s: recomputation
  double p2p_s = 0;                // one activation (or gradient) transfer to the next stage
  double dp_grad_comm_s = 0;      // DP gradient all-reduce / reduce-scatter of this stage, per step
  double dp_param_gather_s = 0;   // ZeRO parameter all-gather of this stage, per step (zero 1-2)
  double fsdp_comm_per_mb_s = 0;  // ZeRO-3/FSDP gathers + reduce-scatter per micro-batch
  double fsdp_gather_per_mb_s = 0;     // of which one parameter all-gather (run in F and in B)
  double fsdp_reduce_per_mb_s = 0;     // of which the gradient reduce-scatter
  double dp_grad_comm_bytes = 0;       // message bytes of the DP gradient collective, per step
  double dp_gather_comm_bytes = 0;     // message bytes of the parameter all-gather, per step
  double ep_fwd_per_mb_s = 0;          // of fwd_per_mb_s: exposed EP all-to-all
  double ep_bwd_per_mb_s = 0;          // of bwd_per_mb_s: exposed EP all-to-all
  double fwd_flops_per_mb = 0;         // on one rank of this stage
  double bwd_flops_per_mb = 0;         // incl. recompute and weight gradients
  double wgrad_flops_per_mb = 0;       // of bwd_flops_per_mb: weight-gradient GEMMs
  double static_bytes = 0;             // weights + grads + optimizer states (resident all step)
  double mirror_static_bytes = 0;      // DualPipe: the second model copy (stage p-1-k's states)
  double activation_bytes_per_mb = 0;  // saved activations of one micro-batch (all chunks)
};

// Where the step time goes, along the critical pipeline rank (the slowest stage; under DualPipe
// the slowest pair of mirrored stages). Every entry except recompute_s (a part of compute_s)
// adds up to StepReport::step_time_s.
struct TimeBreakdown {
  double compute_s = 0;    // GEMM, attention and memory-bound kernels on the critical path
  double recompute_s = 0;  // of which recomputation
  double exposed_tp_comm_s = 0;
  double exposed_cp_comm_s = 0;
  double exposed_ep_comm_s = 0;
  double pp_comm_s = 0;
  double bubble_s = 0;
  double exposed_dp_comm_s = 0;  // DP / ZeRO / FSDP collectives not hidden behind compute
  double exposed_offload_s = 0;  // activation copies to and from the host not hidden by compute
  double optimizer_s = 0;
  double overhead_s = 0;  // launch and framework overhead (per layer and per step)
};

// How far the measured step time may be from the prediction: about 80 % of held-out measured
// runs of the same regime fell inside the band (include/trainsim/uncertainty.h).
struct StepUncertainty {
  std::string_view regime = "none";  // e.g. "hopper/multi-node"; static storage, never freed
  double rel_below = 0;              // step_time_s_low = step_time_s * (1 - rel_below)
  double rel_above = 0;              // step_time_s_high = step_time_s * (1 + rel_above)
  int cases = 0;                     // held-out cases behind the band
  // The hardware's efficiencies were not fitted on its own measured runs (borrowed or nominal,
  // HardwareSpec::calibrated false): the band is at least the "uncalibrated" regime's.
  bool uncalibrated_hardware = false;
  // No framework profile named the run's software stack (validate: the case's source and
  // framework matched no profile, a fallback filled its settings; simulate: no --framework and
  // no framework file): the band is at least the "stack-inferred" regime's (WidenForInferredStack).
  bool stack_inferred = false;
};

// A setting the simulator filled in because its input did not give it: the key (a strategy key
// such as "zero_state", a validation-case key such as "parallel.sp", or "pipeline_split"), the
// value taken, as text, and why that value (whose default, or which rule chose it).
struct Assumption {
  std::string field;
  std::string value;
  std::string why;
};

// An input the simulator read but did not use (a Megatron-LM argument it does not model, or one
// it does not know): its name, the value given (lists joined with ','), and why it is unused.
using IgnoredInput = Assumption;  // field = the flag or key, value, why
// One phase of a post-training step (docs/FINETUNE.md): "scoring" (reference and KL forwards),
// "training" (the policy's forward and backward, communication, optimizer).
// RL steps add "generation" and "weight_sync" (separate rollout pools overlap generation with
// scoring + training, so the shares may add to more than 1).
struct PhaseReport {
  std::string name;
  double time_s = 0;
  double share = 0;      // of step_time_s
  double mem_bytes = 0;  // resident per GPU during the phase (RL steps; 0 = not given)
};

// The rollout and weight sync of an RL step (src/rl, docs/FINETUNE.md "RL"); updates == 0
// for other stages.
struct RlReport {
  double samples = 0;                        // sequences generated per step
  int updates = 0;                           // optimizer updates per step
  int replicas = 0, gen_tp = 0, gen_pp = 0;  // generation engines and their layout
  double batch = 0;                          // sequences decoding together per engine
  double decode_steps = 0;                   // iterations until the longest response ends
  double prefill_s = 0, decode_s = 0;
  double kv_pool_bytes = 0, gen_weight_bytes = 0;  // per generation GPU
  double refit_s = 0;    // weights resharded / sent to the generation engines
  double offload_s = 0;  // colocated: training states moved to the host and back
  bool separate = false, overlapped = false;
};

// Host (CPU) memory of one node and the host link, for plans that keep state on the host:
// optimizer offload (ZeRO-Offload, Megatron-LM --optimizer-cpu-offload), FSDP CPU offload,
// activation offload and paged optimizers (docs/FINETUNE.md, "Host memory";
// src/sim/host_memory.cc), and an RL step's offloaded trainer, reference weights and sleeping
// rollout engine (src/rl/host_memory.cc). All zero when nothing lives on the host.
struct HostMemReport {
  int gpus_per_node = 0;               // GPUs of the job sharing one host
  double optimizer_bytes = 0;          // per node: offloaded fp32 master weights and states
  double grad_bytes = 0;               // per node: gradients on the host (host optimizer, RL)
  double param_bytes = 0;              // per node: parameter shards on the host
  double activation_bytes = 0;         // per node: activations parked on the host
  double paged_bytes = 0;              // per node: paged optimizer states that may page out
  double reference_bytes = 0;          // per node: RL: the frozen reference policy's weights
  double engine_bytes = 0;             // per node: RL colocated: the sleeping engine's weights
  double bytes_per_node = 0;           // the sum of the seven: host RAM the plan needs per node
  double pinned_bytes = 0;             // of bytes_per_node: page-locked (copy targets)
  double capacity_bytes_per_node = 0;  // HardwareSpec::host_mem_bytes
  double link_s = 0;                   // exposed host-link copies per step (critical rank)
  double link_share = 0;               // link_s / step_time_s
  bool fits = true;                    // bytes_per_node <= capacity_bytes_per_node
  bool link_bound = false;             // link_s is at least half of the step
  std::string reason;                  // why host RAM or the host link limits the plan; "" = none
  std::string phase;  // RL: the phase whose host bytes are the peak; "" for other stages
};

// "optimizer states 61.0, gradients 20.3 GiB": the nonzero byte fields of `h` (per node), as
// the reports and the host-RAM verdicts name them.
std::string HostMemParts(const HostMemReport& h);

struct StepReport {
  double step_time_s = 0;
  double mfu = 0;             // model FLOPs (no recompute) / (time * gpus * dense BF16 peak)
  double hfu = 0;             // hardware FLOPs incl. recompute, same denominator
  double tflops_per_gpu = 0;  // model TFLOP/s per GPU
  double tokens_per_s_per_gpu = 0;
  double model_flops = 0;     // per step, whole job
  double hardware_flops = 0;  // per step, whole job, incl. recompute
  double params_total = 0;
  double params_active = 0;
  int micro_batches = 0;  // per DP rank per step
  int dp = 0;
  double step_overhead_s = 0;  // of time.overhead_s: the fixed per-step framework overhead
  double peak_mem_bytes = 0;   // max over stages
  bool fits = true;            // every stage's reserved_bytes <= HBM, and host_mem.fits
  // What was assumed for settings the input left out, in the order they were filled. Simulate
  // adds what it chooses itself (the pipeline split); front-ends put the defaults of the
  // settings their user did not give in front (AssumedStrategyDefaults, validate's profiles).
  std::vector<Assumption> assumed;
  // Inputs read but not used (field = the flag or key as the input spells it, value, why):
  // the Megatron-LM arguments and the strategy/DeepSpeed/torchtitan/SimuMax keys trainsim does
  // not simulate. Front-ends fill it.
  std::vector<IgnoredInput> ignored;
  TimeBreakdown time;
  std::vector<PhaseReport> phases;  // stages with scoring passes; empty otherwise
  RlReport rl;                      // RL stages: the rollout's details; `time` is one update's
  std::vector<StageReport> stages;
  std::vector<LayerReport> layers;  // filled when SimOptions::detail
  double step_time_s_low = 0;       // the uncertainty band around step_time_s (seconds)
  double step_time_s_high = 0;
  StepUncertainty uncertainty;
  HostMemReport host_mem;  // host RAM and host-link use; fits is false when host RAM is exceeded
};

}  // namespace trainsim

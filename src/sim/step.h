// The steps of Simulate(), as pure functions from one named intermediate to the next:
//   StepContext -> LayerKindCosts -> StagePlan[] -> StageCost[] -> pipeline -> DataParallelTime
//   -> optimizer -> stage memory -> breakdown and throughput.
// One representative rank per pipeline stage; every time is per micro-batch unless it says
// per step.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "layer_cost.h"
#include "schedule/schedule.h"
#include "trainsim/trainsim.h"

namespace trainsim::sim {

// What every step needs to know about the strategy on this hardware.
struct StepContext {
  StepContext(const ModelSpec& model, const HardwareSpec& hardware, const Strategy& strategy)
      : m(model), hw(hardware), s(strategy) {}
  const ModelSpec& m;
  const HardwareSpec& hw;
  const Strategy& s;
  PipelineSchedule sched = PipelineSchedule::k1F1B;  // interleaving with vpp 1 is 1F1B
  int p = 1, v = 1;                                  // pipeline stages, chunks per stage
  int micro_batches = 1;                             // per DP rank per step
  Placements pl;
  graph::Shape shape;
  double p2p_s = 0;             // one activation transfer between neighbouring stages
  double layer_overhead_s = 0;  // launch overhead per layer, forward + backward
  double host_issue_s = 0;      // host time to launch one kernel (Execution)
  double zero3_fetch_s = 0;     // ZeRO-3 hooks per gathered weight matrix (0 below stage 3)
  bool full_recompute = false;  // Recompute::kFull
  bool has_dense = false, has_moe = false;
  double grad_bytes_per_param = 4;  // main gradients: fp32 or 16-bit
};

// Checks model, strategy and hardware; the message names the field.
Status CheckInputs(const ModelSpec& m, const HardwareSpec& hw, const Strategy& s);
StepContext MakeContext(const ModelSpec& m, const HardwareSpec& hw, const Strategy& s);

// Each distinct layer kind costed once: [0] without, [1] with full recompute.
struct LayerKindCosts {
  LayerCost dense[2], moe[2];
  LayerCost embedding, head;
  // Forward only, nothing saved: the frozen layers under method freeze and the reference
  // model's forward (finetune::BuildFrozenLayer); zero when neither runs.
  LayerCost dense_fwd, moe_fwd, embedding_fwd, head_fwd;
};
// With `detail`, appends one LayerReport per layer kind.
LayerKindCosts CostLayerKinds(const StepContext& c, std::vector<LayerReport>* detail);

// The layers and parameters of one pipeline stage (one rank, all its virtual chunks).
struct StagePlan {
  int index = 0;
  graph::StageLayers layers;
  int full_recompute_layers = 0;  // of its layers, fully recomputed
  std::vector<graph::ParamGroup> params;
  int num_layers() const { return layers.dense + layers.moe; }
  double Params(bool expert, bool trainable_only) const;  // sum over groups
};
std::vector<StagePlan> PlanStages(const StepContext& c);

// Per-micro-batch costs of one stage, the recompute policy applied.
struct StageCost {
  LayerCost sum;                 // compute, exposed comm, recompute, activations, FLOPs
  double launch_overhead_s = 0;  // per-layer launch overhead + time the host cannot keep up
  double host_bound_s = 0;       // of launch_overhead_s: host issue beyond the GPU's work
  double fwd_host_s = 0, bwd_host_s = 0;  // host issue time of the forward and backward pass
  double fwd_s = 0;                       // forward incl. exposed comm and half the launch overhead
  double bwd_s = 0;                       // backward incl. recompute, exposed comm, the other half
  double hidden_s = 0;                    // DualPipe: EP all-to-all hidden behind the paired chunk
  double scoring_s = 0;  // of fwd_s: forward-only passes of the reference model (dpo, kto)
  double pipeline_s() const { return fwd_s + bwd_s - hidden_s; }  // what the pipeline sees
};
StageCost CostStage(const StepContext& c, const StagePlan& plan, const LayerKindCosts& kinds);

// Closed-form pipeline over the stages, and its critical rank (slowest stage; under DualPipe
// the slowest pair of mirrored stages).
struct PipelineResult {
  schedule::PipelineTime time;
  int critical_rank = 0;
};
PipelineResult RunPipeline(const StepContext& c, const std::vector<StageCost>& costs);

// Data-parallel (DP x CP and expert-DP) communication per stage and its exposed part.
struct StageDpComm {
  double grad_s = 0, gather_s = 0;              // ZeRO 0-2, per step
  double grad_bytes = 0, gather_bytes = 0;      // message bytes, per step
  double fsdp_gather_s = 0, fsdp_reduce_s = 0;  // ZeRO-3, per micro-batch
  double exposed_s = 0;                         // per step
};
struct DataParallelTime {
  std::vector<StageDpComm> stages;
  double exposed_s = 0;  // the slowest stage's exposed DP communication, per step
};
DataParallelTime DataParallelComm(const StepContext& c, const std::vector<StagePlan>& plans,
                                  const std::vector<StageCost>& costs);

// Optimizer step of the slowest stage, per step: Adam (memory-bound, or launch-bound for
// foreach / per-tensor updates; host Adam when offloaded), fp16 loss-scale unscaling, and for
// Muon the Newton-Schulz GEMMs on the hidden matrices (src/sim/optimizer.cc).
double OptimizerTime(const StepContext& c, const std::vector<StagePlan>& plans,
                     const LayerKindCosts& kinds);

// Seconds per step that the offloaded optimizer's copies take on the host link (gradients to
// the host, 16-bit weights back), on the stage with the most; 0 without optimizer offload.
double OptimizerHostLinkTime(const StepContext& c, const std::vector<StagePlan>& plans);

// Fills the memory fields of `out[k]` for every stage; returns whether every stage fits.
bool StageMemories(const StepContext& c, const std::vector<StagePlan>& plans,
                   const std::vector<StageCost>& costs, const LayerKindCosts& kinds,
                   std::vector<StageReport>& out);

// Host memory one GPU of the stage that keeps the most on the host needs (memory::
// HostStageMemory), in the byte fields of HostMemReport, per GPU (not yet per node).
HostMemReport HostBytesPerGpu(const StepContext& c, const std::vector<StagePlan>& plans,
                              const std::vector<StageCost>& costs, const LayerKindCosts& kinds);

// Host RAM and host link of the plan (src/sim/host_memory.cc, docs/FINETUNE.md "Host memory"):
// the host bytes per node (per GPU times the job's GPUs on one server), the server's capacity,
// the exposed host-link copies (activation offload's exposed part plus the offloaded
// optimizer's copies) and why either limits the plan. Sets r.host_mem; clears r.fits when host
// RAM is exceeded. Needs r.time and r.step_time_s.
void HostMemory(const StepContext& c, const std::vector<StagePlan>& plans,
                const std::vector<StageCost>& costs, const LayerKindCosts& kinds, StepReport& r);
// Sets r.host_mem.reason from its figures (and r.fits false when host RAM is exceeded).
void HostMemVerdict(const HardwareSpec& hw, StepReport& r);
// The assumed host_mem_gib when the hardware file gives none and the plan keeps anything on
// the host (the reports list it); nullopt otherwise.
std::optional<Assumption> HostMemAssumption(const HardwareSpec& hw, const StepReport& r);

// Per-stage time fields of the report (per micro-batch costs, DP communication).
void FillStageTimes(const StepContext& c, const std::vector<StagePlan>& plans,
                    const std::vector<StageCost>& costs, const DataParallelTime& dp,
                    std::vector<StageReport>& out);

// The time breakdown along the critical rank; sums to the step time by construction.
TimeBreakdown Breakdown(const StepContext& c, const std::vector<StageCost>& costs,
                        const PipelineResult& pipe, double dp_exposed_s, double optimizer_s);

// Model and hardware FLOPs, MFU/HFU, throughput and parameter counts of the report.
void FillThroughput(const StepContext& c, const std::vector<StageCost>& costs, StepReport& r);

}  // namespace trainsim::sim

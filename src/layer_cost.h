// Costs of one layer's ops for one micro-batch on one rank, summed the way the step needs them.
#pragma once

#include <vector>

#include "cost/cost.h"
#include "graph/graph.h"
#include "trainsim/report.h"
#include "trainsim/strategy.h"

namespace trainsim {

// Placements of every communication group of a strategy (Megatron order tp-cp-ep-dp-pp).
struct Placements {
  cost::Placement tp, cp, dp_cp, pp, ep, etp, edp;
};
Placements PlaceGroups(const Strategy& s, int domain);

// Per micro-batch on one rank; summed over a stage's layers by the step.
struct LayerCost {
  double fwd_compute_s = 0;
  double bwd_compute_s = 0;
  double wgrad_s = 0;      // of bwd_compute_s: weight-gradient GEMMs
  double tp_comm_s = 0;    // exposed, fwd + bwd
  double cp_comm_s = 0;    // exposed, fwd + bwd
  double ep_comm_s = 0;    // exposed, fwd + bwd
  double ep_fwd_s = 0;     // of ep_comm_s: in forward
  double fwd_comm_s = 0;   // exposed in forward (all groups)
  double bwd_comm_s = 0;   // exposed in backward
  double recompute_s = 0;  // extra forward work in backward, per the recompute policy
  double saved_none = 0;   // activations saved with no recompute
  double saved_selective = 0;
  double saved_full = 0;   // the layer input only
  double fwd_flops = 0;    // forward FLOPs on this rank
  double bwd_flops = 0;    // backward FLOPs (input and weight gradients, no recompute)
  double wgrad_flops = 0;  // of bwd_flops: weight-gradient GEMMs
  double recompute_flops = 0;
  double max_intermediate = 0;  // largest single activation (for the transient peak)
  // Host-issue work of the kernels launched in forward, and in backward including the
  // recomputed forward, in cost-graph kernels (graph::Op::host_weight).
  double fwd_kernels = 0;
  double bwd_kernels = 0;
  double param_tensors = 0;  // trained weight, bias and norm tensors (optimizer launches)
  // Weight matrices gathered in forward, and in backward including the recomputed forward
  // (DeepSpeed ZeRO-3's per-module hooks, Execution::zero3_fetch_us).
  double fwd_fetches = 0, bwd_fetches = 0;
  double hidden_params = 0;  // parameters of the trained GEMM weights (Muon's matrices)
  // Activation offload (Execution::offload_modules / offload_activations): bytes of one
  // micro-batch's saved tensors this layer moves to host memory under the recompute policy
  // (subtracted from saved_*), and the copy time its compute does not hide, in forward and in
  // forward + backward (already in fwd_comm_s / bwd_comm_s).
  double offload_bytes = 0;
  double offload_fwd_s = 0, offload_s = 0;
};

// Costs `ops`; `full_recompute` selects which recompute time applies. With `detail`, fills
// `report` with one OpReport per op.
LayerCost CostOps(const std::vector<graph::Op>& ops, const HardwareSpec& hw, const Strategy& s,
                  const Placements& pl, bool full_recompute, LayerReport* report);

}  // namespace trainsim

// Layer kinds costed once, the layers and parameters of each stage, and each stage's
// per-micro-batch cost.
#include <algorithm>

#include "finetune/method.h"
#include "sim/step.h"

namespace trainsim::sim {
namespace {

// Costs one layer kind with and without full recompute; with `lr`, the per-op table.
void CostKind(const StepContext& c, bool moe, LayerCost out[2], LayerReport* lr) {
  thread_local std::vector<graph::Op> ops;
  ops.clear();
  finetune::BuildTrainLayer(c.m, c.s, moe, ops);
  out[0] = CostOps(ops, c.hw, c.s, c.pl, false, lr);
  out[1] = c.full_recompute ? CostOps(ops, c.hw, c.s, c.pl, true, nullptr) : out[0];
  if (!lr) return;
  const LayerCost& k = out[c.full_recompute ? 1 : 0];
  lr->kind = moe ? "moe" : "dense";
  lr->fwd_s = k.fwd_compute_s + k.fwd_comm_s;
  lr->bwd_s = k.bwd_compute_s + k.bwd_comm_s;
  lr->recompute_s = k.recompute_s;
  lr->activation_bytes = c.full_recompute                         ? k.saved_full
                         : c.s.recompute == Recompute::kSelective ? k.saved_selective
                                                                  : k.saved_none;
  for (int i = 0; i < c.m.layers; ++i) lr->count += c.m.layer_is_moe(i) == moe;
}

// The strategy with activation offload off: the embedding and the loss keep their saved
// tensors (offloading acts on the transformer layers).
Strategy NoOffload(const Strategy& s) {
  Strategy out = s;
  out.exec.offload_activations = false;
  out.exec.offload_modules = 0;
  return out;
}

LayerCost CostExtra(const StepContext& c,
                    void (*build)(const ModelSpec&, const Strategy&, std::vector<graph::Op>&)) {
  thread_local std::vector<graph::Op> ops;
  ops.clear();
  build(c.m, c.s, ops);
  return CostOps(ops, c.hw, NoOffload(c.s), c.pl, false, nullptr);
}

// The forward of a layer cost with no backward and nothing saved.
LayerCost ForwardOnly(LayerCost k) {
  k.fwd_comm_s -= k.offload_fwd_s;  // nothing is saved, so nothing is offloaded
  k.offload_bytes = k.offload_fwd_s = k.offload_s = 0;
  k.bwd_compute_s = k.wgrad_s = k.bwd_comm_s = k.recompute_s = 0;
  k.tp_comm_s = std::max(0.0, k.fwd_comm_s - k.ep_fwd_s);
  k.cp_comm_s = 0;
  k.ep_comm_s = k.ep_fwd_s;
  k.saved_none = k.saved_selective = k.saved_full = 0;
  k.bwd_flops = k.wgrad_flops = k.recompute_flops = 0;
  k.bwd_kernels = k.bwd_fetches = 0;
  k.param_tensors = k.hidden_params = 0;
  return k;
}

LayerCost CostFrozenKind(const StepContext& c, bool moe) {
  thread_local std::vector<graph::Op> ops;
  ops.clear();
  finetune::BuildFrozenLayer(c.m, c.s, moe, ops);
  return ForwardOnly(CostOps(ops, c.hw, c.s, c.pl, false, nullptr));
}

// The head with a frozen output layer: its GEMM computes only the data gradient.
LayerCost CostFrozenHead(const StepContext& c) {
  thread_local std::vector<graph::Op> ops;
  ops.clear();
  graph::BuildHead(c.m, c.s, ops);
  graph::ApplyPass(graph::Pass{c.shape, false}, ops, 0);
  for (graph::Op& op : ops) op.param_tensors = 0;
  return CostOps(ops, c.hw, NoOffload(c.s), c.pl, false, nullptr);
}

// Adds `count` layers of cost `k` to `sum`.
void Accumulate(LayerCost& sum, const LayerCost& k, double count) {
  sum.fwd_compute_s += k.fwd_compute_s * count;
  sum.bwd_compute_s += k.bwd_compute_s * count;
  sum.wgrad_s += k.wgrad_s * count;
  sum.tp_comm_s += k.tp_comm_s * count;
  sum.cp_comm_s += k.cp_comm_s * count;
  sum.ep_comm_s += k.ep_comm_s * count;
  sum.ep_fwd_s += k.ep_fwd_s * count;
  sum.fwd_comm_s += k.fwd_comm_s * count;
  sum.bwd_comm_s += k.bwd_comm_s * count;
  sum.recompute_s += k.recompute_s * count;
  sum.offload_fwd_s += k.offload_fwd_s * count;
  sum.offload_s += k.offload_s * count;
  if (count > 0) sum.offload_bytes = std::max(sum.offload_bytes, k.offload_bytes);  // largest
  sum.saved_none += k.saved_none * count;
  sum.fwd_flops += k.fwd_flops * count;
  sum.bwd_flops += k.bwd_flops * count;
  sum.wgrad_flops += k.wgrad_flops * count;
  sum.recompute_flops += k.recompute_flops * count;
  sum.max_intermediate = std::max(sum.max_intermediate, k.max_intermediate);
  sum.fwd_kernels += k.fwd_kernels * count;
  sum.bwd_kernels += k.bwd_kernels * count;
  sum.fwd_fetches += k.fwd_fetches * count;
  sum.bwd_fetches += k.bwd_fetches * count;
}

// Adds `count` layers of one kind, `frac_full` of them fully recomputed; saved_none then holds
// what the recompute policy keeps.
void AccumulateKind(LayerCost& sum, const LayerCost k[2], int count, double frac_full,
                    Recompute policy) {
  if (count == 0) return;
  const double nf = count * frac_full, nn = count - nf;
  LayerCost full = k[1], kept = k[0];
  full.saved_none = k[1].saved_full;
  kept.saved_none = policy == Recompute::kSelective ? k[0].saved_selective : k[0].saved_none;
  Accumulate(sum, full, nf);
  Accumulate(sum, kept, nn);
}

}  // namespace

double StagePlan::Params(bool expert, bool trainable_only) const {
  double n = 0;
  for (const graph::ParamGroup& g : params)
    if (g.expert == expert && (g.trainable || !trainable_only)) n += g.count;
  return n;
}

LayerKindCosts CostLayerKinds(const StepContext& c, std::vector<LayerReport>* detail) {
  LayerKindCosts k;
  auto report = [&]() -> LayerReport* {
    if (!detail) return nullptr;
    detail->emplace_back();
    return &detail->back();
  };
  if (c.has_dense) CostKind(c, false, k.dense, report());
  if (c.has_moe) CostKind(c, true, k.moe, report());
  k.embedding = CostExtra(c, graph::BuildEmbedding);
  k.head = CostExtra(c, graph::BuildHead);
  if (finetune::FrozenLayers(c.m, c.s) > 0 || finetune::ScoringForwards(c.s) > 0) {
    if (c.has_dense) k.dense_fwd = CostFrozenKind(c, false);
    if (c.has_moe) k.moe_fwd = CostFrozenKind(c, true);
    k.embedding_fwd = ForwardOnly(k.embedding);
    k.head_fwd = ForwardOnly(k.head);
  }
  // A frozen embedding table gets no gradient; a frozen output layer only passes it on.
  if (!finetune::EmbeddingsTrained(c.s) && c.s.stage != TrainStage::kRm) {
    k.embedding = ForwardOnly(k.embedding);
    k.head = CostFrozenHead(c);
  }
  return k;
}

std::vector<StagePlan> PlanStages(const StepContext& c) {
  // Chunk j of stage k is virtual stage j*p + k (Megatron's interleaved order).
  const std::vector<int> chunk = PipelineChunkLayers(c.s, c.m.layers, c.m.mtp_layers);
  std::vector<StagePlan> plans(c.p);
  int layer = 0;
  const int frozen = finetune::FrozenLayers(c.m, c.s);  // the first layers of the model
  const int mtp_stage = PipelineMtpStage(c.s);
  for (int vs = 0; vs < c.p * c.v; ++vs)
    for (int j = 0; j < chunk[vs]; ++j, ++layer) {
      graph::StageLayers& sl = plans[vs % c.p].layers;
      const bool moe = c.m.layer_is_moe(layer);
      (moe ? sl.moe : sl.dense)++;
      if (layer < frozen) (moe ? sl.frozen_moe : sl.frozen_dense)++;
    }
  for (int k = 0; k < c.p; ++k) {
    StagePlan& sp = plans[k];
    sp.index = k;
    sp.layers.first = k == 0;
    sp.layers.last = k == c.p - 1;
    sp.layers.mtp = k == mtp_stage ? c.m.mtp_layers : 0;
    // Full recompute of the first `recompute_layers` layers of the stage (all when -1).
    const int n = sp.num_layers();
    sp.full_recompute_layers = !c.full_recompute          ? 0
                               : c.s.recompute_layers < 0 ? n
                                                          : std::min(n, c.s.recompute_layers);
    sp.params = graph::StageParamGroups(c.m, c.s, sp.layers);
  }
  return plans;
}

StageCost CostStage(const StepContext& c, const StagePlan& plan, const LayerKindCosts& kinds) {
  StageCost sc;
  LayerCost& sum = sc.sum;
  const int n = plan.num_layers();
  const double frac_full = n > 0 ? static_cast<double>(plan.full_recompute_layers) / n : 0;
  const graph::StageLayers& sl = plan.layers;
  AccumulateKind(sum, kinds.dense, sl.dense - sl.frozen_dense, frac_full, c.s.recompute);
  AccumulateKind(sum, kinds.moe, sl.moe - sl.frozen_moe, frac_full, c.s.recompute);
  Accumulate(sum, kinds.dense_fwd, sl.frozen_dense);  // frozen: forward only
  Accumulate(sum, kinds.moe_fwd, sl.frozen_moe);
  if (plan.layers.first) Accumulate(sum, kinds.embedding, 1);
  if (plan.layers.last) Accumulate(sum, kinds.head, 1);
  // Reference (and KTO's KL) forwards of the whole stage, per micro-batch.
  if (const int scoring = finetune::ScoringForwards(c.s); scoring > 0) {
    LayerCost ref;
    Accumulate(ref, kinds.dense_fwd, sl.dense);
    Accumulate(ref, kinds.moe_fwd, sl.moe);
    if (sl.first) Accumulate(ref, kinds.embedding_fwd, 1);
    if (sl.last) Accumulate(ref, kinds.head_fwd, 1);
    sc.scoring_s = scoring * (ref.fwd_compute_s + ref.fwd_comm_s);
    Accumulate(sum, ref, scoring);
  }
  // DeepSeek-V3 multi-token prediction: each module is one more block and one more head + loss
  // on the stage that runs them (its 2h->h projection is small and folded in).
  if (plan.layers.mtp > 0) {
    Accumulate(sum, c.has_moe ? kinds.moe[0] : kinds.dense[0], plan.layers.mtp);
    Accumulate(sum, kinds.head, plan.layers.mtp);
  }
  const double layer_s = c.layer_overhead_s * n;
  const double fwd_gpu = sum.fwd_compute_s + sum.fwd_comm_s + layer_s * 0.5;
  const double bwd_gpu = sum.bwd_compute_s + sum.bwd_comm_s + sum.recompute_s + layer_s * 0.5;
  // The host issues the kernels asynchronously; a pass is never shorter than its launches
  // (docs/MODEL.md, "Launch floor and host issue").
  const double fwd_host = sum.fwd_kernels * c.host_issue_s + sum.fwd_fetches * c.zero3_fetch_s;
  const double bwd_host = sum.bwd_kernels * c.host_issue_s + sum.bwd_fetches * c.zero3_fetch_s;
  sc.fwd_host_s = fwd_host, sc.bwd_host_s = bwd_host;
  sc.host_bound_s = std::max(0.0, fwd_host - fwd_gpu) + std::max(0.0, bwd_host - bwd_gpu);
  sc.launch_overhead_s = layer_s + sc.host_bound_s;
  sc.fwd_s = std::max(fwd_gpu, fwd_host);
  sc.bwd_s = std::max(bwd_gpu, bwd_host);
  // DualPipe overlaps a forward chunk with a backward chunk of another micro-batch, which hides
  // the EP all-to-all (DeepSeek-V3 report, section 3.2.1).
  if (c.sched == PipelineSchedule::kDualPipe) sc.hidden_s = sum.ep_comm_s;
  return sc;
}

}  // namespace trainsim::sim

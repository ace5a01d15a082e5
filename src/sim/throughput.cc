// Model and hardware FLOPs of a step, utilisation and throughput.
#include "graph/attention_pattern.h"
#include "sim/step.h"

namespace trainsim::sim {
namespace {

// Per-token forward FLOPs of the whole model (model FLOPs, no recompute): 2 per multiply-add of
// every matmul weight a token passes through, plus causal attention and the LM head
// (Narayanan et al. SC21 eq. 3 without the recompute pass; attention halved for causality).
struct ModelFlops {
  double dense_layer = 0, moe_layer = 0, head = 0;
};

ModelFlops PerTokenForwardFlops(const ModelSpec& m, const ParamCounts& pc, double seq) {
  ModelFlops f;
  const double h = static_cast<double>(m.hidden);
  const double norms = 2 * (m.layernorm ? 2 * h : h);
  double dqk = static_cast<double>(m.head_dim), dv = dqk;
  if (m.is_mla()) {
    dqk = static_cast<double>(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim);
    dv = static_cast<double>(m.mla.v_head_dim);
  }
  // 2 FLOPs per multiply-add of QK^T and PV over the keys a query attends to (seq/2 when
  // causal; token exact under windows and document masks, graph/attention_pattern.h).
  const double attn = 2.0 * graph::MeanKeysPerQuery(m, seq, true) * m.heads * (dqk + dv);
  f.dense_layer = 2.0 * (pc.dense_layer - norms) + attn;
  f.moe_layer = 2.0 * (pc.moe_layer_active - norms) + attn;
  f.head = 2.0 * h * m.vocab;
  return f;
}

}  // namespace

void FillThroughput(const StepContext& c, const std::vector<StageCost>& costs, StepReport& r) {
  const ModelSpec& m = c.m;
  const Strategy& s = c.s;
  const ParamCounts pc = CountParams(m);
  const ModelFlops mf = PerTokenForwardFlops(m, pc, s.seq);
  int n_dense = 0, n_moe = 0;
  for (int i = 0; i < m.layers; ++i) (m.layer_is_moe(i) ? n_moe : n_dense)++;
  const int dp = s.dp();
  const double tokens = static_cast<double>(c.micro_batches) * s.mbs * dp * s.seq;
  const double fwd_per_token =
      n_dense * mf.dense_layer + n_moe * mf.moe_layer + mf.head +
      m.mtp_layers * ((c.has_moe ? mf.moe_layer : mf.dense_layer) + mf.head);
  r.model_flops = 3.0 * fwd_per_token * tokens;
  double rank_fwd = 0, rank_rec = 0;
  for (const StageCost& sc : costs) {
    rank_fwd += sc.sum.fwd_flops;
    rank_rec += sc.sum.recompute_flops;
  }
  r.hardware_flops =
      r.model_flops + (rank_fwd > 0 ? rank_rec / rank_fwd : 0) * fwd_per_token * tokens;
  const double gpus = s.world_size;
  const HardwareSpec& hw = c.hw;
  const double peak =
      hw.PeakFlops(DType::kBf16) > 0 ? hw.PeakFlops(DType::kBf16) : hw.PeakFlops(DType::kFp16);
  r.mfu = r.model_flops / (r.step_time_s * gpus * peak);
  r.hfu = r.hardware_flops / (r.step_time_s * gpus * peak);
  r.tflops_per_gpu = r.model_flops / (r.step_time_s * gpus) / 1e12;
  r.tokens_per_s_per_gpu = tokens / r.step_time_s / gpus;
  r.params_total = static_cast<double>(pc.total);
  r.params_active = static_cast<double>(pc.active);
  r.micro_batches = c.micro_batches;
  r.dp = dp;
}

}  // namespace trainsim::sim

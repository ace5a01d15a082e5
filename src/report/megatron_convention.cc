// Megatron-LM's own log figures for a predicted step (trainsim/megatron.h): the FLOP count of
// num_floating_point_operations in Megatron-LM megatron/training/training.py (standard
// transformer branch: 3x forward GEMMs, 2 FLOPs per multiply-add, causal attention halved, no
// recompute), and throughput per GPU = that / (elapsed time per iteration * 1e12 * world size)
// as training_log prints it ("throughput per GPU (TFLOP/s/GPU)").
#include "trainsim/megatron.h"

namespace trainsim {
namespace {

// Forward-pass FLOPs of one token through one attention block, without the 3x2 factor.
double AttentionTerm(const ModelSpec& m, double seq) {
  const double h = static_cast<double>(m.hidden), a = m.heads;
  if (m.is_mla()) {
    const double qk = static_cast<double>(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim);
    const double v = static_cast<double>(m.mla.v_head_dim);
    const double q = m.mla.q_lora_rank == 0
                         ? h * a * qk
                         : static_cast<double>(m.mla.q_lora_rank) * (h + a * qk + 1);
    const double kv =
        static_cast<double>(m.mla.kv_lora_rank) * (h + a * (m.mla.qk_nope_head_dim + v) + 1);
    return q + kv + h * static_cast<double>(m.mla.qk_rope_head_dim) + a * v * h + seq * a * qk / 2 +
           seq * a * v / 2;
  }
  const double q = static_cast<double>(m.head_dim) * a;
  const double kv = static_cast<double>(m.head_dim) * m.kv_heads;
  return h * (q + 2 * kv) + q * seq / 2 * 2 + q * h;
}

}  // namespace

MegatronLogFigures MegatronConventionFigures(const StepReport& r, const ModelSpec& m,
                                             const Strategy& s) {
  const double seq = s.seq, h = static_cast<double>(m.hidden);
  const double batch = s.gbs > 0 ? s.gbs : 1.0 * s.num_micro_batches() * s.mbs * s.dp();
  int dense = 0, moe = 0;
  for (int i = 0; i < m.layers; ++i) (m.layer_is_moe(i) ? moe : dense) += 1;
  const bool last_moe = m.layers > 0 && m.layer_is_moe(m.layers - 1);
  (last_moe ? moe : dense) += m.mtp_layers;  // MTP layers count as the last layer's kind
  const double fe = m.gated_mlp ? 3 : 2;     // ffn_expansion_factor
  const double k = 3 * 2;                    // forward_backward x fma expansion factors
  const double expert_ffn = static_cast<double>(m.moe.expert_ffn > 0 ? m.moe.expert_ffn : m.ffn);
  const double mlp =
      k * h *
      (static_cast<double>(m.ffn) * fe * dense +
       (expert_ffn * m.moe.top_k * fe + static_cast<double>(m.moe.shared_ffn) * fe) * moe);
  const double attn = k * AttentionTerm(m, seq) * (m.layers + m.mtp_layers);
  const double mtp = k * m.mtp_layers * (3 * h + 2 * h * h);
  const double logits = k * h * static_cast<double>(m.vocab) * (m.mtp_layers + 1);
  MegatronLogFigures f;
  f.flops_per_iteration = batch * seq * (mlp + attn + mtp + logits);
  f.elapsed_ms_per_iteration = r.step_time_s * 1e3;
  if (r.step_time_s > 0 && s.world_size > 0)
    f.tflops_per_gpu = f.flops_per_iteration / (r.step_time_s * 1e12 * s.world_size);
  return f;
}

}  // namespace trainsim

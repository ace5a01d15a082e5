// One iteration of an inference engine on one GPU of one pipeline stage: per-op roofline over the
// stage's layers (docs/INFERENCE.md, "Step cost").
#pragma once

#include <string>

#include "trainsim/hardware.h"
#include "trainsim/infer.h"
#include "trainsim/model.h"

namespace trainsim::infer {

// The layout of one replica with everything SimulateInference resolved.
struct Layout {
  const ModelSpec* m = nullptr;
  const HardwareSpec* hw = nullptr;
  const EngineProfile* engine = nullptr;
  int tp = 1, pp = 1;
  WeightDType wdtype = WeightDType::kBf16;
  QuantMethod quant = QuantMethod::kNone;
  int group = 128;
  KvDType kv = KvDType::kBf16;
  bool attention_dp = false;  // attention + dense layers data-parallel over tp, experts EP
  // GPUs that split the attention / dense layers (tensor parallel) and the data-parallel ways
  // of those layers inside the replica: (tp, 1) or, under attention DP, (1, tp).
  int attn_tp() const { return attention_dp ? 1 : tp; }
  int attn_dp() const { return attention_dp ? tp : 1; }
};

// The tokens one iteration processes: `dec_seqs` sequences decoding one token each over
// `dec_ctx` cached positions, and `pre_seqs` sequences prefilling `pre_len` tokens each (a
// fractional count is a chunk of a longer prompt) over `pre_cached` earlier positions.
struct Work {
  double dec_seqs = 0, dec_ctx = 0;
  double pre_seqs = 0, pre_len = 0, pre_cached = 0;
  double tokens() const { return dec_seqs + pre_seqs * pre_len; }
};

// Transformer layers of the stage with the most work (ceil(layers / pp)), split by kind, and
// whether it holds the LM head.
struct StageShape {
  int dense = 0, moe = 0;
  bool head = true;
};
StageShape HeaviestStage(const ModelSpec& m, int pp);

// Seconds of one iteration on one GPU of that stage, with its breakdown; excludes the engine's
// per-iteration host overhead (the caller adds it once per iteration of the whole pipeline).
PhaseBreakdown StageIteration(const Layout& l, const StageShape& st, const Work& w);

// Parameters of one GPU of the stage: GEMM weights (quantisable) and the rest (embedding, head,
// norms: kept in BF16 by AWQ/GPTQ/ModelOpt checkpoints).
struct StageWeights {
  double gemm_params = 0, other_params = 0;
  double bytes = 0;
};
StageWeights StageWeightBytes(const Layout& l, const StageShape& st);

// KV bytes per token cached on one GPU of the stage (its layers; KV heads split over tp,
// replicated when fewer than tp; MLA latent replicated on every tp rank).
double StageKvBytesPerToken(const Layout& l, const StageShape& st);

// The host CPU that runs the engine's Python loop on `hw` (data/inference_engines.json
// `host_cpus`, matched by the preset id or the preset it is an instance of): its host work takes
// `time_factor` x the x86 reference's (1 where the preset is not listed).
struct HostCpu {
  std::string cpu = "x86";
  double time_factor = 1;
  std::string provenance;
};
HostCpu HostCpuOf(const HardwareSpec& hw);
// The band of a prediction by `engine` of a MoE or dense model: the most specific regime of the
// "uncertainty" table of data/inference_engines.json ("ENGINE/moe" or "ENGINE/dense", then
// "moe" or "dense" over every engine's residuals, then "all"); empty when the table has none.
InferenceBand InferenceBandOf(const std::string& engine, bool moe);
// Sets r.band and the _low / _high figures from r's headline values.
void ApplyInferenceBand(InferenceReport& r, bool moe);

// Replaces the engine's MoE constants (moe_gemm_efficiency, moe_hbm_fraction) by those its
// profile fitted for `hw` (`by_hardware`, matched by the preset id or the preset it is an
// instance of). Returns the matched preset id, "" where none is fitted (the shared values stay).
std::string ApplyHardwareCalibration(EngineProfile& e, const HardwareSpec& hw);

// Datasheet dense tensor FLOP/s of the precision GEMMs over `d` weights compute in.
double ComputePeak(const HardwareSpec& hw, WeightDType d);

// Parameters of one layer's GEMMs (whole layer, before tp).
double AttentionParams(const ModelSpec& m);
double ExpertParams(const ModelSpec& m);                    // one routed expert
double DenseMlpParams(const ModelSpec& m, bool moe_layer);  // dense MLP or shared experts

}  // namespace trainsim::infer

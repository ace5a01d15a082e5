// Parameter groups of one rank of a pipeline stage (weights by storage and sharding).
#include <vector>

#include "finetune/method.h"
#include "graph/graph.h"

namespace trainsim::graph {

std::vector<ParamGroup> StageParamGroups(const ModelSpec& m, const Strategy& s,
                                         const StageLayers& sl) {
  bool has_moe = false;
  for (int i = 0; i < m.layers && !has_moe; ++i) has_moe = m.layer_is_moe(i);
  const LayerParams dense = RankLayerParams(m, s, false);
  const LayerParams moe = has_moe ? RankLayerParams(m, s, true) : LayerParams{};
  const double h = static_cast<double>(m.hidden);
  const double vocab_rows = static_cast<double>(m.vocab) * h / s.tp;
  const double w_b = WeightBytes(s.dtype);
  std::vector<ParamGroup> g;
  auto add = [&](const char* name, double count, bool expert) {
    if (count > 0) g.push_back(ParamGroup{name, count, expert, true, w_b});
  };
  add("layers",
      sl.dense * (dense.tp_sharded + dense.replicated) + sl.moe * (moe.tp_sharded + moe.replicated),
      false);
  if (sl.first) add("embedding", vocab_rows + static_cast<double>(m.learned_pos_emb) * h, false);
  if (sl.last) {
    // A tied output layer shares the embedding's rows when both live on one stage.
    const bool tied_here = m.tied_embeddings && sl.first;
    add("head", (tied_here ? 0 : vocab_rows) + (m.layernorm ? 2 * h : h), false);
  }
  double expert = sl.moe * moe.expert;
  if (sl.mtp > 0) {
    // DeepSeek-V3 multi-token prediction: one more block and a 2h -> h projection per module.
    // Megatron-LM builds an embedding and an output layer on the stage that runs them
    // (GPTModel: `if self.pre_process or self.mtp_process: self.embedding = ...`, `if
    // self.post_process or self.mtp_process: self.output_layer = ...`): copies where the stage
    // does not hold them already. On the loss stage only the output layer is counted (as
    // before layouts: DualPipe keeps the first stage, and its embedding, on the same rank).
    const LayerParams& blk = has_moe ? moe : dense;
    const double copies = sl.last ? 0 : (sl.first ? 0 : vocab_rows) + vocab_rows;
    // Each module also normalises its two inputs (DeepSeek-V3 report section 2.2: two RMSNorms
    // before the 2h -> h projection), as CountParams' mtp_total counts.
    const double norms = 2.0 * (m.layernorm ? 2 * h : h);
    add("mtp", sl.mtp * (blk.tp_sharded + blk.replicated + 2.0 * h * h / s.tp + norms) + copies,
        false);
    if (has_moe) expert += sl.mtp * moe.expert;
  }
  add("experts", expert, true);
  finetune::ApplyMethodToParams(m, s, sl, g);
  return g;
}

}  // namespace trainsim::graph

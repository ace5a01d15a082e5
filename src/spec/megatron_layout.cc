// The Megatron-LM arguments that need the model (trainsim/megatron.h: ResolveMegatronModel);
// --pipeline-model-parallel-layout is read in spec/pipeline_layout.cc.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "spec/field_text.h"
#include "spec/pipeline_split.h"
#include "trainsim/megatron.h"

namespace trainsim {
namespace {

// A --model against the script's shape arguments: the first contradiction, naming both.
Status CheckAgainst(const std::map<std::string, std::string>& shape, const ModelSpec& preset) {
  auto built = ModelFromMegatronShape(shape);
  const bool full = built.ok();
  auto val = [&](const char* f) { return shape.count(f) ? shape.at(f) : std::string(); };
  auto clash = [&](const char* f, const std::string& script, long long model) {
    return Status::Invalid(f, "the Megatron-LM arguments say " + script + ", --model " +
                                  preset.name + " has " + std::to_string(model));
  };
  const std::pair<const char*, long long> ints[] = {
      {"--num-layers", preset.layers},
      {"--hidden-size", preset.hidden},
      {"--ffn-hidden-size", preset.ffn},
      {"--num-attention-heads", preset.heads},
      {"--num-experts", preset.moe.num_experts},
      {"--moe-router-topk", preset.moe.top_k},
      {"--moe-ffn-hidden-size", preset.moe.expert_ffn},
      {"--moe-shared-expert-intermediate-size", preset.moe.shared_ffn},
      {"--mtp-num-layers", preset.mtp_layers},
      {"--kv-lora-rank", preset.mla.kv_lora_rank},
      {"--q-lora-rank", preset.mla.q_lora_rank}};
  for (const auto& [f, model] : ints)
    if (shape.count(f) && val(f) != std::to_string(model)) return clash(f, val(f), model);
  if (shape.count("--group-query-attention") && shape.count("--num-query-groups") &&
      val("--num-query-groups") != std::to_string(preset.kv_heads))
    return clash("--num-query-groups", val("--num-query-groups"), preset.kv_heads);
  // The preset's vocabulary may be padded (to 128 x tp in Megatron-LM).
  long long v = 0;
  if (shape.count("--vocab-size") &&
      detail::ParseIntText(val("--vocab-size"), 1, 1LL << 40, v).ok() &&
      (v > preset.vocab || preset.vocab - v >= 128 * 8))
    return clash("--vocab-size", val("--vocab-size"), preset.vocab);
  if (full && built->gated_mlp != preset.gated_mlp)
    return Status::Invalid("--swiglu", std::string("the Megatron-LM arguments ") +
                                           (built->gated_mlp ? "give" : "do not give") +
                                           " --swiglu; --model " + preset.name + " has " +
                                           (preset.gated_mlp ? "a gated" : "a plain") + " MLP");
  return Status::Ok();
}

// --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split as
// Megatron-Core builds them (get_num_layers_to_build, megatron/core/transformer/
// transformer_block.py, NVIDIA/Megatron-LM @ 000c4ac2): num_layers plus one per flag, divided
// evenly over the pp x vpp chunks; the first chunk builds one layer less for the embedding, the
// last one less for the loss; the MTP modules, not counted, go to the last chunk. Written as the
// equivalent --pipeline-model-parallel-layout (one flag alone is not trainsim's balanced split).
Status AccountedSplitLayout(const MegatronReading& r, const ModelSpec& m, Strategy& s) {
  if (!(r.split_embedding || r.split_loss) || s.pp <= 1 || !s.pipeline_layout.empty() ||
      s.first_stage_layers > 0 || s.last_stage_layers > 0)
    return Status::Ok();
  const int chunks = s.pp * std::max(1, s.vpp);
  const int total = m.layers + r.split_embedding + r.split_loss;
  const char* flag = r.split_embedding ? "--account-for-embedding-in-pipeline-split"
                                       : "--account-for-loss-in-pipeline-split";
  if (total % chunks != 0 || total / chunks < 1 + (chunks == 1))
    return Status::Invalid(flag, "--num-layers " + std::to_string(m.layers) + " + " +
                                     std::to_string(total - m.layers) +
                                     " must be divisible by pp x vpp (" + std::to_string(chunks) +
                                     ") (Megatron-LM's rule)");
  std::vector<int> chunk_layers(static_cast<size_t>(chunks), total / chunks);
  chunk_layers.front() -= r.split_embedding;
  chunk_layers.back() -= r.split_loss;
  s.pipeline_layout = PipelineLayoutOfChunks(chunk_layers, m.mtp_layers);
  s.uneven_pipeline = false;
  return Status::Ok();
}

}  // namespace

std::string PipelineLayoutOfChunks(const std::vector<int>& chunk_layers, int mtp_layers) {
  std::string layout;
  for (size_t c = 0; c < chunk_layers.size(); ++c) {
    if (c > 0) layout += '|';
    if (c == 0) layout += 'E';
    if (chunk_layers[c] > 0) layout += "t*" + std::to_string(chunk_layers[c]);
    if (c + 1 == chunk_layers.size())
      layout += std::string(static_cast<size_t>(std::max(0, mtp_layers)), 'm') + 'L';
  }
  return layout;
}

Result<ModelSpec> ResolveMegatronModel(const MegatronReading& r, const ModelSpec* preset,
                                       Strategy& s) {
  // Hybrid Mamba stacks (pretrain_mamba.py): refused by name, never costed as a transformer.
  for (const char* f :
       {"--hybrid-attention-ratio", "--hybrid-mlp-ratio", "--hybrid-override-pattern"})
    if (r.shape.count(f))
      return Status::Invalid(f,
                             "a hybrid Mamba model (Mamba layers mixed with attention and "
                             "MLP layers) is not modelled");
  ModelSpec m;
  if (preset) {
    if (Status st = CheckAgainst(r.shape, *preset); !st.ok()) return st;
    m = *preset;
  } else {
    auto built = ModelFromMegatronShape(r.shape);
    if (!built.ok()) return built.status();
    m = std::move(built).value();
    // Megatron-LM pads the vocabulary to a multiple of --make-vocab-size-divisible-by times the
    // tensor-parallel size (_vocab_size_with_padding, megatron/training/tokenizer), unless the
    // padded size is given.
    if (r.shape.count("--vocab-size") && !r.shape.count("--padded-vocab-size") &&
        !r.shape.count("--pad-vocab-size-to")) {
      const auto div = r.shape.find("--make-vocab-size-divisible-by");
      long long d = 128;
      if (div != r.shape.end() && !detail::ParseIntText(div->second, 1, 1 << 30, d).ok()) d = 128;
      const long long multiple = d * std::max(1, s.tp);
      const long long vocab = std::stoll(r.shape.at("--vocab-size"));
      m.vocab = (vocab + multiple - 1) / multiple * multiple;
    }
  }
  const int extra = r.split_embedding + r.split_loss;
  if (r.layers_per_virtual_stage > 0) {
    // validate_args: --num-layers plus one for each --account-for-*-in-pipeline-split, divided
    // over the stages, then by the layers per virtual stage.
    const int layers = m.layers + extra;
    const int per_stage = layers / std::max(1, s.pp);
    if (layers % s.pp != 0 || per_stage % r.layers_per_virtual_stage != 0)
      return Status::Invalid(
          "--num-layers-per-virtual-pipeline-stage",
          std::to_string(r.layers_per_virtual_stage) +
              " must divide the layers per pipeline stage (" + std::to_string(m.layers) +
              (extra > 0 ? " + " + std::to_string(extra) + " for the embedding / loss"
                         : std::string()) +
              " / pp " + std::to_string(s.pp) + ")");
    s.vpp = per_stage / r.layers_per_virtual_stage;
  }
  if (Status st = AccountedSplitLayout(r, m, s); !st.ok()) return st;
  if (!s.pipeline_layout.empty()) {  // the flag's errors name the flag
    auto l = ParsePipelineLayout(s.pipeline_layout, s.pp);
    if (!l.ok()) return l.status();
    if (Status st = CheckPipelineLayout(*l, s.pp, m.layers, m.mtp_layers, kPipelineLayoutFlag);
        !st.ok())
      return st;
    s.vpp = l->vpp;
  }
  return m;
}

}  // namespace trainsim

// Megatron-LM's --pipeline-model-parallel-layout and the other arguments that need the model
// (trainsim/megatron.h: ParsePipelineLayout, ResolveMegatronModel). The layout grammar is
// Megatron-Core's PipelineParallelLayerLayout.parse_str_to_list
// (megatron/core/transformer/pipeline_parallel_layer_layout.py): stages split by '|', E the
// embedding, t a decoder layer, m an MTP layer, L the loss, "(...)*n" and "x*n" repeat, commas
// are cosmetic; stage i of the list is chunk i (vpp rank i / pp, pp rank i % pp).
#include <cctype>
#include <string>

#include "spec/field_text.h"
#include "spec/pipeline_split.h"
#include "trainsim/megatron.h"

namespace trainsim {
namespace {

constexpr char kLayoutFlag[] = "--pipeline-model-parallel-layout";

// Unrolls "(...)*n" (no nesting) and "x*n".
Result<std::string> Unroll(std::string_view in) {
  std::string s;
  for (char c : in)
    if (c != ',' && c != ' ' && c != '"' && c != '\'') s += c;
  auto count = [&](size_t& i, long long& n) {
    size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j == i || j - i > 5) return false;
    n = std::stoll(s.substr(i, j - i));
    i = j;
    return true;
  };
  std::string out;
  for (size_t i = 0; i < s.size();) {
    std::string unit;
    if (s[i] == '(') {
      const size_t close = s.find(')', i);
      if (close == std::string::npos) return Status::Invalid(kLayoutFlag, "unmatched (");
      unit = s.substr(i + 1, close - i - 1);
      i = close + 1;
    } else {
      unit = s.substr(i++, 1);
    }
    long long n = 1;
    if (i < s.size() && s[i] == '*') {
      ++i;
      if (!count(i, n))
        return Status::Invalid(kLayoutFlag, "'*' must be followed by a repeat count");
    }
    for (long long r = 0; r < n; ++r) out += unit;
    if (out.size() > 100000) return Status::Invalid(kLayoutFlag, "too long");
  }
  return out;
}

std::string Join(const std::vector<int>& v) {
  std::string s;
  for (int x : v) {  // appended piecewise: `"," + to_string(x)` trips GCC 12's -Wrestrict
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}

}  // namespace

Result<PipelineLayout> ParsePipelineLayout(std::string_view layout, int pp) {
  auto flat = Unroll(layout);
  if (!flat.ok()) return flat.status();
  PipelineLayout out;
  out.chunk_layers.push_back(0);
  int embedding = 0, loss = 0;
  for (char c : flat.value()) {
    const size_t chunk = out.chunk_layers.size() - 1;
    if (c == '|') {
      out.chunk_layers.push_back(0);
    } else if (c == 't') {
      ++out.chunk_layers.back();
    } else if (c == 'm') {
      ++out.mtp_layers;
    } else if (c == 'E') {
      if (chunk != 0) return Status::Invalid(kLayoutFlag, "the embedding E must be first");
      ++embedding;
    } else if (c == 'L') {
      ++loss;
    } else {
      return Status::Invalid(kLayoutFlag, std::string("unknown layer '") + c +
                                              "' (known: E embedding, t decoder, m MTP, L loss)");
    }
  }
  if (embedding != 1 || loss != 1)
    return Status::Invalid(kLayoutFlag, "must hold the embedding E and the loss L once each");
  const std::string s = flat.value();
  if (s.back() != 'L') return Status::Invalid(kLayoutFlag, "the loss L must be last");
  const int chunks = static_cast<int>(out.chunk_layers.size());
  if (pp < 1 || chunks % pp != 0)
    return Status::Invalid(
        kLayoutFlag,
        std::to_string(chunks) + " stages must be a multiple of pp (" + std::to_string(pp) + ")");
  out.vpp = chunks / pp;
  return out;
}

namespace {

// The first / last stage layers (or none) under which trainsim's split equals the layout's.
Status ApplyLayout(const std::string& text, const ModelSpec& m, Strategy& s) {
  auto lay = ParsePipelineLayout(text, s.pp);
  if (!lay.ok()) return lay.status();
  const PipelineLayout& l = lay.value();
  int layers = 0;
  for (int n : l.chunk_layers) layers += n;
  if (layers != m.layers || l.mtp_layers != m.mtp_layers)
    return Status::Invalid(kLayoutFlag,
                           "'" + text + "' holds " + std::to_string(layers) + " decoder and " +
                               std::to_string(l.mtp_layers) + " MTP layers; the model has " +
                               std::to_string(m.layers) + " and " + std::to_string(m.mtp_layers));
  s.vpp = l.vpp;
  std::vector<int> stage(s.pp, 0);
  for (size_t c = 0; c < l.chunk_layers.size(); ++c) stage[c % s.pp] += l.chunk_layers[c];
  const std::pair<int, int> candidates[] = {
      {0, 0}, {stage.front(), stage.back()}, {stage.front(), 0}, {0, stage.back()}};
  for (const auto& [first, last] : candidates) {
    Strategy t = s;
    t.first_stage_layers = s.pp > 1 ? first : 0;
    t.last_stage_layers = s.pp > 1 ? last : 0;
    if (!detail::CheckPipelineSplit(t, m).ok()) continue;
    if (PipelineChunkLayers(t, m.layers, m.mtp_layers) != l.chunk_layers) continue;
    s = t;
    return Status::Ok();
  }
  return Status::Invalid(
      kLayoutFlag, "'" + text + "' puts " + Join(l.chunk_layers) +
                       " decoder layers on the pipeline chunks; trainsim represents an even "
                       "split, Megatron-LM's balanced split (embedding and loss counted as "
                       "layers) or first/last-stage layers with even middle stages, not this one");
}

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

}  // namespace

Result<ModelSpec> ResolveMegatronModel(const MegatronReading& r, const ModelSpec* preset,
                                       Strategy& s) {
  ModelSpec m;
  if (preset) {
    if (Status st = CheckAgainst(r.shape, *preset); !st.ok()) return st;
    m = *preset;
  } else {
    auto built = ModelFromMegatronShape(r.shape);
    if (!built.ok()) return built.status();
    m = std::move(built).value();
  }
  if (r.layers_per_virtual_stage > 0) {
    const int per_stage = m.layers / std::max(1, s.pp);
    if (m.layers % s.pp != 0 || per_stage % r.layers_per_virtual_stage != 0)
      return Status::Invalid("--num-layers-per-virtual-pipeline-stage",
                             std::to_string(r.layers_per_virtual_stage) +
                                 " must divide the layers per pipeline stage (" +
                                 std::to_string(m.layers) + " / pp " + std::to_string(s.pp) + ")");
    s.vpp = per_stage / r.layers_per_virtual_stage;
  }
  if (!r.pipeline_layout.empty())
    if (Status st = ApplyLayout(r.pipeline_layout, m, s); !st.ok()) return st;
  return m;
}

}  // namespace trainsim

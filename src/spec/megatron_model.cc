// A ModelSpec from Megatron-LM's model-shape arguments, with Megatron-LM's defaults for the
// absent ones (megatron/training/arguments.py and TransformerConfig), and the check of a --model
// against them (trainsim/megatron.h).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "spec/field_text.h"
#include "spec/model_keys.h"
#include "trainsim/megatron.h"

namespace trainsim {
namespace {

using Shape = std::map<std::string, std::string>;

bool Has(const Shape& s, const char* f) {
  return s.count(f) > 0;
}

// An integer argument, or `def` when absent.
Status Int(const Shape& s, const char* f, int64_t def, int64_t& out) {
  const auto it = s.find(f);
  if (it == s.end()) {
    out = def;
    return Status::Ok();
  }
  long long v = 0;
  if (Status st = detail::ParseIntText(it->second, 0, 1LL << 40, v); !st.ok())
    return Status::Invalid(f, st.message());
  out = v;
  return Status::Ok();
}

double Number(const Shape& s, const char* f, double def) {
  const auto it = s.find(f);
  double v = def;
  if (it != s.end() && !detail::ParseNumberText(it->second, 0, 1, v).ok()) v = def;
  return v;
}

// A Megatron-LM pattern argument (moe_freq_type / _eval_pattern in megatron/training/
// arguments.py): a Python list expression of 0/1 items, brackets, parentheses, '+' and '*', e.g.
// "[0]*3+[1]*58", "([1]*3+[0]*1)*3" (the help text's example), "3*[1]". Grammar: sum := product
// ('+' product)*; product := [n '*'] atom ('*' n)*; atom := '[' item (',' item)* ']' | '(' sum
// ')'. At most 2^20 items and 64 nested parentheses.
class PatternParser {
 public:
  explicit PatternParser(std::string t) : t_(std::move(t)) {}
  bool Parse(std::vector<int>& out) { return Sum(out) && i_ == t_.size(); }

 private:
  static constexpr size_t kMaxItems = size_t{1} << 20;
  bool Eat(char c) {
    if (i_ < t_.size() && t_[i_] == c) return ++i_, true;
    return false;
  }
  bool Count(long long& n) {
    size_t j = i_;
    while (j < t_.size() && t_[j] >= '0' && t_[j] <= '9') ++j;
    if (j == i_ || !detail::ParseIntText(t_.substr(i_, j - i_), 0, kMaxItems, n).ok()) return false;
    i_ = j;
    return true;
  }
  bool Repeat(std::vector<int>& v, long long n) {
    if (v.size() * static_cast<size_t>(n) > kMaxItems) return false;
    std::vector<int> once = v;
    v.clear();
    for (long long k = 0; k < n; ++k) v.insert(v.end(), once.begin(), once.end());
    return true;
  }
  bool Atom(std::vector<int>& out) {
    if (Eat('(')) {
      if (++depth_ > 64 || !Sum(out) || !Eat(')')) return false;
      --depth_;
      return true;
    }
    if (!Eat('[')) return false;
    do {
      if (i_ >= t_.size() || (t_[i_] != '0' && t_[i_] != '1')) return false;
      out.push_back(t_[i_++] - '0');
    } while (Eat(','));
    return Eat(']');
  }
  bool Product(std::vector<int>& out) {
    long long n = 1, m = 1;
    if (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9' && !(Count(n) && Eat('*'))) return false;
    std::vector<int> v;
    if (!Atom(v) || !Repeat(v, n)) return false;
    while (Eat('*'))
      if (!Count(m) || !Repeat(v, m)) return false;
    if (out.size() + v.size() > kMaxItems) return false;
    out.insert(out.end(), v.begin(), v.end());
    return true;
  }
  bool Sum(std::vector<int>& out) {
    if (!Product(out)) return false;
    while (Eat('+'))
      if (!Product(out)) return false;
    return true;
  }
  std::string t_;
  size_t i_ = 0;
  int depth_ = 0;
};

// The text without blanks and quotes (a script's '([1]*48)' arrives quoted or not).
std::string StripPattern(const std::string& text) {
  std::string t;
  for (char c : text)
    if (c != ' ' && c != '\'' && c != '"') t += c;
  return t;
}

// The expanded list, or empty when the text is not a pattern expression.
std::vector<int> ExpandPattern(const std::string& t) {
  std::vector<int> pattern;
  if (!PatternParser(t).Parse(pattern)) pattern.clear();
  return pattern;
}

// --moe-layer-freq: N (every N-th layer, layer 0 included) or a Python list expression such as
// "[0]*3+[1]*58" / "([1]*48)": leading dense layers, then a period.
Status MoeLayerPattern(const std::string& text, int layers, MoeSpec& moe) {
  const std::string t = StripPattern(text);
  if (!t.empty() && t[0] != '[' && t[0] != '(' && t.find('*') == std::string::npos) {
    long long n = 0;
    if (Status st = detail::ParseIntText(t, 1, layers, n); !st.ok())
      return Status::Invalid("--moe-layer-freq", st.message());
    moe.layer_freq = static_cast<int>(n);
    return Status::Ok();
  }
  const std::vector<int> pattern = ExpandPattern(t);
  if (static_cast<int>(pattern.size()) != layers)
    return Status::Invalid("--moe-layer-freq",
                           "'" + text + "' must list " + std::to_string(layers) + " layers of 0/1");
  int k = 0;
  while (k < layers && pattern[k] == 0) ++k;
  int freq = 1;
  while (k + freq < layers && pattern[k + freq] == 0) ++freq;
  for (int i = k; i < layers; ++i)
    if (pattern[i] != ((i - k) % freq == 0 ? 1 : 0))
      return Status::Invalid("--moe-layer-freq",
                             "'" + text +
                                 "' cannot be represented: trainsim takes leading dense layers "
                                 "followed by every N-th layer MoE");
  moe.first_k_dense = k;
  moe.layer_freq = freq;
  return Status::Ok();
}

// Sliding-window attention (megatron/training/arguments.py, GPT-OSS era): --window-size L,R is
// Transformer Engine's (left, right) window (tuple_type "128,0"; a negative left side means no
// limit); --window-attn-skip-freq N makes one layer in N full attention ("one full attention
// layer after (N-1) SWA layers"), or a list expression names each layer (1 = SWA, 0 = full).
// Without --window-attn-skip-freq every layer is windowed. A query at i sees keys i - left .. i +
// right inclusive (flash_attn_func's window_size docstring), so trainsim's window (tokens seen,
// the query itself included) is left + 1; the right side must be 0 (causal).
Status WindowAttention(const Shape& s, ModelSpec& m) {
  const auto ws = s.find("--window-size");
  if (ws == s.end()) {
    if (Has(s, "--window-attn-skip-freq"))
      return Status::Invalid("--window-attn-skip-freq", "acts only with --window-size");
    return Status::Ok();
  }
  std::string t;  // tuple_type: "128,0" or "(128,0)"
  for (char c : StripPattern(ws->second))
    if (c != '(' && c != ')') t += c;
  const size_t comma = t.find(',');
  long long left = 0, right = 0;
  if (comma == std::string::npos ||
      !detail::ParseIntText(t.substr(0, comma), -1, 1LL << 30, left).ok() ||
      !detail::ParseIntText(t.substr(comma + 1), -1, 1LL << 30, right).ok())
    return Status::Invalid("--window-size", "'" + ws->second +
                                                "' must be two integers LEFT,RIGHT (Transformer "
                                                "Engine's window, e.g. 128,0)");
  if (right != 0)
    return Status::Invalid("--window-size", "a right-hand window (" + std::to_string(right) +
                                                ") is not causal attention; only RIGHT = 0 is "
                                                "representable");
  if (left < 0) return Status::Ok();  // (-1, 0): no limit
  int windowed = m.layers;
  const auto skip = s.find("--window-attn-skip-freq");
  if (skip != s.end()) {
    const std::string p = StripPattern(skip->second);
    if (!p.empty() && (p[0] == '[' || p[0] == '(' || p.find('*') != std::string::npos)) {
      const std::vector<int> pattern = ExpandPattern(p);
      if (static_cast<int>(pattern.size()) != m.layers)
        return Status::Invalid(
            "--window-attn-skip-freq",
            "'" + skip->second + "' must list " + std::to_string(m.layers) + " layers of 0/1");
      windowed = 0;
      for (int v : pattern) windowed += v;
    } else {
      long long n = 0;
      if (Status st = detail::ParseIntText(p, 1, 1LL << 30, n); !st.ok())
        return Status::Invalid("--window-attn-skip-freq", st.message());
      windowed = m.layers - static_cast<int>(m.layers / n);
    }
  }
  if (windowed == 0) return Status::Ok();
  m.attention.kind = AttentionKind::kSlidingWindow;
  m.attention.window = left + 1;
  m.attention.window_layers = windowed;
  return Status::Ok();
}

Status Attention(const Shape& s, ModelSpec& m) {
  int64_t heads = 0, groups = 0;
  if (Status st = Int(s, "--num-attention-heads", 0, heads); !st.ok()) return st;
  m.heads = static_cast<int>(heads);
  if (Status st = Int(s, "--num-query-groups", 1, groups); !st.ok()) return st;
  m.kv_heads = Has(s, "--group-query-attention") ? static_cast<int>(groups) : m.heads;
  // Megatron-LM's validate_args asserts hidden % heads == 0 when --kv-channels is not given.
  if (!Has(s, "--kv-channels") && !Has(s, "--multi-latent-attention") && heads > 0 &&
      m.hidden % heads != 0)
    return Status::Invalid("--kv-channels", "not given, and --hidden-size (" +
                                                std::to_string(m.hidden) +
                                                ") is not divisible by --num-attention-heads (" +
                                                std::to_string(heads) + ")");
  if (Status st = Int(s, "--kv-channels", heads > 0 ? m.hidden / heads : 0, m.head_dim); !st.ok())
    return st;
  m.qk_norm = Has(s, "--qk-layernorm");
  if (!Has(s, "--multi-latent-attention")) return Status::Ok();
  // The argparse defaults of megatron/training/arguments.py (_add_mla_args): --q-lora-rank None
  // (no query compression), --kv-lora-rank 32, --qk-head-dim 128, --qk-pos-emb-head-dim 64,
  // --v-head-dim 128. They, not MLATransformerConfig's own defaults (kv_lora_rank 512), reach
  // the model: core_transformer_config_from_args copies every argument whose name is a config
  // field (NVIDIA/Megatron-LM @ 000c4ac2).
  if (Status st = Int(s, "--q-lora-rank", 0, m.mla.q_lora_rank); !st.ok()) return st;
  if (Status st = Int(s, "--kv-lora-rank", 32, m.mla.kv_lora_rank); !st.ok()) return st;
  // --qk-nope-head-dim / --qk-rope-head-dim: the older spellings (PAI-Megatron-Patch, MindSpeed,
  // which names them deprecated aliases of --qk-head-dim / --qk-pos-emb-head-dim).
  const char* nope = Has(s, "--qk-head-dim") || !Has(s, "--qk-nope-head-dim")
                         ? "--qk-head-dim"
                         : "--qk-nope-head-dim";
  const char* rope = Has(s, "--qk-pos-emb-head-dim") || !Has(s, "--qk-rope-head-dim")
                         ? "--qk-pos-emb-head-dim"
                         : "--qk-rope-head-dim";
  if (Status st = Int(s, nope, 128, m.mla.qk_nope_head_dim); !st.ok()) return st;
  if (Status st = Int(s, rope, 64, m.mla.qk_rope_head_dim); !st.ok()) return st;
  if (Status st = Int(s, "--v-head-dim", 128, m.mla.v_head_dim); !st.ok()) return st;
  return Status::Ok();
}

Status Moe(const Shape& s, ModelSpec& m) {
  int64_t experts = 0, topk = 0, mtp = 0;
  if (Status st = Int(s, "--mtp-num-layers", 0, mtp); !st.ok()) return st;
  // PAI-Megatron-Patch's spelling (examples/deepseek_v3/run_mcore_deepseek.sh):
  // --use-multi-token-prediction with --num-mtp-predictor N modules.
  // Its default module count was not found in a published source: the count is required.
  if (!Has(s, "--mtp-num-layers") && Has(s, "--use-multi-token-prediction")) {
    if (!Has(s, "--num-mtp-predictor"))
      return Status::Invalid("--num-mtp-predictor",
                             "required with --use-multi-token-prediction (PAI-Megatron-Patch's "
                             "MTP module count; trainsim does not guess it)");
    if (Status st = Int(s, "--num-mtp-predictor", 1, mtp); !st.ok()) return st;
  }
  m.mtp_layers = static_cast<int>(mtp);
  if (Status st = Int(s, "--num-experts", 0, experts); !st.ok()) return st;
  if (experts == 0) return Status::Ok();
  m.moe.num_experts = static_cast<int>(experts);
  if (Status st = Int(s, "--moe-router-topk", 2, topk); !st.ok()) return st;  // Megatron: 2
  m.moe.top_k = static_cast<int>(topk);
  if (Status st = Int(s, "--moe-ffn-hidden-size", m.ffn, m.moe.expert_ffn); !st.ok()) return st;
  if (Status st = Int(s, "--moe-shared-expert-intermediate-size", 0, m.moe.shared_ffn); !st.ok())
    return st;
  if (Has(s, "--moe-layer-freq")) return MoeLayerPattern(s.at("--moe-layer-freq"), m.layers, m.moe);
  return Status::Ok();
}

}  // namespace

Result<ModelSpec> ModelFromMegatronShape(const Shape& s) {
  std::string missing;
  for (const char* f : {"--num-layers", "--hidden-size", "--num-attention-heads"})
    if (!Has(s, f)) missing += std::string(missing.empty() ? "" : ", ") + f;
  if (!Has(s, "--vocab-size") && !Has(s, "--padded-vocab-size") && !Has(s, "--pad-vocab-size-to"))
    missing += std::string(missing.empty() ? "" : ", ") + "--vocab-size";
  if (!missing.empty())
    return Status::Invalid("model", "the Megatron-LM arguments do not describe a model (missing " +
                                        missing + "); give them or --model");
  ModelSpec m;
  m.name = "megatron-args";
  int64_t layers = 0, vocab = 0, divisible = 0, positions = 0;
  if (Status st = Int(s, "--num-layers", 0, layers); !st.ok()) return st;
  m.layers = static_cast<int>(layers);
  if (Status st = Int(s, "--hidden-size", 0, m.hidden); !st.ok()) return st;
  // --glu-activation swiglu|geglu|reglu|liglu: epfLLM/Megatron-LLM's gated MLPs. --quick-geglu
  // (GPT-OSS) is gated too: core_transformer_config_from_args sets gated_linear_unit with the
  // quick_gelu activation (megatron/training/arguments.py).
  const bool swiglu = Has(s, "--swiglu") || Has(s, "--glu-activation");
  m.gated_mlp = swiglu || Has(s, "--quick-geglu");
  // ffn_hidden_size defaults to 4h, with SwiGLU to int((4h * 2/3) / 64) * 64 (arguments.py
  // validate_args: only `if args.swiglu`; --quick-geglu keeps 4h).
  const int64_t ffn = swiglu ? (4 * m.hidden * 2 / 3) / 64 * 64 : 4 * m.hidden;
  if (Status st = Int(s, "--ffn-hidden-size", ffn, m.ffn); !st.ok()) return st;
  if (Status st = Attention(s, m); !st.ok()) return st;
  // The vocabulary padded to a multiple of --make-vocab-size-divisible-by (default 128); the
  // further factor tp of Megatron-LM's padding is applied by ResolveMegatronModel, which has it.
  if (Status st = Int(s, "--make-vocab-size-divisible-by", 128, divisible); !st.ok()) return st;
  if (Status st = Int(s, "--vocab-size", 0, vocab); !st.ok()) return st;
  divisible = std::max<int64_t>(1, divisible);
  m.vocab = (vocab + divisible - 1) / divisible * divisible;
  if (Status st = Int(s, "--padded-vocab-size", m.vocab, m.vocab); !st.ok()) return st;
  // BigScience's Megatron-DeepSpeed: the tokenizer's vocabulary padded to exactly this size
  // (its arguments.py; BLOOM's 250 680 tokens padded to 250 880).
  if (Status st = Int(s, "--pad-vocab-size-to", m.vocab, m.vocab); !st.ok()) return st;
  m.tied_embeddings =
      !Has(s, "--untie-embeddings-and-output-weights") && !Has(s, "--no-tie-embed-logits");
  const auto norm = s.find("--normalization");
  m.layernorm = (norm == s.end() || norm->second == "LayerNorm") &&  // Megatron's default
                !Has(s, "--use-rms-norm");                           // Megatron-LLM's RMSNorm
  m.linear_bias = !Has(s, "--disable-bias-linear");  // add_bias_linear defaults to True
  m.qkv_bias = Has(s, "--add-qkv-bias") && !m.linear_bias;
  const auto pos = s.find("--position-embedding-type");
  const bool learned = (pos == s.end() || pos->second == "learned_absolute") &&
                       !Has(s, "--use-rotary-position-embeddings") &&
                       !Has(s, "--no-position-embedding");
  if (Status st = Int(s, "--max-position-embeddings", 0, positions); !st.ok()) return st;
  m.learned_pos_emb = learned ? positions : 0;
  // hidden and attention dropout default to 0.1.
  m.dropout = Number(s, "--hidden-dropout", 0.1) > 0 || Number(s, "--attention-dropout", 0.1) > 0;
  if (Status st = Moe(s, m); !st.ok()) return st;
  if (Status st = WindowAttention(s, m); !st.ok()) return st;
  if (Status st = ValidateModel(m); !st.ok())
    return detail::InMegatronArgs(st, m).WithContext("megatron model arguments");
  return m;
}

}  // namespace trainsim

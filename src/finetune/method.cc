// Fine-tuning methods and stages applied to the layer ops, the parameter groups and the
// strategy a step runs (docs/FINETUNE.md).
#include "finetune/method.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "cost/cost.h"
#include "finetune/modules.h"
#include "trainsim/limits.h"
#include "util/units.h"

namespace trainsim::finetune {
namespace {

using graph::Op;
using graph::OpKind;

// The LoraTarget bits a base GEMM of graph.cc computes.
int GemmTargets(const char* name) {
  auto is = [&](const char* n) { return std::strcmp(name, n) == 0; };
  if (is("qkv_proj")) return kLoraQ | kLoraK | kLoraV;
  if (is("attn_out_proj")) return kLoraO;
  if (is("fc1") || is("shared_fc1")) return kLoraGate | kLoraUp;
  if (is("fc2") || is("shared_fc2")) return kLoraDown;
  return 0;  // router, routed experts, lm_head
}

// Methods whose adapter reads the base GEMM's input in its backward (A's weight gradient).
bool AdapterReadsInput(FtMethod m) {
  switch (m) {
    case FtMethod::kLora:
    case FtMethod::kQlora:
    case FtMethod::kPissa:
    case FtMethod::kAdalora:
    case FtMethod::kDora:
    case FtMethod::kVera:
    case FtMethod::kLoha:
    case FtMethod::kLokr:
      return true;
    default:
      return false;
  }
}

// auto-gptq's trainable QuantLinear (nn_modules/qlinear/qlinear_cuda_old.py and qlinear_cuda.py,
// forward when the CUDA extension is disabled for training) unpacks a 4-bit weight with PyTorch
// element-wise ops; HBM bytes per weight of each: bitwise_right_shift over the expanded int32
// qweight (read 0.5, write int32 4), .to(int8) (4 + 1), bitwise_and (1 + 1), then
// `scales[g_idx.long()] * (weight - zeros[g_idx.long()])`: the two g_idx gathers materialise the
// per-row zeros (int8, write 1) and scales (fp16, write 2) as full in x out matrices, the
// subtraction reads both int8 operands (1 + 1 + 1) and the product both operands (2 + 1 + 2):
// 22.5 bytes; 13 kernels (4 unpack the zeros, 2 g_idx.long(), 2 gathers).
constexpr double kTorchUnpackBytesPerWeight =
    0.5 + 4 + (4 + 1) + (1 + 1) + 1 + (1 + 1 + 1) + 2 + (2 + 1 + 2);
constexpr int kTorchUnpackKernels = 13;
// Host time of one of those kernels against an average eager kernel of a training step: the
// chain runs on tensors that need no gradient (no autograd node), like a plain op in a Python
// loop, 12.8 us per element-wise op (eager_add_256) against 36.5 us per kernel of an eager
// forward + backward (tiny12_fwd_bwd_per_kernel), both measured on one host
// (data/measurements/h100_small_kernels.csv).
constexpr double kUnpackHostShare = 12.8 / 36.5;

// QLoRA: every base linear is stored in 4 bits and dequantised to 16 bits before its GEMM.
// Fused (bitsandbytes matmul_4bit, torchao NF4 linear): read 4.127 bits and write 16 per
// weight, in forward and again in backward for the data gradient. Torch unpack (auto-gptq):
// the element-wise chain above in forward only; autograd saves the dequantised weight.
void AppendDequant(const Strategy& s, const std::vector<Op>& ops, size_t first, size_t last,
                   std::vector<Op>& out) {
  const bool torch_unpack = s.exec.dequant == DequantKernel::kTorchUnpack;
  for (size_t i = first; i < last; ++i) {
    const Op g = ops[i];  // a copy: `ops` may be `out`, which grows
    if (g.kind != OpKind::kGemm || std::strcmp(g.name, "router") == 0) continue;
    Op d;
    d.name = torch_unpack ? "gptq_unpack" : "nf4_dequant";
    d.kind = OpKind::kMemory;
    const double weights = g.k * g.n * g.batch;
    d.bytes = weights *
              (torch_unpack ? kTorchUnpackBytesPerWeight : kNf4BytesPerParam + units::kBf16Bytes);
    d.bwd_bytes_factor = torch_unpack ? 0 : 1;
    d.fwd_kernels = torch_unpack ? kTorchUnpackKernels : 1;
    d.bwd_kernels = torch_unpack ? 0 : 1;
    // Eager, one by one, each at the host cost of a plain op (kUnpackHostShare).
    if (torch_unpack) d.host_weight = kUnpackHostShare / cost::kEagerKernelsPerGraphKernel;
    out.push_back(d);
  }
}

// Prefix tuning: every layer's attention also attends to the trained key/value prefix.
void AppendPrefixAttention(const ModelSpec& m, const Strategy& s, const graph::Shape& sh,
                           std::vector<Op>& out) {
  const double nv = VirtualTokens(s), heads = static_cast<double>(m.heads) / s.tp;
  const double b = sh.batch, sq = sh.tokens / b, d = static_cast<double>(m.head_dim);
  Op op;
  op.name = "prefix_attention";
  op.kind = OpKind::kAttention;
  op.flops = 2.0 * b * sq * nv * heads * 2 * d;
  op.bwd_flops_factor = 2.5;
  op.m = sq, op.n = nv, op.k = d, op.batch = b * heads;
  out.push_back(op);
}

}  // namespace

int VirtualTokens(const Strategy& s) {
  return s.virtual_tokens;
}

bool EmbeddingsTrained(const Strategy& s) {
  return s.method == FtMethod::kFull || (IsPeftMethod(s.method) && s.train_embeddings);
}

int FrozenLayers(const ModelSpec& m, const Strategy& s) {
  if (s.method != FtMethod::kFreeze) return 0;
  // LLaMA-Factory freeze_trainable_layers default 2: the last two layers train.
  const int frozen = s.freeze_layers >= 0 ? s.freeze_layers : m.layers - 2;
  return std::clamp(frozen, 0, m.layers);
}

int ScoringForwards(const Strategy& s) {
  if (!HasReferenceModel(s.stage) || s.precompute_ref) return 0;
  // KTO: the reference scores the batch and the KL batch, the policy the KL batch without
  // gradient (TRL KTOTrainer, calculate_KL).
  return s.stage == TrainStage::kKto ? 3 : 1;
}

Status CheckWorkload(const ModelSpec& m, const Strategy& s) {
  if (IsPeftMethod(s.method) && m.is_mla())
    return Status::Invalid("method: " + std::string(FtMethodName(s.method)) +
                           " adapters on MLA attention are not modelled");
  // An adapter rank beyond the hidden size holds more than the matrices it adapts (LoRA's A is
  // r x d_in, B d_out x r; OFT's r blocks divide d_in): a rank of 2^31 - 1 was costed at a day
  // a step without a word.
  if (IsPeftMethod(s.method) && s.lora_rank > m.hidden)
    return Status::Invalid("lora_rank: must be <= the model's hidden size (" +
                           std::to_string(m.hidden) + ")");
  // Prompt and prefix tokens lengthen every row (prompt / p-tuning) or every KV (prefix).
  if (IsPeftMethod(s.method) && s.virtual_tokens > limits::kMaxSeqLen - s.seq)
    return Status::Invalid("virtual_tokens: seq_len + virtual_tokens must be <= " +
                           std::to_string(limits::kMaxSeqLen));
  if (s.method == FtMethod::kFreeze && s.freeze_layers > m.layers)
    return Status::Invalid("freeze_layers: must be <= the model's layers (" +
                           std::to_string(m.layers) + ")");
  if (s.method == FtMethod::kOft)
    for (const Linear& l : LayerLinears(m, s, false))
      if (Adapted(s, l) && std::fmod(l.d_in, s.lora_rank) != 0)
        return Status::Invalid("lora_rank: OFT's blocks (r) must divide every adapted input (" +
                               std::to_string(static_cast<long long>(l.d_in)) + ")");
  return Status::Ok();
}

Strategy EffectiveStrategy(const Strategy& s) {
  Strategy e = s;
  if (s.packing && s.mean_seq > 0 && s.mean_seq < s.seq && e.dp() > 0) {
    // Packed rows of seq tokens hold seq/mean_seq samples each.
    const int mb = e.num_micro_batches();
    if (mb > 0) {
      e.micro_batch_num =
          std::max(1, static_cast<int>(std::ceil(static_cast<double>(mb) * s.mean_seq / s.seq)));
      e.gbs = e.micro_batch_num * e.mbs * e.dp();
    }
  }
  if (IsPairedStage(s.stage)) {
    e.mbs *= 2;
    if (e.gbs > 0) e.gbs *= 2;
  }
  if (s.method == FtMethod::kPromptTuning || s.method == FtMethod::kPTuning)
    e.seq += VirtualTokens(s);
  return e;
}

void BuildFrozenLayer(const ModelSpec& m, const Strategy& s, bool moe, std::vector<Op>& out) {
  const size_t first = out.size();
  graph::BuildLayer(m, s, graph::Pass{graph::MakeShape(m, s), false}, moe, out);
  if (s.method == FtMethod::kQlora) AppendDequant(s, out, first, out.size(), out);
  for (size_t i = first; i < out.size(); ++i) {
    out[i].param_tensors = 0;
    out[i].saved_bytes = out[i].saved_extra_bytes = 0;
  }
}

void BuildTrainLayer(const ModelSpec& m, const Strategy& s, bool moe, std::vector<Op>& out) {
  if (!IsPeftMethod(s.method)) {
    graph::BuildLayer(m, s, moe, out);
    return;
  }
  const size_t first = out.size();
  const graph::Shape shape = graph::MakeShape(m, s);
  graph::BuildLayer(m, s, graph::Pass{shape, false}, moe, out);
  const size_t base_end = out.size();
  // With lora_dropout the adapters read their dropped copies (saved by the dropout op).
  const bool reads_input = AdapterReadsInput(s.method) && !LoraDropoutApplies(s);
  int adapted = 0;
  for (const Linear& l : LayerLinears(m, s, moe))
    if (Adapted(s, l)) adapted |= l.target;
  for (size_t i = first; i < base_end; ++i) {
    Op& op = out[i];
    op.param_tensors = 0;  // the base is frozen: no optimizer work
    // A frozen GEMM needs only its weight for the data gradient; its input is kept where an
    // adapter's weight gradient reads it (PyTorch saves an operand only for a gradient that
    // is computed).
    if (op.kind == OpKind::kGemm && !(reads_input && (GemmTargets(op.name) & adapted)))
      op.saved_bytes = 0;
  }
  if (s.method == FtMethod::kQlora) AppendDequant(s, out, first, base_end, out);
  if (s.method == FtMethod::kPrefixTuning) AppendPrefixAttention(m, s, shape, out);
  for (const Linear& l : LayerLinears(m, s, moe))
    if (Adapted(s, l)) AppendModuleAdapter(s, l, shape.tokens, out);
}

double LayerAdapterParams(const ModelSpec& m, const Strategy& s, bool moe) {
  if (!IsPeftMethod(s.method)) return 0;
  if (s.method == FtMethod::kPrefixTuning)  // a key and a value prefix per layer
    return 2.0 * VirtualTokens(s) * m.kv_heads * m.head_dim / s.tp;
  double n = 0;
  for (const Linear& l : LayerLinears(m, s, moe))
    if (Adapted(s, l)) n += ModuleAdapterParams(s, l);
  return n;
}

}  // namespace trainsim::finetune

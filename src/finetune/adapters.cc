// The adapters of the PEFT methods as ops and parameter counts, per adapted linear module of a
// layer (Hugging Face PEFT 0.19 implementations; trainable counts checked against PEFT's printed
// counts in src/finetune/finetune_test.cc).
#include <algorithm>
#include <cmath>

#include "cost/cost.h"
#include "finetune/method.h"
#include "finetune/modules.h"
#include "util/units.h"

namespace trainsim::finetune {
namespace {

using graph::Op;
using graph::OpKind;
constexpr double kAct = units::kBf16Bytes;
// The adapters' ops count PEFT's eager kernels one by one (graph::Op::host_weight).
constexpr double kEagerHost = 1 / cost::kEagerKernelsPerGraphKernel;

// A thin GEMM (one side at most kThinSide, e.g. the rank r of an adapter) does a few FLOPs per
// byte it moves, far below any GPU's FLOP/byte balance (H100: 295): it is costed as the memory
// traffic of its operands and result, forward, and twice that backward when its weight is
// trained (data and weight gradients each read the same operands), once when frozen. The GEMM
// efficiency model is fitted on full-size GEMMs and would price a rank-8 GEMM at 0.1 % of peak.
constexpr double kThinSide = 256;
// Backward kernels of a trained thin GEMM: data gradient, weight gradient and autograd's
// accumulation into .grad.
constexpr int kThinTrainedBwdKernels = 3;

Op Gemm(const char* name, double m, double k, double n, double batch, double saved_bytes,
        bool trainable) {
  if (std::min({m, k, n}) <= kThinSide) {
    Op op;
    op.name = name;
    op.kind = OpKind::kMemory;
    op.flops = 2.0 * m * n * k * batch;
    op.bytes = (m * k + k * n + m * n) * batch * kAct;
    op.bwd_bytes_factor = trainable ? 2 : 1;
    // data gradient, weight gradient and autograd's accumulation into .grad (an add under
    // gradient accumulation)
    op.bwd_kernels = trainable ? kThinTrainedBwdKernels : 1;
    op.host_weight = kEagerHost;
    op.saved_bytes = saved_bytes;
    op.param_tensors = trainable ? batch : 0;
    op.weight_matrices = trainable ? batch : 0;
    return op;
  }
  Op op;
  op.name = name;
  op.kind = OpKind::kGemm;
  op.m = m, op.k = k, op.n = n, op.batch = batch;
  op.flops = 2.0 * m * n * k * batch;
  op.saved_bytes = saved_bytes;
  op.trainable = trainable;
  op.param_tensors = trainable ? batch : 0;
  op.host_weight = kEagerHost;
  if (!trainable) op.bwd_kernels = 1;
  return op;
}

// An element-wise pass of `passes` reads/writes of `elems` 16-bit values forward, and
// `bwd_passes` in backward (0: nothing).
Op Elementwise(const char* name, double elems, double passes, double bwd_passes, int kernels,
               double saved_bytes = 0) {
  Op op;
  op.name = name;
  op.kind = OpKind::kMemory;
  op.bytes = passes * elems * kAct;
  op.bwd_bytes_factor = passes > 0 ? bwd_passes / passes : 0;
  op.fwd_kernels = kernels;
  op.bwd_kernels = bwd_passes > 0 ? kernels : 0;
  op.host_weight = kEagerHost;
  op.saved_bytes = saved_bytes;
  return op;
}

// LoRA x -> B(A(x)) * scaling + base (PEFT tuners/lora/layer.py Linear.forward): two thin
// GEMMs, the scaling (read + write of T x d_out) and the add (two reads, one write): 5 passes;
// backward: the scaling's gradient (2 passes). A's input is the base GEMM's saved input.
void LoraOps(const Linear& l, double T, double r, bool trainable, std::vector<Op>& out) {
  out.push_back(Gemm("lora_a", T, l.d_in, r, 1, 0, trainable));
  out.push_back(Gemm("lora_b", T, r, l.d_out, 1, T * r * kAct, trainable));
  out.push_back(Elementwise("lora_scale_add", T * l.d_out, 5, 2, 2));
}

// lora_dropout > 0 (PEFT tuners/lora/layer.py Linear.forward: lora_B(lora_A(dropout(x))), one
// nn.Dropout per adapted module): torch's native_dropout reads x (2 bytes per element) and
// writes the dropped copy (2) and its mask (1); its backward reads the gradient and the mask
// and writes the input's gradient (5). The dropped copy (lora_A's input, for its weight
// gradient) and the mask are saved, in place of x.
void LoraDropoutOps(const Linear& l, double T, std::vector<Op>& out) {
  const double n = T * l.d_in;
  out.push_back(Elementwise("lora_dropout", n, 2.5, 2.5, 1, n * (kAct + 1)));
}

// DoRA (PEFT tuners/lora/dora.py DoraLinearLayer.forward): B@A materialised (d_out x r x d_in),
// the column norm of W + scaling*BA (read W and BA, write the sum, read it for the norm: 4
// passes over the matrix), detached from the graph as the DoRA paper (Liu et al. 2024,
// section 4.3) prescribes: no backward; then the magnitude rescaling of base and LoRA outputs
// (4 passes over T x d_out, 4 in backward).
// With lora_dropout the base output cannot be reused for the magnitude path (PEFT
// Linear.forward passes base_result None, DoraLinearLayer.forward recomputes F.linear on the
// dropped input): one more frozen T x d_in x d_out GEMM, forward and data gradient.
void DoraOps(const Linear& l, double T, double r, bool dropout, std::vector<Op>& out) {
  if (dropout) out.push_back(Gemm("dora_base_on_dropped", T, l.d_in, l.d_out, 1, 0, false));
  Op ba = Gemm("dora_lora_weight", l.d_out, r, l.d_in, 1, 0, false);
  ba.fwd_only = true;
  out.push_back(ba);
  Op norm = Elementwise("dora_weight_norm", l.d_in * l.d_out, 4, 0, 3);
  norm.fwd_only = true;
  out.push_back(norm);
  out.push_back(Elementwise("dora_magnitude", T * l.d_out, 4, 4, 3));
}

// LoHa / LoKr (PEFT tuners/loha, tuners/lokr): the delta weight is materialised every step and
// applied with a full-size F.linear, whose weight gradient is the delta's gradient. `freed`:
// gradients set to None each step with one micro-batch (no AccumulateGrad kernel, see below).
void DeltaWeightOps(const Linear& l, double T, double r, bool loha, bool freed,
                    std::vector<Op>& out) {
  const double w = l.d_in * l.d_out;
  if (loha) {
    // PEFT's HadaWeight (tuners/loha/layer.py, LyCORIS's autograd Function): forward
    // (w1a w1b) * (w2a w2b) * scale: two d_out x r x d_in GEMMs, the Hadamard product (3 passes)
    // and the scaling (2), 4 kernels. Its backward recomputes both products (two more GEMMs,
    // each writing the full matrix) and reads each of the two Hadamard-scaled gradients twice
    // for the four factor gradients: the GEMMs move 3x their forward bytes in 6 kernels (+4
    // AccumulateGrad); grad * scale (2 passes) and grad * (w2a w2b), grad * (w1a w1b) (3 each):
    // 8 passes in 3 kernels.
    Op factors = Gemm("loha_factors", l.d_out, r, l.d_in, 2, 0, true);
    factors.fwd_kernels = 2;
    factors.bwd_bytes_factor = 3;
    factors.bwd_kernels = 6 + (freed ? 0 : 4);
    factors.param_tensors = 4;  // w1a, w1b, w2a, w2b
    out.push_back(factors);
    Op hadamard = Elementwise("loha_hadamard", w, 5, 8, 2);
    hadamard.bwd_kernels = 3;
    out.push_back(hadamard);
  } else {
    // make_kron: torch.kron (w1 (x) w2: a broadcast multiply writing the full matrix) times the
    // scale (2 passes), 2 kernels. Backward through autograd: the scale's gradient (2 passes),
    // then for each factor the broadcast multiply by the other (read the gradient, write a
    // full-size product) and its reduction to the factor's shape (read it): 8 passes in 5
    // kernels (+2 AccumulateGrad).
    Op kron = Elementwise("lokr_kron", w, 3, 8, 2);
    kron.bwd_kernels = 5 + (freed ? 0 : 2);
    kron.param_tensors = 2;  // w1, w2
    out.push_back(kron);
  }
  // The delta is no parameter: its gradient flows back into the factors, not to an optimizer.
  out.push_back(Gemm(loha ? "loha_linear" : "lokr_linear", T, l.d_in, l.d_out, 1, 0, true));
  out.back().param_tensors = 0;
  out.push_back(Elementwise("delta_add", T * l.d_out, 3, 0, 1));
}

// OFT (PEFT tuners/oft): the input is rotated by a block-diagonal orthogonal matrix of r blocks
// of size b = d_in / r (a batched b x b GEMM per token, whose input is saved), built by the
// Cayley transform (I + Q)(I - Q)^-1 of every block each step (a solve: ~2 b^3 per block).
// The module trains one tensor (oft_r, all r blocks' skew parameters): the optimizer launches
// for one, not for every block of the batched GEMMs.
void OftOps(const Linear& l, double T, double r, std::vector<Op>& out) {
  const double b = l.d_in / r;
  out.push_back(Gemm("oft_cayley", b, b, b, 2 * r, 0, true));
  out.back().param_tensors = 1;  // oft_r
  out.push_back(Gemm("oft_rotate", T, b, b, r, T * l.d_in * kAct, true));
  out.back().m = T, out.back().flops = 2.0 * T * l.d_in * b;
  out.back().param_tensors = 0;
}

// BOFT (PEFT tuners/boft/layer.py Linear.forward, without the fbd CUDA extension, which sets
// boft_n_butterfly_factor to 1): every step builds a dense d_in x d_in rotation from the
// Cayley transforms of d_in/b blocks of b x b (torch.block_diag), multiplies it with the
// permutation matrices P^T and P (two d_in^3 bmm) and with the identity it starts from (a
// third), then rotates the frozen weight (d_in x d_in x d_out) and applies it with a full-size
// F.linear in place of the base layer's. Every product is on the gradient path to the blocks:
// each is a trained GEMM (twice its FLOPs in backward). The F.linear is the frozen base GEMM
// of the layer graph plus the weight gradient its rotated weight now needs: one more T x d_in x
// d_out GEMM, costed here once (placed in the forward; the step time is the same).
// The trained tensors are two per module (boft_R and boft_s): the optimizer's launches count
// those, not the GEMMs' batches.
void BoftOps(const Linear& l, double T, std::vector<Op>& out) {
  const double d = l.d_in, b = kBoftBlockSize;
  out.push_back(Gemm("boft_cayley", b, b, b, 2 * d / b, 0, true));
  out.back().param_tensors = 1;  // boft_R
  out.back().weight_matrices = 0;
  out.push_back(Elementwise("boft_block_diag", d * d, 1, 2, 1));
  out.push_back(Gemm("boft_permute", d, d, d, 3, 0, true));
  out.push_back(Gemm("boft_rotate_weight", d, d, l.d_out, 1, 0, true));
  out.push_back(Elementwise("boft_scale", d * l.d_out, 2, 3, 1));
  out.back().param_tensors = 1;  // boft_s
  for (size_t i = out.size() - 5; i < out.size(); ++i)
    if (out[i].kind == OpKind::kGemm) out[i].param_tensors = 0;
  Op wgrad = Gemm("boft_weight_grad", d, T, l.d_out, 1, 0, false);
  wgrad.fwd_only = true;
  out.push_back(wgrad);
}

}  // namespace

// Adapter ops of one module; `T` tokens per rank.
bool LoraDropoutApplies(const Strategy& s) {
  return s.lora_dropout > 0 && HasLoraDropout(s.method);
}

void AppendModuleAdapter(const Strategy& s, const Linear& l, double T, std::vector<Op>& out) {
  const double r = s.lora_rank;
  const bool dropout = LoraDropoutApplies(s);
  const size_t first = out.size();
  if (dropout) LoraDropoutOps(l, T, out);
  switch (s.method) {
    case FtMethod::kLora:
    case FtMethod::kQlora:
    case FtMethod::kPissa:
    case FtMethod::kAdalora:
      LoraOps(l, T, r, true, out);
      break;
    case FtMethod::kDora:
      LoraOps(l, T, r, true, out);
      DoraOps(l, T, r, dropout, out);
      break;
    case FtMethod::kVera:
      // Frozen shared A and B (no weight gradients); the trained vectors scale r and d_out.
      LoraOps(l, T, r, false, out);
      out.push_back(Elementwise("vera_scale", T * (r + l.d_out), 2, 4, 2));
      break;
    case FtMethod::kLoha:
    case FtMethod::kLokr:
      DeltaWeightOps(l, T, r, s.method == FtMethod::kLoha,
                     s.exec.grad_set_to_none && s.num_micro_batches() == 1, out);
      break;
    case FtMethod::kOft:
      OftOps(l, T, r, out);
      break;
    case FtMethod::kBoft:
      BoftOps(l, T, out);
      break;
    case FtMethod::kIa3:
      // x * l (feed-forward modules scale the input) or y * l: one read and one write; the
      // backward scales the gradient and reduces the vector's gradient over the tokens.
      out.push_back(Elementwise("ia3_scale", T * (l.ia3_input ? l.d_in : l.d_out), 2, 3, 1,
                                T * (l.ia3_input ? l.d_in : l.d_out) * kAct));
      break;
    default:
      break;
  }
  // Gradients freed every step (zero_grad(set_to_none=True)) and one micro-batch per step: the
  // .grad is None when the gradient arrives, and autograd's AccumulateGrad hands the tensor
  // over without a kernel (torch/csrc/autograd/functions/accumulate_grad.h).
  if (s.exec.grad_set_to_none && s.num_micro_batches() == 1)
    for (size_t i = first; i < out.size(); ++i)
      if (out[i].kind == OpKind::kMemory && out[i].param_tensors > 0 &&
          out[i].bwd_kernels == kThinTrainedBwdKernels)
        --out[i].bwd_kernels;
}

// PEFT's factorization(dimension, factor=-1) (tuners/lokr/layer.py): the divisor pair (m, n),
// m <= n, closest to the square root.
std::pair<double, double> Factorize(double dim) {
  const long long d = std::llround(dim);
  long long m = static_cast<long long>(std::sqrt(static_cast<double>(d)));
  while (m > 1 && d % m != 0) --m;
  return {static_cast<double>(m), static_cast<double>(d / std::max(1LL, m))};
}

double ModuleAdapterParams(const Strategy& s, const Linear& l) {
  const double r = s.lora_rank, in = l.d_in, out = l.d_out;
  switch (s.method) {
    case FtMethod::kLora:
    case FtMethod::kQlora:
    case FtMethod::kPissa:
      return r * (in + out);
    case FtMethod::kDora:
      return r * (in + out) + out;  // + the magnitude vector
    case FtMethod::kAdalora:
      return r * (in + out) + r;  // P, Q and the singular values E
    case FtMethod::kVera:
      return r + out;  // lambda_d and lambda_b
    case FtMethod::kLoha:
      return 2 * r * (in + out);
    case FtMethod::kLokr: {
      // w1 full (out_l x in_l); w2 full when r >= half its larger side, else low rank.
      const auto [ol, ok] = Factorize(out);
      const auto [il, ik] = Factorize(in);
      const double w2 = r >= std::max(ok, ik) / 2 ? ok * ik : r * (ok + ik);
      return ol * il + w2;
    }
    case FtMethod::kOft: {
      const double b = in / r;  // r blocks, each a skew-symmetric b x b (upper triangle)
      return r * b * (b - 1) / 2;
    }
    case FtMethod::kBoft:
      // boft_R: (d_in / b) full b x b blocks (skew-symmetrised in forward), boft_s: d_out.
      return in / kBoftBlockSize * kBoftBlockSize * kBoftBlockSize + out;
    case FtMethod::kIa3:
      return l.ia3_input ? in : out;
    default:
      return 0;
  }
}

}  // namespace trainsim::finetune

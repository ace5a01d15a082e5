#include "layer_cost.h"

#include <algorithm>
#include <string_view>
#include <utility>

namespace trainsim {

using graph::Coll;
using graph::Group;
using graph::OpKind;

Placements PlaceGroups(const Strategy& s, int domain) {
  // Strides follow the rank order, innermost first; a group's members inside one scale-up
  // domain are the product, over its dimensions, of how many of that dimension fit in it.
  const int dp = s.dp();
  enum Dim { kTp, kCp, kDp, kPp };
  int size[4] = {s.tp, s.cp, dp, s.pp};
  Dim order[4] = {kTp, kCp, kDp, kPp};
  switch (s.order) {
    case RankOrder::kTpCpDpPp:
      break;
    case RankOrder::kTpDpCpPp:
      order[1] = kDp, order[2] = kCp;
      break;
    case RankOrder::kTpCpPpDp:
      order[2] = kPp, order[3] = kDp;
      break;
    case RankOrder::kTpPpCpDp:
      order[1] = kPp, order[2] = kCp, order[3] = kDp;
      break;
  }
  long long stride[4];
  long long acc = 1;
  for (Dim d : order) {
    stride[d] = acc;
    acc *= size[d];
  }
  auto fit = [&](Dim d) -> int {
    return cost::Place(size[d], static_cast<int>(std::min<long long>(stride[d], 1LL << 30)), domain)
        .local;
  };
  // The GPUs of one domain from the group's first to its last local member: each dimension
  // moves the last member (local - 1) strides further (cost::Placement::span).
  auto span = [&](std::initializer_list<Dim> dims) {
    long long extent = 1;
    for (Dim d : dims) extent += (fit(d) - 1) * stride[d];
    return static_cast<int>(std::min<long long>(extent, std::max(domain, 1)));
  };
  auto group = [&](std::initializer_list<Dim> dims) {
    cost::Placement p;
    p.size = 1;
    p.local = 1;
    for (Dim d : dims) {
      p.size *= size[d];
      p.local *= fit(d);
    }
    p.span = span(dims);
    return p;
  };
  Placements p;
  p.tp = group({kTp});
  p.cp = group({kCp});
  p.dp_cp = group({kCp, kDp});
  // A pipeline neighbour is one pp stride away.
  p.pp = cost::Placement{s.pp > 1 ? 2 : 1, fit(kPp) >= 2 ? 2 : 1};
  if (p.pp.local == 2)
    p.pp.span = static_cast<int>(std::min<long long>(stride[kPp] + 1, std::max(domain, 1)));
  // Expert groups are laid over the tp x cp x dp ranks of a stage: etp innermost, then ep.
  const int etp = s.expert_tp();
  const cost::Placement block = group({kTp, kCp, kDp});
  p.etp = cost::Placement{etp, std::min(etp, block.local)};
  const int after_etp = std::max(1, block.local / std::max(1, p.etp.local));
  p.ep = cost::Placement{s.ep, std::min(s.ep, etp >= block.local ? 1 : after_etp)};
  const int after_ep = std::max(1, after_etp / std::max(1, p.ep.local));
  p.edp = cost::Placement{s.expert_dp(),
                          std::min(s.expert_dp(), s.ep * etp >= block.local ? 1 : after_ep)};
  return p;
}

namespace {

cost::Placement GroupPlacement(const Placements& pl, Group g) {
  switch (g) {
    case Group::kTp:
      return pl.tp;
    case Group::kCp:
      return pl.cp;
    case Group::kEp:
      return pl.ep;
    case Group::kEtp:
      return pl.etp;
    case Group::kDp:
      return pl.dp_cp;
    case Group::kEdp:
      return pl.edp;
    case Group::kPp:
      return pl.pp;
  }
  return pl.tp;
}

const char* KindName(OpKind k) {
  switch (k) {
    case OpKind::kGemm:
      return "gemm";
    case OpKind::kAttention:
      return "attention";
    case OpKind::kMemory:
      return "memory";
    case OpKind::kComm:
      return "comm";
  }
  return "?";
}

cost::AttnKernel AttentionKernel(const graph::Op& op, const Strategy& s) {
  if (op.block_sparse) return cost::AttnKernel::kFlex;
  switch (s.attention_kernel) {
    case AttentionImpl::kFa2:
      return cost::AttnKernel::kFa2;
    case AttentionImpl::kFa1:
      return cost::AttnKernel::kFa1;
    case AttentionImpl::kFused:
      break;
  }
  return cost::AttnKernel::kFused;
}

struct OpTime {
  double f = 0, b = 0;
};

// Attention without a flash kernel (Megatron-LM's local core attention, Hugging Face eager
// attention, PyTorch's math SDPA): Q·K^T ([sq x d]·[d x sk] per head) writes the scores, a
// fused scale-mask-softmax reads and rewrites them, P·V ([sq x sk]·[sk x dv]) reads them back.
// Each matmul is costed as one GEMM of the same tiles (strided batches of equal shapes tile like
// a dense GEMM, not like grouped expert GEMMs) and is bound by the larger of its compute and its
// pass over the scores (with d = 64-128 the score GEMM is memory-bound). Masks are applied
// after the matmul, so causal and windowed attention pay the whole square. The backward runs
// dP = dO·V^T (writes dP), the softmax backward (reads P and dP, writes dS), dV = P^T·dO
// (reads P) and dQ = dS·K, dK = dS^T·Q (each reads dS) (Korthikanti et al. 2022, Sec. 4: the
// attention terms in s^2). op.bytes holds the forward's three passes over the 16-bit scores.
OpTime UnfusedAttention(const graph::Op& op, const HardwareSpec& hw) {
  const double rows = op.m * op.batch;
  const double qk = cost::GemmTime(hw, DType::kBf16, rows, op.unfused_keys, op.k, 1);
  const double pv = cost::GemmTime(hw, DType::kBf16, rows, op.value_dim, op.unfused_keys, 1);
  const double pass = cost::MemoryTime(hw, op.bytes / 3);  // one pass over the scores
  OpTime t;
  t.f = std::max(qk, pass) + 2 * pass + std::max(pv, pass);
  t.b = 2 * std::max(pv, pass) + 3 * pass + 2 * std::max(qk, pass);
  return t;
}

// Forward and backward seconds of a GEMM, attention or memory-bound op, each kernel taking at
// least kernel_floor_us (docs/MODEL.md, "Launch floor and host issue"); adds its compute time
// and FLOPs to `c`.
OpTime CostCompute(const graph::Op& op, const HardwareSpec& hw, const Strategy& s, LayerCost& c) {
  const double floor_s = hw.eff.kernel_floor_us * 1e-6;
  OpTime t;
  switch (op.kind) {
    case OpKind::kGemm: {
      const DType d = op.keep_bf16 || op.fp32_gemm ? DType::kBf16 : s.dtype;
      double gemm = op.sequential ? op.batch * cost::GemmTime(hw, d, op.m, op.n, op.k, 1)
                                  : cost::GemmTime(hw, d, op.m, op.n, op.k, op.batch);
      // fp32/fp64 off the tensor cores: compute-bound at the fp32 peak (x the best GEMM
      // efficiency), never faster than the same shape in bf16 (small shapes stay latency-bound).
      if (op.fp32_gemm && hw.peak_fp32_flops > 0)
        gemm = std::max(gemm, op.flops / (hw.peak_fp32_flops * hw.eff.gemm_max));
      t.f = std::max(gemm, op.fwd_kernels * floor_s);
      // Data gradient and weight gradient, each as large as the forward GEMM; a frozen weight
      // needs only the data gradient.
      const double wgrad = op.trainable && !op.fwd_only ? t.f : 0.0;
      t.b = op.fwd_only ? 0.0 : t.f + wgrad;
      c.wgrad_s += wgrad;
      c.bwd_flops += op.fwd_only ? 0.0 : op.trainable ? 2 * op.flops : op.flops;
      c.wgrad_flops += op.trainable && !op.fwd_only ? op.flops : 0.0;
      c.max_intermediate = std::max(c.max_intermediate, 2.0 * op.m * op.n * op.batch);
      break;
    }
    case OpKind::kAttention: {
      if (!s.flash_attention && op.unfused_keys > 0) {
        t = UnfusedAttention(op, hw);
        t.f = std::max(t.f, op.fwd_kernels * floor_s);
        t.b = std::max(t.b, op.bwd_kernels * floor_s);
        c.bwd_flops += op.flops * op.bwd_flops_factor;
        break;
      }
      const cost::AttnKernel kernel = AttentionKernel(op, s);
      t.f = std::max(cost::AttentionTime(hw, op.flops, op.m, op.n, op.batch, false, kernel) +
                         cost::MemoryTime(hw, op.bytes),
                     op.fwd_kernels * floor_s);
      t.b = std::max(cost::AttentionTime(hw, op.flops * op.bwd_flops_factor, op.m, op.n, op.batch,
                                         true, kernel) +
                         cost::MemoryTime(hw, op.bytes * op.bwd_bytes_factor),
                     op.bwd_kernels * floor_s);
      c.bwd_flops += op.flops * op.bwd_flops_factor;
      break;
    }
    case OpKind::kMemory:
      t.f = std::max(cost::MemoryTime(hw, op.bytes), op.fwd_kernels * floor_s);
      t.b = op.fwd_only ? 0.0
                        : std::max(cost::MemoryTime(hw, op.bytes * op.bwd_bytes_factor),
                                   op.bwd_kernels * floor_s);
      break;
    case OpKind::kComm:
      return t;
  }
  c.fwd_compute_s += t.f;
  c.bwd_compute_s += t.b;
  c.fwd_flops += op.flops;
  return t;
}

// Tensors the optimizer steps (graph::Op::param_tensors) and the trained GEMM weights.
void CountParamTensors(const graph::Op& op, LayerCost& c) {
  c.param_tensors += op.param_tensors;
  c.fwd_fetches +=
      op.kind == OpKind::kGemm ? std::max(op.batch, op.weight_matrices) : op.weight_matrices;
  if (op.kind == OpKind::kGemm && op.trainable) c.hidden_params += op.batch * op.k * op.n;
}

void AppendOpReport(const graph::Op& op, double f, double b, LayerReport& report) {
  OpReport r;
  r.name = op.name;
  r.kind = KindName(op.kind);
  r.fwd_s = f;
  r.bwd_s = b;
  r.fwd_flops = op.flops;
  r.bytes = op.kind == OpKind::kComm ? op.comm_bytes : op.bytes;
  r.exposed = op.kind == OpKind::kComm && !op.overlappable;
  report.ops.push_back(std::move(r));
}

// Selective recompute, op by op: what backward reruns and what stays saved. Megatron-LM's modules
// go by the ops' rerun / drop masks; torchtitan's per-op policy (kRecomputeOpSac) by the shares
// graph::MarkOpSac wrote.
struct Selective {
  double rerun_s = 0, rerun_flops = 0, rerun_kernels = 0, saved = 0;
};

// The bytes `op` keeps for its backward under the selective modules `mods` (Megatron-LM's
// modules by the op's drop mask; torchtitan's per-op policy by MarkOpSac's share).
double SelectiveSaved(const graph::Op& op, int mods) {
  if (mods & kRecomputeOpSac) return op.sac_saved;
  double saved = op.drop & mods ? 0.0 : op.saved_bytes;
  // core_attn drops attention's extras only; an eager chain's own intermediates stay.
  if (!(mods & kRecomputeCoreAttn) || op.kind != OpKind::kAttention) saved += op.saved_extra_bytes;
  return saved;
}

void AddSelective(const graph::Op& op, double f, int mods, Selective& a) {
  const double rerun_f = op.kind == OpKind::kComm && op.group == Group::kCp ? 0 : f;
  a.saved += SelectiveSaved(op, mods);
  if (mods & kRecomputeOpSac) {
    if (op.sac_rerun <= 0) return;
    a.rerun_s += rerun_f * op.sac_rerun;
    a.rerun_flops += op.flops * op.sac_rerun;
    a.rerun_kernels += op.fwd_kernels * op.host_weight;
    return;
  }
  if (!(op.rerun & mods)) return;
  a.rerun_s += rerun_f;
  a.rerun_flops += op.flops;
  a.rerun_kernels += op.fwd_kernels * op.host_weight;
}

// The fine-grained offload module (Megatron-Core --offload-modules) whose saved inputs are this
// op's saved tensors; 0 for ops no module offloads.
int OffloadModuleOf(std::string_view name) {
  static constexpr std::pair<std::string_view, int> kByOp[] = {
      {"attn_norm", kOffloadAttnNorm},     {"qkv_proj", kOffloadQkvLinear},
      {"q_proj", kOffloadQkvLinear},       {"q_down_proj", kOffloadQkvLinear},
      {"kv_down_proj", kOffloadQkvLinear}, {"core_attention", kOffloadCoreAttn},
      {"attn_out_proj", kOffloadAttnProj}, {"mlp_norm", kOffloadMlpNorm},
      {"expert_fc1", kOffloadExpertFc1},   {"expert_act", kOffloadMoeAct}};
  for (const auto& [op, module] : kByOp)
    if (name == op) return module;
  return 0;
}

bool Offloaded(const graph::Op& op, const Strategy& s) {
  return s.exec.offload_activations || (OffloadModuleOf(op.name) & s.exec.offload_modules) != 0;
}

// Saved bytes the offloaded ops would keep without recompute (none) and under the selective
// policy `mods` (as AddSelective counts them).
struct Offload {
  double none = 0, selective = 0, full = 0;
};

void AddOffload(const graph::Op& op, int mods, bool first, Offload& o) {
  o.none += op.saved_bytes + op.saved_extra_bytes;
  o.selective += SelectiveSaved(op, mods);
  if (first) o.full = op.saved_bytes;  // full recompute keeps only the layer input
}

// Moves the offloaded bytes of the policy out of the saved activations and charges the copies:
// out to the host during the forward, back during the backward, each over the host link
// (nominal bandwidth, as the optimizer offload) and hidden behind the layer's compute of that
// pass (Megatron-Core overlaps them on side streams; docs/MODEL.md, "Activation offload").
void ApplyOffload(const Offload& o, const HardwareSpec& hw, const Strategy& s, bool full_recompute,
                  LayerCost& c) {
  c.saved_none -= o.none;
  c.saved_selective -= o.selective;
  c.saved_full -= o.full;
  c.offload_bytes = full_recompute                         ? o.full
                    : s.recompute == Recompute::kSelective ? o.selective
                                                           : o.none;
  if (c.offload_bytes <= 0 || hw.host_link_bw_bytes_per_s <= 0) return;
  const double copy = c.offload_bytes / hw.host_link_bw_bytes_per_s;
  c.offload_fwd_s = std::max(0.0, copy - c.fwd_compute_s);
  const double bwd = std::max(0.0, copy - c.bwd_compute_s - c.recompute_s);
  c.offload_s = c.offload_fwd_s + bwd;
  c.fwd_comm_s += c.offload_fwd_s;
  c.bwd_comm_s += bwd;
}

}  // namespace

LayerCost CostOps(const std::vector<graph::Op>& ops, const HardwareSpec& hw, const Strategy& s,
                  const Placements& pl, bool full_recompute, LayerReport* report) {
  LayerCost c;
  double fwd_rerun_kernels = 0;
  const double ovl = hw.eff.comm_overlap;
  const int mods = s.recompute == Recompute::kSelective ? s.recompute_modules : 0;
  double attn_fwd_s = 0, attn_bwd_s = 0, cp_fwd = 0, cp_bwd = 0, fwd_rerun_comm = 0,
         first_saved = -1;
  // TE's TP overlap (userbuffers) pipelines each TP collective with the GEMM next to it: it
  // hides at most those GEMMs' time (summed over the layer, per pass), so small layers whose
  // collectives outlast their GEMMs keep the difference exposed.
  double tp_ovl_f = 0, tp_ovl_b = 0, gemm_f = 0, gemm_b = 0;
  Selective sel;
  Offload off;
  for (const graph::Op& op : ops) {
    double f = 0, b = 0;
    if (op.kind != OpKind::kComm) {
      const OpTime t = CostCompute(op, hw, s, c);
      f = t.f, b = t.b;
      if (op.kind == OpKind::kAttention) attn_fwd_s += f, attn_bwd_s += b;
      if (op.kind == OpKind::kGemm) gemm_f += f, gemm_b += b;
    }
    switch (op.kind) {
      case OpKind::kGemm:
      case OpKind::kAttention:
      case OpKind::kMemory:
        break;
      case OpKind::kComm: {
        const cost::Placement p = GroupPlacement(pl, op.group);
        f = cost::CollectiveTime(hw, op.fwd_coll, p, op.comm_bytes, op.dedup_k);
        b = cost::CollectiveTime(hw, op.bwd_coll, p, op.comm_bytes, op.dedup_k);
        if (op.group == Group::kCp) {
          cp_fwd += f;
          cp_bwd += b;
          break;  // exposure decided after the attention time is known
        }
        const bool tp_ovl = op.overlappable && op.group == Group::kTp;
        if (tp_ovl) tp_ovl_f += f, tp_ovl_b += b;  // hidden below, bounded by the GEMMs
        double keep = op.overlappable && !tp_ovl ? (1 - ovl) : 1.0;
        if (op.group == Group::kEp || op.group == Group::kEtp) keep *= 1 - s.ep_comm_overlap;
        const double fe = f * keep, be = b * keep;
        c.fwd_comm_s += fe;
        c.bwd_comm_s += be;
        if (op.group == Group::kTp) {
          c.tp_comm_s += fe + be;
        } else {
          c.ep_comm_s += fe + be;
          c.ep_fwd_s += fe;
        }
        fwd_rerun_comm += fe;  // full recompute reruns every forward collective
        fwd_rerun_kernels += op.fwd_kernels * op.host_weight;
        break;
      }
    }
    c.fwd_kernels += op.fwd_kernels * op.host_weight;
    c.bwd_kernels += op.bwd_kernels * op.host_weight;
    CountParamTensors(op, c);
    if (op.kind != OpKind::kComm) fwd_rerun_kernels += op.fwd_kernels * op.host_weight;
    const bool first = first_saved < 0 && op.kind != OpKind::kComm;
    if (first) first_saved = op.saved_bytes;
    if (Offloaded(op, s)) AddOffload(op, mods, first, off);
    c.saved_none += op.saved_bytes + op.saved_extra_bytes;
    AddSelective(op, f, mods, sel);
    if (report) AppendOpReport(op, f, b, *report);
  }
  const double tp_hid_f = ovl * std::min(tp_ovl_f, gemm_f);
  const double tp_hid_b = ovl * std::min(tp_ovl_b, gemm_b);
  c.fwd_comm_s -= tp_hid_f;
  c.bwd_comm_s -= tp_hid_b;
  c.tp_comm_s -= tp_hid_f + tp_hid_b;
  fwd_rerun_comm -= tp_hid_f;
  // Ring context parallelism hides the K/V exchange behind the attention blocks.
  const bool ring = s.cp > 1 && !s.cp_a2a;
  const double cp_f = ring ? std::max(0.0, cp_fwd - attn_fwd_s * ovl) : cp_fwd;
  const double cp_b = ring ? std::max(0.0, cp_bwd - attn_bwd_s * ovl) : cp_bwd;
  c.cp_comm_s = cp_f + cp_b;
  c.fwd_comm_s += cp_f;
  c.bwd_comm_s += cp_b;
  // Full recompute keeps only the layer input (Korthikanti et al.: 2*s*b*h, /t with SP).
  c.saved_full = std::max(0.0, first_saved);
  c.bwd_fetches = c.fwd_fetches * (full_recompute ? 2 : 1);
  if (full_recompute) {
    c.recompute_s = c.fwd_compute_s + fwd_rerun_comm + cp_f;
    c.recompute_flops = c.fwd_flops;
    c.bwd_kernels += fwd_rerun_kernels;
  } else if (s.recompute == Recompute::kSelective) {
    c.recompute_s = sel.rerun_s;
    c.recompute_flops = sel.rerun_flops;
    c.bwd_kernels += sel.rerun_kernels;
  }
  c.saved_selective = sel.saved;
  ApplyOffload(off, hw, s, full_recompute, c);
  return c;
}

}  // namespace trainsim

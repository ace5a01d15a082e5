// SimuMax system files (configs/system/*.json, the efficiency tables its measurement pipeline
// writes) as a trainsim hardware profile.
//
// Source: MooreThreads/SimuMax docs/system.md (keys and units: tflops, gbps in GB/s, latency_us,
// mem_gbs in GB) and simumax/core/config.py SystemConfig: compute_op_accuracy_time (time =
// flops / (tflops * efficient_factor), the per-shape factor when the shape is in
// accurate_efficient_factor), compute_mem_access_time (bytes / (gbps * 2^30 * efficient_factor)
// + latency_us), compute_net_op_time (ring bytes size * scale * (1 + offset / n) over
// gbps * 2^30 * efficient_factor, the op's factor or else the tier's, plus the op's latency_us
// and fixed latency once per collective).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "spec/field_text.h"
#include "spec/simumax.h"
#include "trainsim/formats.h"
#include "trainsim/presets.h"
#include "util/units.h"

namespace trainsim::detail {
namespace {

using detail::NumberText;
using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;  // SimuMax's "GB" (gbps * 1024**3)

struct Conv {
  const std::string& origin;
  std::vector<Assumption>* assumed;
  void Note(std::string field, std::string value, std::string why) const {
    if (assumed) assumed->push_back({std::move(field), std::move(value), std::move(why)});
  }
};

// A number in (0, 1e7] at j[key] (no SimuMax figure is larger: TFLOP/s, GB/s, GB, us), or
// nullopt.
constexpr const char* kRange = "must be a number in (0, 1e7]";
std::optional<double> Num(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  const double v = j[key].get<double>();
  if (!std::isfinite(v) || v <= 0 || v > 1e7) return std::nullopt;
  return v;
}

const json& Obj(const json& j, const char* key) {
  static const json kEmpty = json::object();
  return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : kEmpty;
}

// The mean of an op's per-shape table, or its default efficient_factor.
std::optional<double> OpEfficiency(const json& op) {
  const json& table = Obj(op, "accurate_efficient_factor");
  double sum = 0;
  int n = 0;
  for (const auto& [k, v] : table.items())
    if (v.is_number() && v.get<double>() > 0) sum += v.get<double>(), ++n;
  if (n > 0) return sum / n;
  return Num(op, "efficient_factor");
}

// "b=1, m=4096, k=8192, n=10240, layout=TN, ...": the value of `name`.
std::optional<double> ShapeValue(const std::string& key, const std::string& name) {
  for (size_t at = 0; at < key.size();) {
    const size_t end = std::min(key.find(',', at), key.size());
    std::string token = key.substr(at, end - at);
    token.erase(0, token.find_first_not_of(' '));
    if (token.rfind(name + "=", 0) == 0) {
      try {
        const double v = std::stod(token.substr(name.size() + 1));
        if (std::isfinite(v) && v >= 1 && v <= 1e9) return v;
      } catch (const std::exception&) {
      }
      return std::nullopt;
    }
    at = end + 1;
  }
  return std::nullopt;
}

// Fits gemm_max and gemm_half_dim (src/cost/cost.cc: efficiency = gemm_max * prod over m, n, k
// of x / (x + half_dim) * wave utilisation) to SimuMax's per-shape matmul table by least
// squares, without the wave term (the measured shapes are large). False with < 3 shapes.
bool FitGemm(const json& matmul, Efficiency& eff) {
  std::vector<std::array<double, 4>> pts;  // m, n, k, efficiency
  for (const auto& [key, v] : Obj(matmul, "accurate_efficient_factor").items()) {
    auto m = ShapeValue(key, "m"), n = ShapeValue(key, "n"), k = ShapeValue(key, "k");
    if (m && n && k && v.is_number() && v.get<double>() > 0)
      pts.push_back({*m, *n, *k, v.get<double>()});
  }
  if (pts.size() < 3) return false;
  double best = std::numeric_limits<double>::max();
  for (double h = 0; h <= 2048; h += 4) {
    double yf = 0, ff = 0;
    auto f = [h](const std::array<double, 4>& p) {
      return p[0] / (p[0] + h) * p[1] / (p[1] + h) * p[2] / (p[2] + h);
    };
    for (const auto& p : pts) yf += p[3] * f(p), ff += f(p) * f(p);
    const double a = std::min(1.0, yf / ff);
    double sse = 0;
    for (const auto& p : pts) sse += (p[3] - a * f(p)) * (p[3] - a * f(p));
    if (sse < best) best = sse, eff.gemm_max = a, eff.gemm_half_dim = h;
  }
  return true;
}

// Bus efficiency and latency of one network tier over the ring collectives.
struct Tier {
  double bw_bytes_per_s = 0, bus = 0, a2a = 0, latency_s = 0;
};

std::optional<Tier> ReadTier(const json& net) {
  const json& bw = Obj(net, "bandwidth");
  auto gbps = Num(bw, "gbps");
  if (!gbps) return std::nullopt;
  const double tier_eff = Num(bw, "efficient_factor").value_or(1.0);
  const double tier_lat = Num(bw, "latency_us").value_or(0.0);
  Tier t;
  t.bw_bytes_per_s = *gbps * kGiB;
  const json& ops = Obj(net, "op");
  auto eff = [&](const char* op) {
    return Num(Obj(ops, op), "efficient_factor").value_or(tier_eff);
  };
  auto lat = [&](const char* op) {
    const json& o = Obj(ops, op);
    return Num(o, "latency_us").value_or(tier_lat) + Num(o, "fixed_latency_us").value_or(0.0);
  };
  t.bus = (eff("all_reduce") + eff("all_gather") + eff("reduce_scatter")) / 3;
  t.a2a = eff("all2all");
  t.latency_s = (lat("all_reduce") + lat("all_gather") + lat("reduce_scatter")) / 3 * 1e-6;
  return t;
}

// The embedded preset with the nearest BF16 peak: trainsim's fitted software-stack parameters
// (per-layer overhead, FP8 speed-ups, overlap) and the figures SimuMax does not record.
Result<HardwareSpec> NearestPreset(double bf16_flops) {
  std::optional<HardwareSpec> best;
  for (const std::string& id : ListHardwarePresets()) {
    auto h = LoadHardwarePreset(id);
    if (!h.ok()) continue;
    if (!best || std::abs(std::log(h->peak_bf16_flops / bf16_flops)) <
                     std::abs(std::log(best->peak_bf16_flops / bf16_flops)))
      best = h.value();
  }
  if (!best) return Status::NotFound("no embedded hardware preset");
  return *best;
}

Status ReadCompute(const json& acc, HardwareSpec& hw, const Conv& c) {
  const json& ops = Obj(acc, "op");
  auto peak = Num(Obj(ops, "matmul"), "tflops");
  if (!peak) peak = Num(Obj(ops, "default"), "tflops");
  if (!peak) return Status::Invalid("accelerator.op.matmul.tflops", kRange).WithContext(c.origin);
  hw.peak_bf16_flops = hw.peak_fp16_flops = *peak * 1e12;
  const json& fp8 = Obj(ops, "fp8_matmul");
  if (Num(fp8, "tflops") && OpEfficiency(fp8)) {
    hw.peak_fp8_flops = *Num(fp8, "tflops") * 1e12;
  } else {
    hw.peak_fp8_flops = 2 * hw.peak_bf16_flops;
    c.Note("peak_tflops.fp8", NumberText(2 * *peak),
           "the SimuMax file has no measured fp8_matmul: twice the BF16 peak");
  }
  const json& mm = Obj(ops, "matmul");
  if (!FitGemm(mm, hw.eff)) {
    if (auto e = OpEfficiency(mm)) hw.eff.gemm_max = *e;
    c.Note("efficiency.gemm_half_dim", NumberText(hw.eff.gemm_half_dim),
           "fewer than 3 measured matmul shapes to fit; kept from the nearest preset");
  }
  auto dense = OpEfficiency(mm), grouped = OpEfficiency(Obj(ops, "group_matmul"));
  if (dense && grouped) hw.eff.grouped_gemm = std::min(1.0, *grouped / *dense);
  // SimuMax counts attention FLOPs without the causal half (attention_sparse_ratio 0 = dense;
  // its A100 factors exceed 1); trainsim's attn_fwd/attn_bwd are fractions of causal FLOPs.
  if (auto f = OpEfficiency(Obj(ops, "sdp_fwd"))) hw.eff.attn_fwd = std::min(1.0, 0.5 * *f);
  if (auto b = OpEfficiency(Obj(ops, "sdp_bwd"))) hw.eff.attn_bwd = std::min(1.0, 0.5 * *b);
  return Status::Ok();
}

Status ReadMemory(const json& acc, HardwareSpec& hw, const Conv& c) {
  auto mem = Num(acc, "mem_gbs");
  if (!mem) return Status::Invalid("accelerator.mem_gbs", kRange).WithContext(c.origin);
  hw.hbm_bytes = *mem * kGiB;
  c.Note("hbm_gib", NumberText(*mem), "SimuMax's mem_gbs (its GB are 2^30 bytes)");
  const json& def = Obj(Obj(acc, "bandwidth"), "default");
  auto gbps = Num(def, "gbps");
  if (!gbps)
    return Status::Invalid("accelerator.bandwidth.default.gbps", kRange).WithContext(c.origin);
  hw.hbm_bw_bytes_per_s = *gbps * kGiB;
  hw.eff.mem = std::min(1.0, Num(def, "efficient_factor").value_or(hw.eff.mem));
  if (auto lat = Num(def, "latency_us"))
    c.Note("efficiency.kernel_floor_us", NumberText(hw.eff.kernel_floor_us),
           "SimuMax adds latency_us " + NumberText(*lat) +
               " to every memory-bound op; trainsim keeps its kernel floor");
  for (const char* k : {"permute_fwd", "permute_bwd", "ce", "ce_fusion"})
    if (Obj(Obj(acc, "bandwidth"), k).size())
      c.Note(std::string("accelerator.bandwidth.") + k, "ignored",
             "per-op memory efficiency; trainsim has one (efficiency.mem)");
  return Status::Ok();
}

// PCIe nodes: one tier per ring size; the table is relative to the widest tier.
Status ReadPcie(const json& nets, HardwareSpec& hw, const Conv& c) {
  hw.scaleup_topology = "pcie";
  std::vector<std::pair<int, Tier>> tiers;
  for (int g : {2, 4, 8})
    if (auto t = ReadTier(Obj(nets, ("intra_node_pcie_" + std::to_string(g) + "x").c_str())))
      tiers.emplace_back(g, *t);
  if (tiers.empty())
    return Status::Invalid("networks.intra_node_pcie_8x", "intra_with_pcie needs its tiers")
        .WithContext(c.origin);
  for (const auto& [g, t] : tiers)
    hw.scaleup_bw_bytes_per_s = std::max(hw.scaleup_bw_bytes_per_s, t.bw_bytes_per_s);
  hw.scaleup_bus_by_group.clear();
  hw.scaleup_a2a_by_group.clear();
  for (const auto& [g, t] : tiers) {
    const double rel = t.bw_bytes_per_s / hw.scaleup_bw_bytes_per_s;
    hw.scaleup_bus_by_group.emplace_back(g, std::clamp(t.bus * rel, 1e-3, 1.0));
    hw.scaleup_a2a_by_group.emplace_back(g, std::clamp(t.a2a * rel, 1e-3, 1.0));
  }
  hw.scaleup_latency_s = tiers.back().second.latency_s;
  hw.scaleup_hop_latency_s = 0;
  return Status::Ok();
}

Status ReadNetworks(const json& j, HardwareSpec& hw, const Conv& c) {
  const json& nets = Obj(j, "networks");
  const bool pcie = nets.contains("intra_with_pcie") && nets["intra_with_pcie"] == true;
  if (pcie) {
    if (Status s = ReadPcie(nets, hw, c); !s.ok()) return s;
  } else {
    auto t = ReadTier(Obj(nets, "high_intra_node"));
    if (!t)
      return Status::Invalid("networks.high_intra_node.bandwidth.gbps", kRange)
          .WithContext(c.origin);
    hw.scaleup_topology = "nvlink";
    hw.scaleup_bw_bytes_per_s = t->bw_bytes_per_s;
    hw.eff.scaleup_bus = std::min(1.0, t->bus);
    hw.eff.a2a_scaleup = std::min(1.0, t->a2a);
    hw.scaleup_latency_s = t->latency_s;
    hw.scaleup_hop_latency_s = 0;
    hw.scaleup_bus_by_group.clear();
    hw.scaleup_a2a_by_group.clear();
    if (nets.contains("low_intra_node"))
      c.Note("networks.low_intra_node", "ignored",
             "trainsim has one scale-up tier (high_intra_node)");
  }
  auto inter = ReadTier(Obj(nets, "inter_node"));
  if (!inter)
    return Status::Invalid("networks.inter_node.bandwidth.gbps", kRange).WithContext(c.origin);
  // SimuMax's inter_node gbps is the node's: compute_net_op_time divides it by num_per_node for
  // a pipeline p2p and an EP all-to-all ("bw of the single network card") and by min(8, tp) for
  // a DP collective ("TP1, each DP group uses 8 IBs; TP2, 4 IBs"), simumax/core/config.py. One
  // GPU's NIC is gbps / num_per_node; trainsim's cross-node ring runs at local members x NIC
  // (cost.cc CollectiveTime), which gives back SimuMax's DP figure.
  hw.nic_bw_bytes_per_s = inter->bw_bytes_per_s / hw.scaleup_domain;
  hw.eff.nic_bus = std::min(1.0, inter->bus);
  hw.eff.a2a_nic = std::min(1.0, inter->a2a);
  hw.nic_latency_s = inter->latency_s;
  hw.nic_hop_latency_s = hw.nic_tree_level_latency_s = 0;
  c.Note("nic_gbps_per_gpu", NumberText(units::BytesPerSToGbps(hw.nic_bw_bytes_per_s)),
         "SimuMax's inter_node gbps is a node's (" +
             NumberText(units::BytesPerSToGbps(inter->bw_bytes_per_s)) +
             " Gb/s): one GPU's NIC is that over num_per_node " +
             std::to_string(hw.scaleup_domain));
  c.Note("p2p", "ignored", "SimuMax's p2p factors; trainsim sends pipeline p2p at link speed");
  return Status::Ok();
}

}  // namespace

bool IsSimuMaxSystem(const json& j) {
  return j.is_object() && j.contains("accelerator") && j.contains("networks");
}

Result<HardwareSpec> ParseSimuMaxSystem(const json& j, const std::string& origin,
                                        std::vector<Assumption>* assumed) {
  const Conv c{origin, assumed};
  const json& acc = Obj(j, "accelerator");
  auto peak = Num(Obj(Obj(acc, "op"), "matmul"), "tflops");
  if (!peak) peak = Num(Obj(Obj(acc, "op"), "default"), "tflops");
  if (!peak) return Status::Invalid("accelerator.op.matmul.tflops", kRange).WithContext(origin);
  auto base = NearestPreset(*peak * 1e12);
  if (!base.ok()) return base.status();
  HardwareSpec hw = base.value();
  c.Note("efficiency", hw.id,
         "what the SimuMax file does not measure (layer overhead, FP8 speed-up, overlap, SM "
         "count, host link, price) is the preset with the nearest BF16 peak");
  hw.eff.fitted_date.clear();
  hw.id = "simumax";
  if (j.contains("sys_name") && j["sys_name"].is_string()) hw.id = j["sys_name"].get<std::string>();
  hw.name = "SimuMax system " + hw.id;
  // SystemConfig.num_per_node defaults to 8 (simumax/core/config.py), not the preset's domain.
  hw.scaleup_domain = 8;
  if (j.contains("num_per_node")) {
    auto n = Num(j, "num_per_node");
    if (!n || *n != std::floor(*n) || *n > 65536)
      return Status::Invalid("num_per_node", "must be an integer in 1..65536").WithContext(origin);
    hw.scaleup_domain = static_cast<int>(*n);
  } else {
    c.Note("num_per_node", "8", "SimuMax SystemConfig's default");
  }
  for (auto read : {ReadCompute, ReadMemory})
    if (Status s = read(acc, hw, c); !s.ok()) return s;
  if (Status s = ReadNetworks(j, hw, c); !s.ok()) return s;
  if (j.contains("FC8") && j["FC8"] == true)
    c.Note("FC8", "ignored", "SimuMax's fully-connected-8 bandwidth scaling");
  if (acc.contains("mode") && acc["mode"] != "roofline")
    c.Note("accelerator.mode", acc["mode"].dump(), "trainsim always takes the roofline");
  return hw;
}

}  // namespace trainsim::detail

namespace trainsim {

std::vector<Assumption> HardwareFileAssumptions(std::string_view text, std::string_view origin) {
  std::vector<Assumption> out;
  auto parsed = detail::ParseJsonText(text, origin);
  if (!parsed.ok() || !detail::IsSimuMaxSystem(parsed.value())) return out;
  (void)detail::ParseSimuMaxSystem(parsed.value(), std::string(origin), &out);
  return out;
}

}  // namespace trainsim

// Engine profiles: data/inference_engines.json (embedded), matched by the engine's name.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "infer/step.h"
#include "spec/embedded.h"
#include "trainsim/infer.h"

namespace trainsim {
namespace {

using nlohmann::json;

constexpr double kUs = 1e-6;

EngineProfile ReadEngine(const json& e) {
  EngineProfile p;
  p.id = e.value("id", "");
  p.cuda_graphs = e.value("cuda_graphs", true);
  p.cuda_graph_bytes = p.cuda_graphs ? e.value("cuda_graph_mib", 0.0) * 1048576.0 : 0.0;
  p.step_overhead_s = e.value("step_overhead_us", 0.0) * kUs;
  p.layer_overhead_s = e.value("layer_overhead_us", 0.0) * kUs;
  p.gptq4_gemm_overhead_s = e.value("gptq4_gemm_overhead_us", 0.0) * kUs;
  p.gptq8_gemm_overhead_s = e.value("gptq8_gemm_overhead_us", 0.0) * kUs;
  p.awq_gemm_overhead_s = e.value("awq_gemm_overhead_us", 0.0) * kUs;
  p.kernel_latency_s = e.value("kernel_latency_us", 4.0) * kUs;
  p.repeat_kv = e.value("repeat_kv", false);
  p.decode_hbm_fraction = e.value("decode_hbm_fraction", 0.8);
  p.gemm_efficiency = e.value("gemm_efficiency", 0.6);
  p.attention_hbm_fraction = e.value("attention_hbm_fraction", 0.0);
  p.moe_hbm_fraction = e.value("moe_hbm_fraction", 0.0);
  p.moe_gemm_efficiency = e.value("moe_gemm_efficiency", 0.0);
  p.seq_overhead_s = e.value("seq_overhead_us", 0.0) * kUs;
  p.overlap_scheduler = e.value("overlap_scheduler", false);
  p.windowed_kv_trim = e.value("windowed_kv_trim", false);
  p.kv_block_tokens = e.value("kv_block_tokens", 16);
  p.max_num_seqs = e.value("max_num_seqs", 256);
  p.max_num_batched_tokens = e.value("max_num_batched_tokens", 8192);
  p.gpu_memory_utilization = e.value("gpu_memory_utilization", 0.9);
  p.kv_fraction_of_free = e.value("kv_fraction_of_free", false);
  p.reserve_full_sequence = e.value("reserve_full_sequence", true);
  p.pipelined_pp = e.value("pipelined_pp", true);
  p.moe_attention_dp = e.value("moe_attention_dp", false);
  p.moe_quantized_dispatch = e.value("moe_quantized_dispatch", false);
  p.provenance = e.value("provenance", "");
  return p;
}

// The embedded profiles, or the file TRAINSIM_INFERENCE_ENGINES names (calibration:
// tools/fit_inference.py evaluates candidate constants without a rebuild).
json ReadEnginesDoc() {
  if (const char* path = std::getenv("TRAINSIM_INFERENCE_ENGINES"); path && *path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return json::parse(text.str(), nullptr, false);
  }
  const std::string_view* text = detail::FindEmbeddedFile("inference_engines.json");
  return text ? json::parse(*text, nullptr, false) : json();
}

const json& EnginesDoc() {
  static const json doc = ReadEnginesDoc();
  return doc;
}

const json& Engines() {
  static const json engines = EnginesDoc().is_object() && EnginesDoc().contains("engines")
                                  ? EnginesDoc()["engines"]
                                  : json::array();
  return engines;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::vector<std::string> ListEngineProfiles() {
  std::vector<std::string> ids;
  for (const json& e : Engines()) ids.push_back(e.value("id", ""));
  return ids;
}

Result<EngineProfile> LoadEngineProfile(std::string_view engine) {
  const std::string name = Lower(engine);
  for (const json& e : Engines()) {
    if (name == e.value("id", "")) return ReadEngine(e);
    for (const json& m : e.value("match", json::array()))
      if (name.find(m.get<std::string>()) != std::string::npos) return ReadEngine(e);
  }
  std::string ids;
  for (const std::string& id : ListEngineProfiles()) ids += (ids.empty() ? "" : ", ") + id;
  return Status::Invalid("engine", "must name a known engine (" + ids + ")");
}

namespace infer {

HostCpu HostCpuOf(const HardwareSpec& hw) {
  const json& doc = EnginesDoc();
  if (doc.is_object() && doc.contains("host_cpus"))
    for (const json& c : doc["host_cpus"])
      for (const json& id : c.value("hardware", json::array()))
        if (id == hw.id || (!hw.instance_of.empty() && id == hw.instance_of))
          return {c.value("cpu", ""), c.value("host_time_factor", 1.0), c.value("provenance", "")};
  return {};
}

InferenceBand InferenceBandOf(const std::string& engine, bool moe) {
  const json& doc = EnginesDoc();
  if (!doc.is_object() || !doc.contains("uncertainty") || !doc["uncertainty"].is_object())
    return {};
  const json& regimes = doc["uncertainty"].value("regimes", json::array());
  const std::string kind = moe ? "moe" : "dense";
  for (const std::string& name : {engine + "/" + kind, kind, std::string("all")})
    for (const json& b : regimes) {
      if (b.value("regime", "") != name) continue;
      InferenceBand out{name, b.value("rel_below", 0.0), b.value("rel_above", 0.0),
                        b.value("cases", 0)};
      if (out.rel_below >= 0 && out.rel_below < 1 && out.rel_above >= 0) return out;
    }
  return {};
}

void ApplyInferenceBand(InferenceReport& r, bool moe) {
  r.band = InferenceBandOf(r.profile.id, moe);
  const double lo = 1 - r.band.rel_below, hi = 1 + r.band.rel_above;
  // Served below saturation the throughput is the offered load (rate x output), not a prediction.
  const bool offered = r.online && !r.serving.saturated;
  r.output_tokens_per_s_low = r.output_tokens_per_s * (offered ? 1 : lo);
  r.output_tokens_per_s_high = r.output_tokens_per_s * (offered ? 1 : hi);
  // A latency is the reciprocal side of the same prediction: e^-b .. e^b of it.
  r.ttft_s_low = r.ttft_s / hi;
  r.ttft_s_high = r.ttft_s / lo;
  r.tpot_s_low = r.tpot_s / hi;
  r.tpot_s_high = r.tpot_s / lo;
}

namespace {

bool Names(const json& id, const HardwareSpec& hw) {
  return id == hw.id || (!hw.instance_of.empty() && id == hw.instance_of);
}

// The presets of `hw`'s GPU die ("gpu_dies" of data/inference_engines.json), empty if none.
std::vector<std::string> DieSiblings(const HardwareSpec& hw) {
  const json& doc = EnginesDoc();
  if (doc.is_object() && doc.contains("gpu_dies"))
    for (const json& d : doc["gpu_dies"]) {
      const json& ids = d.value("hardware", json::array());
      for (const json& id : ids)
        if (Names(id, hw)) return ids.get<std::vector<std::string>>();
    }
  return {};
}

}  // namespace

std::string ApplyHardwareCalibration(EngineProfile& p, const HardwareSpec& hw) {
  for (const json& e : Engines()) {
    if (e.value("id", "") != p.id || !e.contains("by_hardware")) continue;
    const json& fits = e["by_hardware"];
    auto apply = [&p](const json& keys) {
      p.moe_gemm_efficiency = keys.value("moe_gemm_efficiency", p.moe_gemm_efficiency);
      p.moe_hbm_fraction = keys.value("moe_hbm_fraction", p.moe_hbm_fraction);
    };
    for (const auto& [id, keys] : fits.items())
      if (Names(id, hw)) {
        apply(keys);
        return id;
      }
    // No fit of its own: a fit on another preset of the same GPU die (the same fused-MoE
    // kernels on the same SMs), in the die's listed order.
    for (const std::string& id : DieSiblings(hw))
      if (fits.contains(id)) {
        apply(fits[id]);
        return id + " (same GPU die)";
      }
  }
  return "";
}

}  // namespace infer
}  // namespace trainsim

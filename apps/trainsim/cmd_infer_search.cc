// `trainsim infer --search`: the best serving layout under an SLO (docs/INFERENCE.md, "Layout
// search"; library: include/trainsim/infer_search.h).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_util.h"
#include "commands.h"
#include "trainsim/infer_search.h"

namespace trainsim::cli {
namespace {

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

Result<InferSearchSpec> BuildSearch(const InferArgs& a, const InferenceSpec& base) {
  InferSearchSpec s;
  s.base = base;
  s.gpus = base.gpus;
  s.slo_ttft_s = a.slo_ttft_ms / 1e3;
  s.slo_tpot_s = a.slo_tpot_ms / 1e3;
  s.objective = a.objective;
  s.price_usd_per_gpu_hour = a.price;
  s.top = a.top;
  if (a.rate > 0) return Status::Invalid("rate", "excludes --search (it ranks fixed batches)");
  if (a.price < 0) return Status::Invalid("price", "must be >= 0");
  if (a.top < 1) return Status::Invalid("top", "must be >= 1");
  for (const std::string& d : SplitCommas(a.search_weight_dtypes)) {
    auto w = ParseWeightDType(d);
    if (!w.ok()) return w.status();
    s.weight_dtypes.push_back(w.value());
  }
  for (const std::string& d : SplitCommas(a.search_kv_dtypes)) {
    auto k = ParseKvDType(d);
    if (!k.ok()) return k.status();
    s.kv_dtypes.push_back(k.value());
  }
  return s;
}

std::string Ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s * 1e3);
  return buf;
}

void PrintText(const InferSearchResult& r, const InferSearchSpec& s) {
  std::printf(
      "%d layouts evaluated over %d GPUs, %d fit and meet the SLO (TTFT <= %s, TPOT <= %s); "
      "objective %s\n",
      r.evaluated, s.gpus, r.feasible,
      s.slo_ttft_s > 0 ? (Ms(s.slo_ttft_s) + " ms").c_str() : "any",
      s.slo_tpot_s > 0 ? (Ms(s.slo_tpot_s) + " ms").c_str() : "any", r.objective.c_str());
  if (r.ranked.empty()) {
    std::printf("no layout meets the SLO\n");
    return;
  }
  std::printf("%4s %4s %4s %8s %6s %6s %6s %10s %10s %12s %10s %9s\n", "rank", "tp", "pp",
              "replicas", "batch", "w", "kv", "TTFT ms", "TPOT ms", "out tok/s", "tok/s/GPU",
              "$/Mtok");
  int rank = 0;
  for (const InferCandidate& c : r.ranked) {
    std::printf("%4d %4d %4d %8d %6g %6s %6s %10.1f %10.2f %12.0f %10.0f %9.3f\n", ++rank, c.tp,
                c.pp, c.replicas, c.batch, std::string(WeightDTypeName(c.weight_dtype)).c_str(),
                std::string(KvDTypeName(c.kv_dtype)).c_str(), 1e3 * c.ttft_s, 1e3 * c.tpot_s,
                c.output_tokens_per_s, c.output_tokens_per_s_per_gpu,
                c.usd_per_million_output_tokens);
  }
  std::printf("Launch (best): %s\n", r.ranked[0].launch_command.c_str());
}

}  // namespace

int RunInferSearch(const InferArgs& a, const ModelSpec& m, const HardwareSpec& hw,
                   const InferenceSpec& base) {
  auto s = BuildSearch(a, base);
  if (!s.ok()) return Fail(s.status());
  auto r = SearchInference(m, hw, s.value());
  if (!r.ok()) return Fail(r.status());
  if (!a.export_format.empty()) {
    if (r->ranked.empty()) return Fail(Status::Invalid("slo", "no layout meets it"));
    std::printf("%s\n", r->ranked[0].launch_command.c_str());
    return 0;
  }
  if (a.json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(InferSearchJson(r.value()));
    j["model"] = m.name;
    j["hardware"] = hw.id;
    j["hardware_calibrated"] = hw.calibrated;
    j["gpus"] = s->gpus;
    j["slo_ttft_s"] = s->slo_ttft_s > 0 ? nlohmann::ordered_json(s->slo_ttft_s) : nullptr;
    j["slo_tpot_s"] = s->slo_tpot_s > 0 ? nlohmann::ordered_json(s->slo_tpot_s) : nullptr;
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  if (!hw.calibrated) std::printf("%s\n", UncalibratedNote(hw).c_str());
  PrintText(r.value(), s.value());
  return 0;
}

}  // namespace trainsim::cli

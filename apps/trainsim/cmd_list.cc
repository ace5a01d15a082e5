// `trainsim list models|hardware [--json]`: the embedded presets; for hardware the catalogue's
// provenance (source and date of the figures, calibration status, prices; data/hardware/README.md).
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "trainsim/hardware_figures.h"
#include "trainsim/trainsim.h"

namespace trainsim::cli {
namespace {

using nlohmann::ordered_json;

// A price of 0 means "none recorded": null in JSON.
ordered_json Price(double usd) {
  return usd > 0 ? ordered_json(usd) : ordered_json(nullptr);
}

ordered_json OrNull(const std::string& s) {
  return s.empty() ? ordered_json(nullptr) : ordered_json(s);
}

// A peak in TFLOP/s; null where the profile has no source for it (data/hardware/README.md).
ordered_json Peak(const HardwareSpec& h, const char* key, double flops) {
  return PeakUnknown(h, key) ? ordered_json(nullptr) : ordered_json(flops / 1e12);
}

// The bf16 column of the text table: "?" where no source was found.
std::string Bf16Text(const HardwareSpec& h) {
  if (PeakUnknown(h, "bf16")) return "?";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", h.peak_bf16_flops / 1e12);
  return buf;
}

ordered_json HardwareJson(const HardwareSpec& h) {
  ordered_json j;
  j["id"] = h.id;
  j["name"] = h.name;
  j["calibrated"] = h.calibrated;
  j["calibration"] = CalibrationStatus(h);
  j["efficiency_from"] = OrNull(h.efficiency_from);
  j["fitted_date"] = OrNull(h.eff.fitted_date);
  j["peak_tflops"] = {
      {"bf16", Peak(h, "bf16", h.peak_bf16_flops)}, {"fp16", Peak(h, "fp16", h.peak_fp16_flops)},
      {"fp8", Peak(h, "fp8", h.peak_fp8_flops)},    {"fp4", Peak(h, "fp4", h.peak_fp4_flops)},
      {"fp32", Peak(h, "fp32", h.peak_fp32_flops)}, {"tf32", Peak(h, "tf32", h.peak_tf32_flops)}};
  j["hbm_gib"] = h.hbm_bytes / (1 << 30);
  j["hbm_tbps"] = h.hbm_bw_bytes_per_s / 1e12;
  j["scaleup_domain"] = h.scaleup_domain;
  j["scaleup_topology"] = h.scaleup_topology;
  j["scaleup_gbps_per_dir"] = h.scaleup_bw_bytes_per_s / 1e9;
  j["nic_gbps_per_gpu"] = h.nic_bw_bytes_per_s * 8 / 1e9;
  j["gpus_per_node"] = h.gpus_per_node > 0 ? ordered_json(h.gpus_per_node) : ordered_json(nullptr);
  j["rails"] = h.rails > 0 ? ordered_json(h.rails) : ordered_json(nullptr);
  // Host memory per server; null: not recorded (simulate then assumes twice the server's HBM).
  j["host_mem_gib"] =
      h.host_mem_bytes > 0 ? ordered_json(h.host_mem_bytes / (1 << 30)) : ordered_json(nullptr);
  j["tdp_w"] = h.tdp_w > 0 ? ordered_json(h.tdp_w) : ordered_json(nullptr);
  j["price_usd_per_gpu_hour"] = Price(h.price_usd_per_gpu_hour);
  j["price_source"] = OrNull(h.price_source);
  j["price_date"] = OrNull(h.price_date);
  j["price_reserved_usd_per_gpu_hour"] = Price(h.price_reserved_usd_per_gpu_hour);
  j["price_reserved_source"] = OrNull(h.price_reserved_source);
  j["price_reserved_date"] = OrNull(h.price_reserved_date);
  j["source"] = OrNull(h.source);
  j["source_date"] = OrNull(h.source_date);
  ordered_json src = ordered_json::object();
  for (const HardwareSpec::FieldSource& f : h.sources)
    src[f.field] = {{"document", f.document}, {"date", OrNull(f.date)}};
  j["sources"] = src;
  return j;
}

std::string PriceText(double usd, const std::string& date) {
  if (usd <= 0) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, "$%.2f (%s)", usd, date.empty() ? "?" : date.c_str());
  return buf;
}

int ListHardware(bool json) {
  ordered_json all = ordered_json::array();
  if (!json)
    std::printf("%-24s %-34s %7s %5s %-30s %-20s %-20s %s\n", "id", "calibration", "bf16 TF", "GiB",
                "name", "on-demand $/GPU-h", "reserved/spot", "source (date)");
  for (const auto& id : ListHardwarePresets()) {
    auto h = LoadHardware(id);
    if (!h.ok()) {
      if (!json) std::printf("%-24s (error: %s)\n", id.c_str(), h.status().message().c_str());
      if (json) all.push_back({{"id", id}, {"error", h.status().message()}});
      continue;
    }
    if (json) {
      all.push_back(HardwareJson(h.value()));
      continue;
    }
    const std::string source = h->source.size() > 60 ? h->source.substr(0, 57) + "..." : h->source;
    std::printf("%-24s %-34s %7s %5.0f %-30.30s %-20s %-20s %s (%s)\n", id.c_str(),
                CalibrationStatus(h.value()).c_str(), Bf16Text(h.value()).c_str(),
                h->hbm_bytes / (1 << 30), h->name.c_str(),
                PriceText(h->price_usd_per_gpu_hour, h->price_date).c_str(),
                PriceText(h->price_reserved_usd_per_gpu_hour, h->price_reserved_date).c_str(),
                source.c_str(), h->source_date.empty() ? "?" : h->source_date.c_str());
  }
  if (json) std::cout << all.dump(2) << "\n";
  return 0;
}

}  // namespace

void AddList(CLI::App& app, ListArgs& a) {
  CLI::App* c = app.add_subcommand("list", "list embedded presets");
  c->add_option("what", a.what, "models | hardware")
      ->required()
      ->check(CLI::IsMember({"models", "hardware"}));
  c->add_flag("--json", a.json, "hardware: the catalogue as JSON (sources, dates, prices)");
}

int RunList(const ListArgs& a) {
  if (a.what == "hardware") return ListHardware(a.json);
  for (const auto& id : ListModelPresets()) {
    auto m = LoadModel(id);
    if (!m.ok()) {
      std::printf("%-20s (error: %s)\n", id.c_str(), m.status().message().c_str());
      continue;
    }
    const ParamCounts pc = CountParams(m.value());
    std::printf("%-20s %8.2f B total %8.2f B active  layers %3d  hidden %6lld\n", id.c_str(),
                pc.total / 1e9, pc.active / 1e9, m->layers, static_cast<long long>(m->hidden));
  }
  return 0;
}

}  // namespace trainsim::cli

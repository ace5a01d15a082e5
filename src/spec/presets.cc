#include "trainsim/presets.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "spec/embedded.h"
#include "trainsim/hardware.h"
#include "trainsim/model.h"

namespace trainsim {

const std::string_view* detail::FindEmbeddedFile(std::string_view path) {
  for (int i = 0; i < kEmbeddedFileCount; ++i)
    if (path == kEmbeddedFiles[i].path) return &kEmbeddedFiles[i].text;
  return nullptr;
}

namespace {

std::vector<std::string> ListUnder(std::string_view dir) {
  std::vector<std::string> ids;
  const std::string prefix = std::string(dir) + "/";
  for (int i = 0; i < detail::kEmbeddedFileCount; ++i) {
    std::string_view p = detail::kEmbeddedFiles[i].path;
    if (p.rfind(prefix, 0) == 0 && p.size() > 5 && p.substr(p.size() - 5) == ".json")
      ids.emplace_back(p.substr(prefix.size(), p.size() - prefix.size() - 5));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

const std::string_view* FindEmbedded(const std::string& path) {
  return detail::FindEmbeddedFile(path);
}

bool LooksLikePath(std::string_view s) {
  return s.find('/') != std::string_view::npos || s.find(".json") != std::string_view::npos;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::vector<std::string> ListModelPresets() {
  return ListUnder("models");
}
std::vector<std::string> ListHardwarePresets() {
  return ListUnder("hardware");
}

Result<std::string> ReadTextFile(std::string_view path) {
  std::error_code ec;
  const std::filesystem::path p{std::string(path)};
  if (!std::filesystem::is_regular_file(p, ec))
    return Status::NotFound(std::string(path) + ": no such file");
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::NotFound(std::string(path) + ": cannot be opened");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<ModelSpec> LoadModel(std::string_view id_or_path) {
  if (const auto* text = FindEmbedded("models/" + std::string(id_or_path) + ".json")) {
    auto m = ParseModelJson(*text, id_or_path);
    if (m.ok()) m.value().name = std::string(id_or_path);
    return m;
  }
  if (!LooksLikePath(id_or_path))
    return Status::NotFound("model: unknown preset '" + std::string(id_or_path) +
                            "' (presets: " + Join(ListModelPresets()) + "; or give a file path)");
  auto text = ReadTextFile(id_or_path);
  if (!text.ok()) return Status::NotFound("model: " + text.status().message());
  return ParseModelJson(text.value(), id_or_path);
}

// A preset without a fitted efficiency block may name a calibrated preset of the same silicon
// ("efficiency_from": "h100_sxm_80gb") whose efficiencies it borrows.
Result<HardwareSpec> InheritEfficiency(Result<HardwareSpec> hw, std::string_view text, int depth) {
  if (!hw.ok() || depth > 4) return hw;
  auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (!j.is_object() || j.contains("efficiency") || !j.contains("efficiency_from") ||
      !j["efficiency_from"].is_string())
    return hw;
  const std::string from = j["efficiency_from"].get<std::string>();
  const auto* parent = FindEmbedded("hardware/" + from + ".json");
  if (!parent)
    return Status::Invalid("efficiency_from", "unknown preset '" + from + "'").WithContext(hw->id);
  auto base = InheritEfficiency(ParseHardwareJson(*parent, from), *parent, depth + 1);
  if (!base.ok()) return base.status();
  HardwareSpec out = hw.value();
  out.eff = base->eff;
  return out;
}

Result<HardwareSpec> LoadHardware(std::string_view id_or_path) {
  if (const auto* text = FindEmbedded("hardware/" + std::string(id_or_path) + ".json"))
    return InheritEfficiency(ParseHardwareJson(*text, id_or_path), *text, 0);
  if (!LooksLikePath(id_or_path))
    return Status::NotFound("hardware: unknown preset '" + std::string(id_or_path) +
                            "' (presets: " + Join(ListHardwarePresets()) + "; or a file path)");
  auto text = ReadTextFile(id_or_path);
  if (!text.ok()) return Status::NotFound("hardware: " + text.status().message());
  return InheritEfficiency(ParseHardwareJson(text.value(), id_or_path), text.value(), 0);
}

}  // namespace trainsim

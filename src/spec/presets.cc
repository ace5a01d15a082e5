#include "trainsim/presets.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "spec/embedded.h"
#include "trainsim/hardware.h"
#include "trainsim/limits.h"
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
  if (std::filesystem::is_directory(p, ec))
    return Status::NotFound(std::string(path) + ": is a directory, not a file");
  if (!std::filesystem::exists(p, ec))
    return Status::NotFound(std::string(path) + ": no such file");
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::NotFound(std::string(path) + ": cannot be opened");
  // Read at most the limit plus one byte: a FIFO or /dev/zero has no size to ask for first.
  std::string text;
  char buf[1 << 16];
  while (in && static_cast<int64_t>(text.size()) <= limits::kMaxInputFileBytes) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Status::NotFound(std::string(path) + ": read error");
  if (static_cast<int64_t>(text.size()) > limits::kMaxInputFileBytes)
    return Status::Invalid(std::string(path) + ": larger than the " +
                           std::to_string(limits::kMaxInputFileBytes >> 20) + " MiB input limit");
  return text;
}

Result<ModelSpec> LoadModelPreset(std::string_view id) {
  const auto* text = FindEmbedded("models/" + std::string(id) + ".json");
  if (!text)
    return Status::NotFound("model: unknown preset '" + std::string(id) +
                            "' (presets: " + Join(ListModelPresets()) + ")");
  auto m = ParseModelJson(*text, id);
  if (m.ok()) m.value().name = std::string(id);
  return m;
}

Result<ModelSpec> LoadModelFile(std::string_view path) {
  auto text = ReadTextFile(path);
  if (!text.ok()) return Status::NotFound("model: " + text.status().message());
  return ParseModelJson(text.value(), path);
}

Result<ModelSpec> LoadModel(std::string_view id_or_path) {
  if (FindEmbedded("models/" + std::string(id_or_path) + ".json"))
    return LoadModelPreset(id_or_path);
  if (!LooksLikePath(id_or_path))
    return Status::NotFound("model: unknown preset '" + std::string(id_or_path) +
                            "' (presets: " + Join(ListModelPresets()) + "; or give a file path)");
  return LoadModelFile(id_or_path);
}

Result<HardwareSpec> LoadHardwarePreset(std::string_view id) {
  const auto* text = FindEmbedded("hardware/" + std::string(id) + ".json");
  if (!text)
    return Status::NotFound("hardware: unknown preset '" + std::string(id) +
                            "' (presets: " + Join(ListHardwarePresets()) + ")");
  return ParseHardwareJson(*text, id);
}

Result<HardwareSpec> LoadHardwareFile(std::string_view path) {
  auto text = ReadTextFile(path);
  if (!text.ok()) return Status::NotFound("hardware: " + text.status().message());
  return ParseHardwareJson(text.value(), path);
}

Result<HardwareSpec> LoadHardware(std::string_view id_or_path) {
  if (FindEmbedded("hardware/" + std::string(id_or_path) + ".json"))
    return LoadHardwarePreset(id_or_path);
  if (!LooksLikePath(id_or_path))
    return Status::NotFound("hardware: unknown preset '" + std::string(id_or_path) +
                            "' (presets: " + Join(ListHardwarePresets()) + "; or a file path)");
  return LoadHardwareFile(id_or_path);
}

}  // namespace trainsim

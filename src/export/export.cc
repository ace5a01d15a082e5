// trainsim export (trainsim/export.h): format names, the dispatch, and the pieces every format
// shares (comment header, notes of what a format cannot say, reading an export back).
#include "trainsim/export.h"

#include <algorithm>
#include <array>

#include "export/export_internal.h"
#include "trainsim/batch_default.h"
#include "trainsim/schema.h"
#include "trainsim/search.h"

namespace trainsim {
namespace {

constexpr std::array<ExportFormat, 7> kFormats = {
    ExportFormat::kMegatron,   ExportFormat::kBridge,       ExportFormat::kDeepSpeed,
    ExportFormat::kTorchtitan, ExportFormat::kLlamaFactory, ExportFormat::kTorchrun,
    ExportFormat::kSlurm};

}  // namespace

std::string_view ExportFormatName(ExportFormat f) {
  switch (f) {
    case ExportFormat::kMegatron:
      return "megatron";
    case ExportFormat::kBridge:
      return "bridge";
    case ExportFormat::kDeepSpeed:
      return "deepspeed";
    case ExportFormat::kTorchtitan:
      return "torchtitan";
    case ExportFormat::kLlamaFactory:
      return "llamafactory";
    case ExportFormat::kTorchrun:
      return "torchrun";
    case ExportFormat::kSlurm:
      return "slurm";
  }
  return "?";
}

std::span<const ExportFormat> ExportFormats() {
  return kFormats;
}

Result<ExportFormat> ParseExportFormat(std::string_view name) {
  std::string known;
  for (ExportFormat f : kFormats) {
    if (ExportFormatName(f) == name) return f;
    known += (known.empty() ? "" : ", ") + std::string(ExportFormatName(f));
  }
  return Status::Invalid("format", "must be one of " + known + ", got '" + std::string(name) + "'");
}

int DefaultGpusPerNode(const HardwareSpec& hw, int world_size) {
  // A scale-up domain of more than 8 GPUs is a rack of 4-GPU trays (GB200 / GB300 NVL72: 18
  // compute trays of 2 Grace CPUs + 4 GPUs, NVIDIA GB200 NVL72 datasheet).
  const int per_node = hw.scaleup_domain > 8 ? 4 : std::max(1, hw.scaleup_domain);
  return std::max(1, std::min(per_node, world_size));
}

namespace export_detail {

std::string Header(ExportFormat f, const ModelSpec& m, const Strategy& s, std::string_view mark) {
  const std::string k(mark);
  return k + "trainsim export --format " + std::string(ExportFormatName(f)) + ": " + m.name +
         " on " + std::to_string(s.world_size) + " GPUs, seq " + std::to_string(s.seq) +
         ", global batch " + std::to_string(s.mbs * s.num_micro_batches() * s.dp()) + "\n" + k +
         "strategy: " + DescribeStrategy(s) + "\n";
}

std::string NoteLines(const std::vector<std::string>& notes, std::string_view format,
                      std::string_view mark) {
  std::string out;
  for (const std::string& n : notes)
    out += std::string(mark) + "not expressed in " + std::string(format) + ": " + n + "\n";
  return out;
}

void DiffNotes(const Strategy& s, const Strategy& back, const std::vector<std::string>& skip,
               std::vector<std::string>& notes) {
  for (const StrategyField& f : StrategySchema()) {
    if (f.matters && !f.matters(s)) continue;
    if (std::find(skip.begin(), skip.end(), f.key) != skip.end()) continue;
    // fsdp changes the step only through zero_state (NormaliseStrategy), which is compared:
    // Megatron-FSDP and DeepSpeed ZeRO-3 are the same step.
    if (f.key == "fsdp") continue;
    const std::string want = f.get(s), got = f.get(back);
    if (want == got) continue;
    notes.push_back(std::string(f.key) + " " + (want.empty() ? "null" : want) + " (reads back as " +
                    (got.empty() ? "null" : got) + ")");
  }
}

Result<Strategy> ReadBack(const std::map<std::string, std::string>& settings, Strategy base) {
  if (Status st = ApplyStrategySettings(base, settings, false); !st.ok()) return st;
  ApplyDefaultBatch(base);
  return NormaliseStrategy(base);
}

Strategy ReaderBase(const Strategy& s) {
  Strategy b;
  b.world_size = s.world_size;
  b.seq = s.seq;
  return b;
}

int StageLayers(const ModelSpec& m, const Strategy& s) {
  return (m.layers + s.pp - 1) / std::max(1, s.pp);
}

}  // namespace export_detail

Result<ExportFile> ExportStrategy(ExportFormat f, const ModelSpec& m, const Strategy& strategy,
                                  const ExportTarget& target) {
  const Strategy s = NormaliseStrategy(strategy);
  using namespace export_detail;
  switch (f) {
    case ExportFormat::kMegatron:
      return ExportMegatron(m, s);
    case ExportFormat::kBridge:
      return ExportBridge(m, s);
    case ExportFormat::kDeepSpeed:
      return ExportDeepSpeed(m, s);
    case ExportFormat::kTorchtitan:
      return ExportTorchtitan(m, s);
    case ExportFormat::kLlamaFactory:
      return ExportLlamaFactory(m, s, target);
    case ExportFormat::kTorchrun:
    case ExportFormat::kSlurm:
      return ExportLaunch(f, m, s, target);
  }
  return Status::Invalid("format", "unknown export format");
}

}  // namespace trainsim

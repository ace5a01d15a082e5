// Shared pieces of the exporters (trainsim/export.h): one function per format, the comment
// header, and the notes of what a format cannot say.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/export.h"

namespace trainsim::export_detail {

// The export's first comment lines (model, GPUs, strategy), each prefixed with `mark` ("# ").
std::string Header(ExportFormat f, const ModelSpec& m, const Strategy& s, std::string_view mark);
// `notes` as comment lines "<mark>not expressed in <format>: <note>".
std::string NoteLines(const std::vector<std::string>& notes, std::string_view format,
                      std::string_view mark);

// Notes for the schema fields whose canonical value differs between `s` and `back` (what the
// export reads back as), skipping fields that do not change the step of `s` (the schema's
// `matters`) and the keys in `skip`: "<key> <value> (reads back as <value>)".
void DiffNotes(const Strategy& s, const Strategy& back, const std::vector<std::string>& skip,
               std::vector<std::string>& notes);

// The strategy a framework file's settings give on top of `base` (ApplyStrategySettings, then
// the default batch rule and NormaliseStrategy).
Result<Strategy> ReadBack(const std::map<std::string, std::string>& settings, Strategy base);

// The base a reader starts from: the launcher's GPU count and the data's sequence length, which
// a framework config does not carry; fine-tuning fields as `s` has them.
Strategy ReaderBase(const Strategy& s);

int StageLayers(const ModelSpec& m, const Strategy& s);  // transformer layers per pipeline stage

Result<ExportFile> ExportMegatron(const ModelSpec& m, const Strategy& s);
Result<ExportFile> ExportLaunch(ExportFormat f, const ModelSpec& m, const Strategy& s,
                                const ExportTarget& t);
Result<ExportFile> ExportBridge(const ModelSpec& m, const Strategy& s);
Result<ExportFile> ExportDeepSpeed(const ModelSpec& m, const Strategy& s);
Result<ExportFile> ExportTorchtitan(const ModelSpec& m, const Strategy& s);
Result<ExportFile> ExportLlamaFactory(const ModelSpec& m, const Strategy& s, const ExportTarget& t);

}  // namespace trainsim::export_detail

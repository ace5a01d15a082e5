#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_util.h"
#include "commands.h"
#include "spec/pipeline_split.h"
#include "trainsim/results_json.h"
#include "trainsim/trainsim.h"
#include "trainsim/validate.h"
#include "validate/inference_case.h"

namespace trainsim::cli {

void AddValidate(CLI::App& app, ValidateArgs& a) {
  CLI::App* c = app.add_subcommand("validate", "score predictions against measured runs (JSONL)");
  c->add_option("files", a.files, "case files (shared/validation schema)")->required();
  c->add_option("--family", a.family, "only print cases of this family");
  c->add_flag("--json", a.json, "write the results as JSON");
  c->add_flag("--markdown", a.markdown,
              "print the per-family table as Markdown (docs/VALIDATION.md)");
  c->add_option("--svg", a.svg, "also write a predicted-vs-measured scatter plot (SVG) here");
  c->add_option("--explain", a.explain,
                "a case id: print that case's full step report (breakdowns, memory, every "
                "assumption) and its measured time, as validate scores it");
}

namespace {

// validate --explain ID of an inference case: the `infer` report, then its target metric.
// Returns -1 when no inference file holds the id.
int ExplainInferenceCase(const ValidateArgs& a) {
  for (const std::string& f : a.files) {
    auto text = ReadTextFile(f);
    if (!text.ok()) return Fail(text.status());
    std::istringstream in(text.value());
    std::string line;
    while (std::getline(in, line)) {
      if (!detail::IsInferenceCaseText(line) ||
          line.find("\"" + a.explain + "\"") == std::string::npos)
        continue;
      auto c = detail::ParseInferenceCase(line, f);
      if (!c.ok()) return Fail(c.status());
      if (c->id != a.explain) continue;
      auto sim = SimulateInference(c->model, c->hw, c->spec);
      if (!sim.ok()) return Fail(sim.status().WithContext(c->id));
      InferenceReport rep = std::move(sim).value();
      for (const Assumption& x : c->assumed) rep.assumed.push_back(x);
      PrintInferenceText(rep);
      auto v = detail::InferenceMetric(c.value(), rep);
      if (!v.ok()) return Fail(v.status());
      std::printf("\n  case %s (%s): %s measured %.4g, predicted %.4g, error %+.1f %%\n",
                  c->id.c_str(), c->family.c_str(), c->metric.c_str(), c->target, v.value(),
                  100 * (v.value() - c->target) / c->target);
      return 0;
    }
  }
  return -1;
}

// validate --explain ID: the case's step report as `simulate` prints it, then its target.
int ExplainCase(const ValidateArgs& a) {
  if (int rc = ExplainInferenceCase(a); rc >= 0) return rc;
  std::vector<CaseResult> unparsable;
  auto cases = LoadValidationCases(a.files, &unparsable);
  if (!cases.ok()) return Fail(cases.status());
  for (const CaseResult& r : unparsable)
    if (r.id == a.explain) return Fail(Status::Invalid("--explain", r.reason));
  for (const ValidationCase& c : cases.value()) {
    if (c.id != a.explain) continue;
    Strategy s;
    Assumption recompute;
    auto sim = SimulateCase(c, &s, &recompute);
    if (!sim.ok()) return Fail(sim.status().WithContext(c.id));
    StepReport rep = std::move(sim).value();
    rep.assumed = c.assumed;
    if (c.recompute_auto) rep.assumed.push_back(recompute);
    if (auto split = detail::PipelineSplitAssumption(s, c.model)) rep.assumed.push_back(*split);
    std::printf("%s", FormatReportText(rep, c.model, c.hw, s).c_str());
    std::printf("\n  case %s (%s): measured %.4f s, predicted %.4f s, error %+.1f %%\n",
                c.id.c_str(), c.family.c_str(), c.target_s, rep.step_time_s,
                100 * (rep.step_time_s - c.target_s) / c.target_s);
    return 0;
  }
  return Fail(Status::Invalid("--explain", "no case with id '" + a.explain + "' in the files"));
}

}  // namespace

int RunValidate(const ValidateArgs& a) {
  if (!a.explain.empty()) return ExplainCase(a);
  auto res = RunValidation(a.files);
  if (!res.ok()) {
    return Fail(res.status());
  }
  const ValidationSummary& s = res.value();
  if (s.cases.empty()) {
    std::string files;
    for (const std::string& f : a.files) files += (files.empty() ? "" : ", ") + f;
    return Fail(Status::Invalid("files", "no validation cases in " + files));
  }
  WarnSkipped(s.cases, "validate", "not scored");
  WarnIgnoredCaseKeys(s.cases, "validate");
  if (!a.svg.empty())
    if (Status st = WriteTextFile("--svg", a.svg, ValidationScatterSvg(s)); !st.ok())
      return Fail(st);
  const std::string last = ValidationSummaryLine(s);
  if (a.markdown) {
    std::printf("| family | n | time MAPE | worst case | worst error | memory n | memory MAPE |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (const FamilyStats& f : s.families)
      std::printf("| %s | %d%s | %.1f %% | %s | %.1f %% | %d | %s |\n", f.family.c_str(), f.n,
                  f.skipped ? fmt::format(" (+{} skipped)", f.skipped).c_str() : "", 100 * f.mape,
                  f.worst_id.c_str(), 100 * f.worst, f.mem_n,
                  f.mem_n ? fmt::format("{:.1f} %", 100 * f.mem_mape).c_str() : "-");
    std::printf("| **all** | %d (+%d skipped) | **%.1f %%** | | | %d | **%.1f %%** |\n", s.n,
                s.skipped, 100 * s.mape, s.mem_n, 100 * s.mem_mape);
    std::printf("\n%s\n%s\n", BandCoverageLine(s).c_str(), last.c_str());
    return 0;
  }
  if (a.json) {
    std::cout << ValidationJson(s) << "\n";
    return 0;
  }
  std::printf("%-22s %-40s %10s %10s %8s %9s %9s %8s %8s\n", "case", "strategy", "pred s",
              "target s", "err %", "mem GiB", "meas GiB", "err %", "assumed");
  size_t assumed = 0;
  int with_assumed = 0;
  for (const CaseResult& r : s.cases) {
    if (!a.family.empty() && r.family != a.family) continue;
    if (r.skipped) {
      std::printf("%-22s skipped: %s\n", r.id.c_str(), r.reason.c_str());
      continue;
    }
    std::string mem = r.measured_mem_gib > 0
                          ? fmt::format("{:9.2f} {:9.2f} {:+8.1f}", r.predicted_mem_gib,
                                        r.measured_mem_gib, 100 * r.mem_error)
                          : fmt::format("{:9.2f} {:>9} {:>8}", r.predicted_mem_gib, "-", "-");
    std::printf("%-22s %-40s %10.4f %10.4f %+8.1f %s %8zu\n", r.id.c_str(), r.strategy_used.c_str(),
                r.predicted_s, r.target_s, 100 * r.error, mem.c_str(), r.assumed.size());
    assumed += r.assumed.size();
    with_assumed += !r.assumed.empty();
  }
  std::printf("\n%-16s %5s %8s %9s  %-22s %6s %10s\n", "family", "n", "MAPE %", "worst %",
              "worst case", "mem n", "mem MAPE %");
  for (const FamilyStats& f : s.families)
    std::printf("%-16s %5d %8.1f %9.1f  %-22s %6d %10.1f%s\n", f.family.c_str(), f.n, 100 * f.mape,
                100 * f.worst, f.worst_id.c_str(), f.mem_n, 100 * f.mem_mape,
                f.skipped ? fmt::format("  ({} skipped)", f.skipped).c_str() : "");
  std::printf(
      "assumed: %zu settings filled in (null or unstated in the cases) over %d cases; --json "
      "lists them per case\n",
      assumed, with_assumed);
  std::printf("%s\n", BandCoverageLine(s).c_str());
  std::printf("%s\n", last.c_str());
  return 0;
}

}  // namespace trainsim::cli

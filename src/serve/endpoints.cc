#include "serve/endpoints.h"

#include <nlohmann/json.hpp>

#include "serve/service.h"
#include "spec/embedded.h"
#include "spec/json_fields.h"
#include "trainsim/hardware_figures.h"
#include "trainsim/presets.h"
#include "trainsim/results_json.h"
#include "trainsim/schema.h"
#include "trainsim/search.h"
#include "trainsim/timeline.h"
#include "trainsim/trainsim.h"

namespace trainsim::serve {

using nlohmann::json;

namespace {

json PresetDocument(const std::string& path) {
  const std::string_view* text = detail::FindEmbeddedFile(path);
  return text ? json::parse(*text, nullptr, false) : json();
}

}  // namespace

const std::string& ModelCatalogueJson() {
  static const std::string doc = [] {
    json list = json::array();
    for (const std::string& id : ListModelPresets()) {
      auto m = LoadModelPreset(id);
      if (!m.ok()) continue;  // every embedded preset loads (tests/presets_test)
      const ParamCounts pc = CountParams(m.value());
      list.push_back({{"id", id},
                      {"name", m->name},
                      {"params_total", pc.total},
                      {"params_active", pc.active},
                      {"layers", m->layers},
                      {"hidden", m->hidden},
                      {"preset", PresetDocument("models/" + id + ".json")}});
    }
    return json{{"models", list}}.dump() + "\n";
  }();
  return doc;
}

const std::string& HardwareCatalogueJson() {
  static const std::string doc = [] {
    json list = json::array();
    for (const std::string& id : ListHardwarePresets()) {
      auto h = LoadHardwarePreset(id);
      if (!h.ok()) continue;
      list.push_back(
          {{"id", id},
           {"name", h->name},
           {"peak_bf16_flops", PeakUnknown(*h, "bf16") ? json(nullptr) : json(h->peak_bf16_flops)},
           {"hbm_bytes", h->hbm_bytes},
           {"hbm_bw_bytes_per_s", h->hbm_bw_bytes_per_s},
           {"scaleup_domain", h->scaleup_domain},
           {"price_usd_per_gpu_hour", h->price_usd_per_gpu_hour},
           {"preset", PresetDocument("hardware/" + id + ".json")}});
    }
    return json{{"hardware", list}}.dump() + "\n";
  }();
  return doc;
}

namespace {

// The event-driven step of a simulated report (as `simulate` runs it: p2p message size from the
// model, no slowdown).
Result<Timeline> RunTimeline(const SimInputs& in, const StepReport& r) {
  TimelineOptions o;
  o.p2p_message_bytes = PipelineMessageBytes(in.model, in.strategy);
  return SimulateTimeline(r, in.strategy, o);
}

}  // namespace

Result<std::string> SimulateJson(SimInputs& in) {
  auto rep = SimulateInputs(in, /*detail=*/false);
  if (!rep.ok()) return rep.status();
  const PipelineSchedule sched = in.strategy.schedule;
  if (sched == PipelineSchedule::kZeroBubbleH1 || sched == PipelineSchedule::kDualPipe)
    if (auto t = RunTimeline(in, rep.value()); !t.ok()) return t.status();
  return FormatReportJson(rep.value(), in.model, in.hardware, in.strategy) + "\n";
}

Result<std::string> TimelineJson(SimInputs& in) {
  auto rep = SimulateInputs(in, /*detail=*/false);
  if (!rep.ok()) return rep.status();
  auto t = RunTimeline(in, rep.value());
  if (!t.ok()) return t.status();
  return TimelineToChromeTrace(t.value());
}

namespace {

// A workload value of a search body as the CLI spells it: a string, number or boolean.
Result<std::string> WorkloadText(const std::string& key, const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return std::string(v.get<bool>() ? "true" : "false");
  if (v.is_number()) return v.dump();
  return Status::Invalid(key, "must be a string, number or boolean, got " + v.dump());
}

// The workload keys of a search body (trainsim/search.h, SearchWorkloadKeys); "method" and
// "lora_rank" also take an array: the values to search over.
Status ReadSearchWorkload(const json& body, SearchOptions& o) {
  std::map<std::string, std::string> given;
  for (const std::string& key : SearchWorkloadKeys()) {
    if (!body.contains(key) || body[key].is_null()) continue;
    const json& v = body[key];
    if (!v.is_array() || (key != "method" && key != "lora_rank")) {
      auto t = WorkloadText(key, v);
      if (!t.ok()) return t.status().WithContext("request");
      given[key] = t.value();
      continue;
    }
    std::string list;
    for (const json& e : v) {
      auto t = WorkloadText(key, e);
      if (!t.ok()) return t.status().WithContext("request");
      list += (list.empty() ? "" : ",") + t.value();
    }
    if (v.empty()) return Status::Invalid(key, "an empty list").WithContext("request");
    given[key] = list;
  }
  return ApplySearchWorkload(given, o);
}

}  // namespace

Result<SearchRequest> ReadSearchRequest(const json& body) {
  std::vector<std::string_view> keys = {"model",     "hardware",     "hw_override", "gpus",
                                        "gbs",       "seq",          "dtype",       "top",
                                        "objective", "memory_margin"};
  for (const std::string& k : SearchWorkloadKeys()) keys.push_back(k);
  if (Status st = CheckKeys(body, keys); !st.ok()) return st;
  SearchRequest req;
  SearchOptions& o = req.options;
  std::string dtype = "bf16", objective = "time";
  detail::FieldReader f(body, "request");
  f.Int("gpus", o.gpus, 1);
  f.Int("gbs", o.gbs, 1);
  f.Int("seq", o.seq, 1);
  f.String("dtype", dtype);
  f.Int("top", o.top_k, 1);
  f.String("objective", objective);
  f.Double("memory_margin", o.memory_margin, 0.0);
  for (const char* k : {"model", "hardware", "hw_override"}) f.Ignore(k);
  for (const std::string& k : SearchWorkloadKeys()) f.Ignore(k.c_str());
  if (Status st = f.Finish(true); !st.ok()) return st;
  if (Status st = ReadSearchWorkload(body, o); !st.ok()) return st;
  // The CLI's checks on the same options (cmd_search.cc).
  if (!f.Has("gbs")) return Status::Invalid("gbs", "required (global batch in sequences)");
  if (o.top_k > 100000) return Status::Invalid("top", "must be in [1, 100000]");
  if (o.memory_margin > 0.9) return Status::Invalid("memory_margin", "must be in [0, 0.9]");
  auto obj = ParseObjective(objective);
  if (!obj.ok()) return obj.status();
  o.objective = obj.value();
  auto dt = ParseDType(dtype);
  if (!dt.ok()) return dt.status();
  o.dtype = dt.value();
  auto m = ReadModel(body);
  if (!m.ok()) return m.status();
  req.model = std::move(m).value();
  auto hw = ReadHardware(body, nullptr);
  if (!hw.ok()) return hw.status();
  req.hardware = std::move(hw).value();
  // The search's own rules (the workload under simulate's bounds): a 400 before a stream starts.
  if (Status st = CheckSearchOptions(req.model, req.hardware, o); !st.ok()) return st;
  return req;
}

Response Service::Simulate(std::string_view body) const {
  if (auto hit = simulate_cache_->Find(body)) {
    Response r;
    r.body = std::move(*hit);
    return r;
  }
  const ComputeGate::Pass pass(*gate_);  // cache hits skip the queue
  auto parsed = ParseBody(body);
  if (!parsed.ok()) return StatusResponse(parsed.status());
  auto in = ReadSimInputs(parsed.value());
  if (!in.ok()) return StatusResponse(in.status());
  auto out = SimulateJson(in.value());
  if (!out.ok()) return StatusResponse(out.status());
  Response r;
  r.body = std::move(out).value();
  simulate_cache_->Insert(body, r.body);  // errors are not kept: they are cheap
  return r;
}

Response Service::Timeline(std::string_view body) const {
  const ComputeGate::Pass pass(*gate_);
  auto parsed = ParseBody(body);
  if (!parsed.ok()) return StatusResponse(parsed.status());
  auto in = ReadSimInputs(parsed.value());
  if (!in.ok()) return StatusResponse(in.status());
  auto out = TimelineJson(in.value());
  if (!out.ok()) return StatusResponse(out.status());
  Response r;
  r.body = std::move(out).value();
  return r;
}

Response Service::Validate(std::string_view body) const {
  const ComputeGate::Pass pass(*gate_);
  auto parsed = ParseBody(body);
  if (!parsed.ok()) return StatusResponse(parsed.status());
  const json& j = parsed.value();
  if (Status st = CheckKeys(j, {"cases"}); !st.ok()) return StatusResponse(st);
  std::string text = opt_.shipped_cases, origin = opt_.shipped_cases_origin;
  if (j.contains("cases") && j["cases"].is_string()) {
    text = j["cases"].get<std::string>(), origin = "cases";
  } else if (j.contains("cases") && j["cases"].is_array()) {
    text.clear(), origin = "cases";
    for (const json& c : j["cases"]) text += c.dump() + "\n";
  } else if (j.contains("cases") && !j["cases"].is_null()) {
    return ErrorResponse(400, "cases: must be JSONL text or an array of case objects", "cases");
  }
  if (origin.empty())
    return ErrorResponse(400, "cases: required (this server was started without --cases)", "cases");
  std::vector<CaseResult> unparsable;
  auto cases = ParseValidationCases(text, origin, &unparsable);
  if (!cases.ok()) return StatusResponse(cases.status());
  ValidationSummary s = ScoreCases(cases.value(), std::move(unparsable));
  if (s.cases.empty()) return ErrorResponse(400, "cases: no validation cases", "cases");
  Response r;
  r.body = ValidationJson(s) + "\n";
  return r;
}

}  // namespace trainsim::serve

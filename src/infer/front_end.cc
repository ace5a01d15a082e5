// The inference request every front-end builds (trainsim/infer_front_end.h): `trainsim infer`'s
// options into a spec, and the `infer --json` document.
#include <sstream>
#include <string>
#include <vector>

#include "spec/field_text.h"
#include "spec/json_fields.h"
#include "trainsim/infer_front_end.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// A comma list of names; an empty item (",,", a leading or trailing comma) is refused, naming
// the field (issue 11: --search-weight-dtypes ',,' searched the default dtype without a word).
Result<std::vector<std::string>> SplitCommas(const std::string& s, const char* field) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::stringstream in(s + ",");  // so that a trailing comma yields its empty item
  for (std::string item; std::getline(in, item, ',');) {
    if (item.find_first_not_of(" \t") == std::string::npos)
      return Status::Invalid(field, "a comma list of names: empty item in '" + s + "'");
    out.push_back(item);
  }
  return out;
}

// An optional positive figure: 0 = none, else at least 1e-6 of its unit (a denormal would be
// taken as a real bound: issue 11) and at most `hi`.
Status CheckOptional(const char* field, double v, double hi) {
  if (v == 0 || (v >= 1e-6 && v <= hi)) return Status::Ok();
  return Status::Invalid(field, "must be 0 (none) or in [1e-06, " + detail::NumberText(hi) +
                                    "], got " + detail::NumberText(v));
}

Status SetDtypes(const InferRequest& a, InferenceSpec& s) {
  auto wd = ParseWeightDType(a.weight_dtype);
  if (!wd.ok()) return wd.status();
  s.weight_dtype = wd.value();
  if (!a.kv_dtype.empty()) {
    auto kd = ParseKvDType(a.kv_dtype);
    if (!kd.ok()) return kd.status();
    s.kv_dtype = kd.value();
    s.kv_dtype_given = true;
  }
  if (a.quant == "awq")
    s.quant = QuantMethod::kAwq;
  else if (a.quant == "gptq")
    s.quant = QuantMethod::kGptq;
  else if (!a.quant.empty())
    return Status::Invalid("quant", "must be gptq or awq");
  if (s.quant != QuantMethod::kNone && s.weight_dtype != WeightDType::kInt4 &&
      s.weight_dtype != WeightDType::kInt8)
    return Status::Invalid("quant",
                           "applies to weight-only int4/int8 (give --weight-dtype int4 "
                           "or int8), not " +
                               std::string(WeightDTypeName(s.weight_dtype)));
  return Status::Ok();
}

Status SetDisaggregation(const InferRequest& a, InferenceSpec& s) {
  if (a.disaggregate.empty()) {
    if (a.prefill_tp > 0 || a.decode_tp > 0)
      return Status::Invalid(a.prefill_tp > 0 ? "prefill_tp" : "decode_tp", "needs --disaggregate");
    return Status::Ok();
  }
  if (Status st = ParseDisaggregation(a.disaggregate, s); !st.ok()) return st;
  s.prefill_tp = a.prefill_tp > 0 ? a.prefill_tp : a.tp;
  s.decode_tp = a.decode_tp > 0 ? a.decode_tp : a.tp;
  if (a.gpus == 0)
    s.gpus = a.pp * (s.prefill_instances * s.prefill_tp + s.decode_instances * s.decode_tp);
  return Status::Ok();
}

ordered_json SearchDocument(const ModelSpec& m, const HardwareSpec& hw, const InferSearchSpec& s,
                            const InferSearchResult& r) {
  ordered_json j = ordered_json::parse(InferSearchJson(r));
  j["model"] = m.name;
  j["hardware"] = hw.id;
  j["hardware_calibrated"] = hw.calibrated;
  j["gpus"] = s.gpus;
  j["slo_ttft_s"] = s.slo_ttft_s > 0 ? ordered_json(s.slo_ttft_s) : nullptr;
  j["slo_tpot_s"] = s.slo_tpot_s > 0 ? ordered_json(s.slo_tpot_s) : nullptr;
  return j;
}

}  // namespace

Result<InferenceSpec> MakeInferenceSpec(const InferRequest& a) {
  if (a.tp < 1) return Status::Invalid("tp", "must be >= 1");
  if (a.pp < 1) return Status::Invalid("pp", "must be >= 1");
  if (a.batch_given && a.rate > 0)
    return Status::Invalid("rate", "excludes batch (the rate sets the concurrency)");
  InferenceSpec s;
  s.gpus = a.gpus > 0 ? a.gpus : a.tp * a.pp;
  s.tp = a.tp;
  s.pp = a.pp;
  s.ep = a.ep;
  s.prompt_len = a.prompt_len;
  s.output_len = a.output_len;
  s.batch = a.rate > 0 ? 0 : a.batch;
  s.request_rate = a.rate;
  if (Status st = SetDtypes(a, s); !st.ok()) return st;
  s.engine = a.engine;
  s.gpu_memory_utilization = a.gpu_memory_utilization;
  s.prefix_cache_hit = a.prefix_cache_hit;
  s.max_num_seqs = a.max_num_seqs;
  s.draft = a.draft_model;
  s.spec_tokens = a.spec_tokens;
  s.acceptance_rate = a.acceptance_rate;
  if (Status st = CheckOptional("acceptance_rate", a.acceptance_rate, 1); !st.ok()) return st;
  if (Status st = CheckOptional("slo_ttft_ms", a.slo_ttft_ms, 1e9); !st.ok()) return st;
  if (Status st = CheckOptional("slo_tpot_ms", a.slo_tpot_ms, 1e9); !st.ok()) return st;
  s.slo_ttft_s = a.slo_ttft_ms / 1e3;
  s.slo_tpot_s = a.slo_tpot_ms / 1e3;
  if (Status st = SetDisaggregation(a, s); !st.ok()) return st;
  return s;
}

Result<InferSearchSpec> MakeInferSearchSpec(const InferRequest& a, const InferenceSpec& base) {
  InferSearchSpec s;
  s.base = base;
  s.gpus = base.gpus;
  s.slo_ttft_s = a.slo_ttft_ms / 1e3;
  s.slo_tpot_s = a.slo_tpot_ms / 1e3;
  s.objective = a.objective;
  s.price_usd_per_gpu_hour = a.price;
  s.top = a.top;
  s.disaggregate = a.search_disaggregate;
  if (base.disaggregated())
    return Status::Invalid("disaggregate", "excludes --search (use --search-disaggregate)");
  if (a.rate > 0) return Status::Invalid("rate", "excludes --search (it ranks fixed batches)");
  if (a.price < 0) return Status::Invalid("price", "must be >= 0");
  if (a.top < 1) return Status::Invalid("top", "must be >= 1");
  auto weight_dtypes = SplitCommas(a.search_weight_dtypes, "search_weight_dtypes");
  if (!weight_dtypes.ok()) return weight_dtypes.status();
  auto kv_dtypes = SplitCommas(a.search_kv_dtypes, "search_kv_dtypes");
  if (!kv_dtypes.ok()) return kv_dtypes.status();
  for (const std::string& d : weight_dtypes.value()) {
    auto w = ParseWeightDType(d);
    if (!w.ok()) return w.status();
    s.weight_dtypes.push_back(w.value());
  }
  for (const std::string& d : kv_dtypes.value()) {
    auto k = ParseKvDType(d);
    if (!k.ok()) return k.status();
    s.kv_dtypes.push_back(k.value());
  }
  return s;
}

Result<std::string> InferJson(const ModelSpec& m, const HardwareSpec& hw, const InferRequest& r,
                              std::chrono::steady_clock::time_point deadline) {
  auto spec = MakeInferenceSpec(r);
  if (!spec.ok()) return spec.status();
  if (r.search) {
    auto s = MakeInferSearchSpec(r, spec.value());
    if (!s.ok()) return s.status();
    s.value().deadline = deadline;
    auto res = SearchInference(m, hw, s.value());
    if (!res.ok()) return res.status();
    if (!res->complete) return Status::Invalid("time_limit", "the search reached its deadline");
    return SearchDocument(m, hw, s.value(), res.value()).dump(2);
  }
  auto rep = SimulateInference(m, hw, spec.value());
  if (!rep.ok()) return rep.status();
  // Which hardware, and whether its efficiencies were fitted on it (uncalibrated hardware is
  // marked in every report).
  ordered_json j = ordered_json::parse(InferenceReportJson(rep.value()));
  j["hardware"] = hw.id;
  j["hardware_calibrated"] = hw.calibrated;
  j["hardware_calibration_status"] = CalibrationStatus(hw);
  return j.dump(2);
}

Result<InferRequest> ReadInferRequest(const json& body, const std::vector<std::string>& extra) {
  InferRequest r;
  detail::FieldReader f(body, "request");
  f.Int("gpus", r.gpus, 1);
  f.Int("tp", r.tp, 1);
  f.Int("pp", r.pp, 1);
  f.Int("ep", r.ep, 0);
  f.Int("max_num_seqs", r.max_num_seqs, 1);
  f.Double("prompt_len", r.prompt_len, 1);
  f.Double("output_len", r.output_len, 1);
  f.Double("batch", r.batch, 0);
  f.Double("rate", r.rate, 0);
  f.Double("gpu_memory_utilization", r.gpu_memory_utilization, 1e-3);
  f.Double("prefix_cache_hit", r.prefix_cache_hit, 0);
  for (auto [key, out] :
       {std::pair{"weight_dtype", &r.weight_dtype}, std::pair{"kv_dtype", &r.kv_dtype},
        std::pair{"quant", &r.quant}, std::pair{"engine", &r.engine},
        std::pair{"disaggregate", &r.disaggregate}, std::pair{"objective", &r.objective},
        std::pair{"search_weight_dtypes", &r.search_weight_dtypes},
        std::pair{"search_kv_dtypes", &r.search_kv_dtypes}})
    f.String(key, *out);
  f.Int("spec_tokens", r.spec_tokens, 0);
  f.Double("acceptance_rate", r.acceptance_rate, 0);
  f.Int("prefill_tp", r.prefill_tp, 1);
  f.Int("decode_tp", r.decode_tp, 1);
  f.Double("slo_ttft_ms", r.slo_ttft_ms, 0);
  f.Double("slo_tpot_ms", r.slo_tpot_ms, 0);
  f.Bool("search", r.search);
  f.Double("price", r.price, 0);
  f.Int("top", r.top, 1);
  f.Bool("search_disaggregate", r.search_disaggregate);
  f.Ignore("draft_model");
  for (const std::string& k : extra) f.Ignore(k.c_str());
  if (Status st = f.Finish(true); !st.ok()) return st;
  for (const char* k : {"prompt_len", "output_len"})
    if (!f.Has(k)) return Status::Invalid(k, "required (tokens per request)");
  r.batch_given = f.Has("batch");
  if (body.contains("draft_model") && !body["draft_model"].is_null()) {
    const json& d = body["draft_model"];
    Result<ModelSpec> m =
        Status::Invalid("draft_model", "must be a preset id (string) or a config.json object");
    if (d.is_string()) m = LoadModelPreset(d.get<std::string>());
    if (d.is_object()) m = ParseModelJson(d.dump(), "draft_model");
    if (!m.ok()) return m.status();
    r.draft_model = m.value();
  }
  return r;
}

}  // namespace trainsim

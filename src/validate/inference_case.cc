#include "validate/inference_case.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "spec/json_fields.h"
#include "trainsim/presets.h"
#include "validate/case_strategy.h"
#include "validate/notes_match.h"

namespace trainsim::detail {
namespace {

using nlohmann::json;

std::string Str(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

int IntOr(const json& j, const char* key, int dflt) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<int>() : dflt;
}

std::string FamilyOf(const std::string& id) {
  const auto dash = id.rfind('-');
  return dash == std::string::npos ? id : id.substr(0, dash);
}

// What only the notes say: the quantisation scheme of int weights (Qwen's benchmark names
// "GPTQ-Int4" / "AWQ") and Llama-4 Maverick's alternating dense/MoE layers
// ("interleave_moe_layer_step 2"), which the case's model object cannot express.
void ReadNotes(const std::string& notes, InferenceCase& c) {
  if (notes.find(", AWQ,") != std::string::npos) {
    c.spec.quant = QuantMethod::kAwq;
    c.assumed.push_back({"quant", "awq", "named in the case notes"});
  } else if (notes.find("GPTQ-Int") != std::string::npos) {
    c.spec.quant = QuantMethod::kGptq;
    c.assumed.push_back({"quant", "gptq", "named in the case notes"});
  }
  std::vector<std::string> mt;
  if (c.model.is_moe() && MatchNotes(notes, "interleave_moe_layer_step%s%d", mt)) {
    c.model.moe.layer_freq = std::stoi(mt[0]);
    c.model.moe.dense_ffn = c.model.ffn;
    c.assumed.push_back({"moe.layer_freq", mt[0], "interleave_moe_layer_step in the notes"});
  }
  // Llama-4 iRoPE: "chunked local attention (8192) on 3 of every 4 layers".
  if (MatchNotes(notes, "chunked local attention (%d) on %d of every %d layers", mt) &&
      std::stoi(mt[2]) > 0) {
    c.model.attention.kind = AttentionKind::kChunkedLocal;
    c.model.attention.window = std::stoll(mt[0]);
    c.model.attention.window_layers = c.model.layers * std::stoi(mt[1]) / std::stoi(mt[2]);
    c.assumed.push_back({"attention",
                         "chunked_local " + mt[0] + " on " +
                             std::to_string(c.model.attention.window_layers) + " layers",
                         "chunked local attention in the notes (Llama-4 attention_chunk_size)"});
  }
}

Status ReadLayout(const json& j, const std::string& where, InferenceCase& c) {
  InferenceSpec& s = c.spec;
  s.gpus = IntOr(j, "gpus", 1);
  if (j.contains("parallel") && j["parallel"].is_object()) {
    const json& p = j["parallel"];
    s.tp = IntOr(p, "tp", 1);
    s.pp = IntOr(p, "pp", 1);
    s.ep = IntOr(p, "ep", 0);
  }
  s.engine = Str(j, "engine");
  auto wd = ParseWeightDType(Str(j, "weight_dtype"));
  if (!wd.ok()) return Status::Invalid(where + ": " + wd.status().message());
  s.weight_dtype = wd.value();
  if (!Str(j, "kv_dtype").empty()) {
    auto kd = ParseKvDType(Str(j, "kv_dtype"));
    if (!kd.ok()) return Status::Invalid(where + ": " + kd.status().message());
    s.kv_dtype = kd.value();
    s.kv_dtype_given = true;
  }
  s.batch = j.contains("batch") && j["batch"].is_number() ? j["batch"].get<double>() : 0;
  if (!j.contains("prompt_len") || !j["prompt_len"].is_number() || !j.contains("output_len") ||
      !j["output_len"].is_number())
    return Status::Invalid(where + ": prompt_len/output_len: must be numbers");
  s.prompt_len = j["prompt_len"].get<double>();
  s.output_len = j["output_len"].get<double>();
  if (j.contains("request_rate") && j["request_rate"].is_number()) {
    s.request_rate = j["request_rate"].get<double>();
    s.batch = 0;
  }
  return Status::Ok();
}

}  // namespace

bool IsInferenceCaseText(std::string_view line) {
  const json j = json::parse(line, nullptr, false);
  return j.is_object() && j.contains("target") && j["target"].is_object() &&
         j["target"].contains("metric") && !j.contains("target_iter_time_s");
}

Result<InferenceCase> ParseInferenceCase(std::string_view line, std::string_view origin) {
  auto parsed = ParseJsonText(line, origin);
  if (!parsed.ok()) return parsed.status();
  const json& j = parsed.value();
  InferenceCase c;
  c.id = Str(j, "id").empty() ? std::string(origin) : Str(j, "id");
  c.family = FamilyOf(c.id);
  const std::string where = c.id;
  if (!j.contains("model")) return Status::Invalid(where + ": model: missing");
  auto model = ParseModelJson(j["model"].dump(), where + ": model");
  if (!model.ok()) return model.status();
  c.model = model.value();
  auto hw = detail::LoadCaseHardware(j, where);
  if (!hw.ok()) return hw.status();
  c.hw = std::move(hw).value();
  if (Status st = ReadLayout(j, where, c); !st.ok()) return st;
  c.engine = c.spec.engine;
  ReadNotes(Str(j, "notes"), c);
  const json& t = j["target"];
  c.metric = Str(t, "metric");
  if (!t.contains("value") || !t["value"].is_number() || t["value"].get<double>() <= 0)
    return Status::Invalid(where + ": target.value: must be a positive number");
  c.target = t["value"].get<double>();
  return c;
}

Result<double> InferenceMetric(const InferenceCase& c, const InferenceReport& r) {
  const double p = c.spec.prompt_len, o = c.spec.output_len;
  if (c.metric == "output_tokens_per_s") return r.output_tokens_per_s;
  if (c.metric == "total_tokens_per_s") return r.output_tokens_per_s * (p + o) / o;
  if (c.metric == "latency_s") return r.ttft_s + o * r.tpot_s;
  if (c.metric == "ttft_ms") return 1e3 * r.ttft_s;
  if (c.metric == "tpot_ms") return 1e3 * r.tpot_s;
  return Status::Invalid(c.id + ": target.metric",
                         "must be output_tokens_per_s, total_tokens_per_s, latency_s, ttft_ms or "
                         "tpot_ms");
}

CaseResult ScoreInferenceCase(const InferenceCase& c) {
  CaseResult r;
  r.id = c.id;
  r.family = c.family;
  r.framework = c.engine;
  r.target_s = c.target;
  auto rep = SimulateInference(c.model, c.hw, c.spec);
  Result<double> v = rep.ok() ? InferenceMetric(c, rep.value()) : Result<double>(rep.status());
  if (!v.ok() || !(v.value() > 0)) {
    r.skipped = true;
    r.reason = !v.ok() ? v.status().message() : rep->why_not;
    return r;
  }
  r.predicted_s = r.predicted_low_s = r.predicted_high_s = v.value();
  // The report's 80 % band (InferenceReport::band) on the scored metric.
  InferenceReport low = rep.value(), high = rep.value();
  low.output_tokens_per_s = rep->output_tokens_per_s_low;
  low.ttft_s = rep->ttft_s_low;
  low.tpot_s = rep->tpot_s_low;
  high.output_tokens_per_s = rep->output_tokens_per_s_high;
  high.ttft_s = rep->ttft_s_high;
  high.tpot_s = rep->tpot_s_high;
  const double a = InferenceMetric(c, low).value(), b = InferenceMetric(c, high).value();
  r.predicted_low_s = std::min(a, b);
  r.predicted_high_s = std::max(a, b);
  r.error = (r.predicted_s - r.target_s) / r.target_s;
  r.regime = "inference:" + c.metric;
  r.assumed = c.assumed;
  for (const Assumption& a : rep->assumed) r.assumed.push_back(a);
  std::ostringstream o;
  o << "tp" << c.spec.tp << " pp" << c.spec.pp << " batch" << rep->batch << " " << rep->profile.id
    << " decode-" << rep->decode.bound << " prefill-" << rep->prefill.bound;
  r.strategy_used = o.str();
  return r;
}

Status ScoreInferenceFiles(const std::vector<std::string>& files,
                           std::vector<std::string>& training, std::vector<CaseResult>& scored) {
  for (const std::string& f : files) {
    auto text = ReadTextFile(f);
    if (!text.ok()) return text.status();
    std::istringstream in(text.value());
    std::string line;
    std::vector<std::string> lines;
    while (std::getline(in, line))
      if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
    if (lines.empty() || !IsInferenceCaseText(lines.front())) {
      training.push_back(f);
      continue;
    }
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string where = f + ":" + std::to_string(i + 1);
      auto c = ParseInferenceCase(lines[i], where);
      if (c.ok()) {
        scored.push_back(ScoreInferenceCase(c.value()));
        continue;
      }
      if (c.status().code() == StatusCode::kParseError) return c.status();
      CaseResult r;
      r.id = where;
      r.family = "inference";
      r.skipped = true;
      r.reason = c.status().message();
      scored.push_back(r);
    }
  }
  return Status::Ok();
}

}  // namespace trainsim::detail

// `validate`: parse measured runs, fill nulls with framework defaults, simulate, score.
#include "trainsim/validate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "spec/embedded.h"
#include "spec/json_fields.h"
#include "trainsim/presets.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

using nlohmann::json;

struct Framework {
  std::string id;
  std::vector<std::string> match;
  std::vector<std::string> names;  // case `framework` values this profile stands for
  bool sp = false, etp_one = false, overlap_grad = false, overlap_param = false;
  bool tp_overlap = false, cp_a2a = false, fused_ce = false, uneven = false, fa2 = false;
  double ep_overlap = 0;
  bool dedup = false;
  std::string recompute = "auto";  // default for null: auto = lightest policy that fits
  int zero = 0, mbs = 1;
  Execution exec;  // host issue rate, optimizer implementation
};

// A profile's execution keys: host_issue_us_per_kernel, optimizer_impl (fused | foreach |
// per_tensor), muon_distributed.
void ReadExecution(const json& f, Execution& e) {
  e.host_issue_us_per_kernel = f.value("host_issue_us_per_kernel", 0.0);
  const std::string impl = f.value("optimizer_impl", "fused");
  e.optimizer_impl = impl == "foreach"      ? OptimizerImpl::kForeach
                     : impl == "per_tensor" ? OptimizerImpl::kPerTensor
                                            : OptimizerImpl::kFused;
  e.muon_distributed = f.value("muon_distributed", true);
}

const std::vector<Framework>& Frameworks() {
  static const std::vector<Framework> list = [] {
    std::vector<Framework> out;
    const std::string_view* text = detail::FindEmbeddedFile("frameworks.json");
    if (!text) return out;
    json j = json::parse(text->begin(), text->end(), nullptr, false);
    if (!j.is_object() || !j.contains("frameworks")) return out;
    for (const json& f : j["frameworks"]) {
      Framework w;
      w.id = f.value("id", "");
      for (const json& m : f["match"]) w.match.push_back(m.get<std::string>());
      if (f.contains("frameworks"))
        for (const json& n : f["frameworks"]) w.names.push_back(n.get<std::string>());
      w.sp = f.value("sp", false);
      w.zero = f.value("zero", 0);
      w.etp_one = f.value("etp_one", false);
      w.overlap_grad = f.value("overlap_grad_reduce", false);
      w.overlap_param = f.value("overlap_param_gather", false);
      w.tp_overlap = f.value("tp_comm_overlap", false);
      w.cp_a2a = f.value("cp_a2a", false);
      w.fused_ce = f.value("fused_cross_entropy", false);
      w.mbs = f.value("mbs", 1);
      w.uneven = f.value("uneven_pipeline", false);
      w.ep_overlap = f.value("ep_comm_overlap", 0.0);
      w.dedup = f.value("moe_dedup_dispatch", false);
      w.fa2 = f.value("attention", "") == "fa2";
      w.recompute = f.value("recompute", "auto");
      ReadExecution(f, w.exec);
      out.push_back(w);
    }
    return out;
  }();
  return list;
}

// The case's `framework` field names a profile by its id or `frameworks` list; else the first
// profile with a `match` substring in the case's source.
const Framework& PickFramework(const std::string& framework, const std::string& source) {
  static const Framework fallback;
  if (!framework.empty())
    for (const Framework& f : Frameworks())
      if (f.id == framework ||
          std::find(f.names.begin(), f.names.end(), framework) != f.names.end())
        return f;
  for (const Framework& f : Frameworks())
    for (const std::string& m : f.match)
      if (source.find(m) != std::string::npos) return f;
  return fallback;
}

// The `attention` object of a case (shared/validation/README.md, small_pretrain.jsonl): kind
// dense_causal | sliding_window | block_sparse_windowed, window_tokens, document_masking,
// mean_document_tokens (null: kDefaultMeanDocumentTokens when documents are masked).
Status ReadAttention(const json& j, AttentionSpec& a, const std::string& where) {
  detail::FieldReader r(j, where + ": attention");
  std::string kind = "dense_causal";
  r.String("kind", kind);
  if (kind == "dense_causal") {
    a.kind = AttentionKind::kDenseCausal;
  } else if (kind == "sliding_window") {
    a.kind = AttentionKind::kSlidingWindow;
  } else if (kind == "block_sparse_windowed") {
    a.kind = AttentionKind::kBlockSparse;
  } else {
    r.Fail("kind", "must be dense_causal, sliding_window or block_sparse_windowed");
  }
  r.Int64("window_tokens", a.window, 0);
  r.Bool("document_masking", a.document_masking);
  r.Double("mean_document_tokens", a.mean_document_tokens);
  r.Ignore("window_schedule");  // free text; window_tokens (the largest window) is used
  if (Status st = r.Finish(true); !st.ok()) return st;
  return ValidateAttention(a).WithContext(where + ": attention");
}

// The case's optimizer: muon (Newton-Schulz on hidden matrices), else Adam-family.
void ReadOptimizer(const json& j, Execution& e) {
  if (j.contains("optimizer") && j["optimizer"].is_string() && j["optimizer"] == "muon")
    e.optimizer = OptimizerKind::kMuon;
}

std::string Family(const std::string& id) {
  auto dash = id.rfind('-');
  return dash == std::string::npos ? id : id.substr(0, dash);
}

// The attention pattern in force, with the mean document length assumed when none is given
// (docs/MODEL.md, "Attention patterns"): " swa1408+doc622(default)", " bsa1792+doc500".
std::string DescribeAttention(const AttentionSpec& a) {
  std::ostringstream o;
  if (a.kind == AttentionKind::kSlidingWindow && a.window > 0) o << " swa" << a.window;
  if (a.kind == AttentionKind::kBlockSparse) o << " bsa" << a.window;
  if (a.document_masking) {
    if (a.mean_document_tokens > 0)
      o << "+doc" << a.mean_document_tokens;
    else
      o << "+doc" << kDefaultMeanDocumentTokens << "(default)";
  }
  return o.str();
}

std::string Describe(const Strategy& s, const ModelSpec& m) {
  std::ostringstream o;
  o << "tp" << s.tp << " pp" << s.pp << " vpp" << s.vpp << " cp" << s.cp << " ep" << s.ep << " etp"
    << s.expert_tp() << " dp" << s.dp() << " mbs" << s.mbs << " zero" << s.zero
    << (s.sp && s.tp > 1 ? " sp" : "")
    << (s.recompute == Recompute::kFull
            ? (s.recompute_layers > 0 ? " rc-full/" + std::to_string(s.recompute_layers)
                                      : std::string(" rc-full"))
        : s.recompute == Recompute::kSelective ? std::string(" rc-sel")
                                               : std::string(""))
    << DescribeAttention(m.attention) << (s.exec.optimizer == OptimizerKind::kMuon ? " muon" : "");
  return o.str();
}

}  // namespace

Result<ValidationCase> ParseValidationCase(std::string_view line, std::string_view origin) {
  auto parsed = detail::ParseJsonText(line, origin);
  if (!parsed.ok()) return parsed.status();
  const json& j = parsed.value();
  if (!j.is_object()) return Status::Invalid(std::string(origin) + ": a case must be an object");
  ValidationCase c;
  c.id = j.contains("id") && j["id"].is_string() ? j["id"].get<std::string>() : std::string(origin);
  const std::string where = c.id;
  c.family = Family(c.id);
  const std::string source =
      j.contains("source") && j["source"].is_string() ? j["source"].get<std::string>() : "";
  const std::string notes =
      j.contains("notes") && j["notes"].is_string() ? j["notes"].get<std::string>() : "";
  const std::string framework = j.contains("framework") && j["framework"].is_string()
                                    ? j["framework"].get<std::string>()
                                    : "";
  const Framework& fw = PickFramework(framework, source);
  c.framework = fw.id;
  if (!j.contains("model")) return Status::Invalid(where + ": model: missing");
  auto model = ParseModelJson(j["model"].dump(), where + ": model");
  if (!model.ok()) return model.status();
  c.model = model.value();
  if (j.contains("attention") && j["attention"].is_object())
    if (Status st = ReadAttention(j["attention"], c.model.attention, where); !st.ok()) return st;
  if (!j.contains("hardware") || !j["hardware"].is_string())
    return Status::Invalid(where + ": hardware: must be a preset id");
  auto hw = LoadHardwarePreset(j["hardware"].get<std::string>());
  if (!hw.ok()) return Status::Invalid(where + ": " + hw.status().message());
  c.hw = hw.value();
  if (j.contains("hardware_overrides") && !j["hardware_overrides"].is_null())
    if (Status st = ApplyHardwareOverrides(c.hw, j["hardware_overrides"].dump(),
                                           where + ": hardware_overrides");
        !st.ok())
      return st;

  Strategy& s = c.strategy;
  detail::FieldReader top(j, where);
  top.Int("gpus", s.world_size);
  top.Int("seq", s.seq);
  s.mbs = fw.mbs;
  top.Int("mbs", s.mbs);
  top.Int("gbs", s.gbs);
  std::string precision = "bf16";
  top.String("precision", precision);
  if (!top.status().ok()) return top.status();
  auto dt = ParseDType(precision);
  if (!dt.ok()) return Status::Invalid(where + ": precision: " + dt.status().message());
  s.dtype = dt.value();
  if (!j.contains("parallel") || !j["parallel"].is_object())
    return Status::Invalid(where + ": parallel: missing");
  const json& par = j["parallel"];
  detail::FieldReader p(par, where + ": parallel");
  p.Int("tp", s.tp);
  p.Int("pp", s.pp);
  p.Int("vpp", s.vpp);
  p.Int("cp", s.cp);
  p.Int("ep", s.ep);
  s.etp = 0;
  p.Int("etp", s.etp);
  int dp = 0;
  p.Int("dp", dp);
  bool fsdp = false;
  p.Bool("fsdp", fsdp);
  int zero = -1;
  p.Int("zero", zero, 0);
  s.sp = fw.sp;
  p.Bool("sp", s.sp);
  if (!p.status().ok()) return p.status();
  if (s.etp == 0 && fw.etp_one && c.model.is_moe()) s.etp = 1;
  s.fsdp = fsdp;
  s.zero = zero >= 0 ? zero : (fsdp ? 3 : fw.zero);  // fsdp with zero < 2: 3 (normalised)
  s.overlap_grad_reduce = fw.overlap_grad;
  s.overlap_param_gather = fw.overlap_param;
  s.tp_comm_overlap = fw.tp_overlap;
  s.cp_a2a = fw.cp_a2a;
  s.fused_cross_entropy = fw.fused_ce;
  s.uneven_pipeline = fw.uneven;
  s.ep_comm_overlap = fw.ep_overlap;
  s.moe_dedup_dispatch = fw.dedup;
  s.fa2_attention = fw.fa2;
  s.exec = fw.exec;
  ReadOptimizer(j, s.exec);
  // FSDP mixed precision PURE reduces gradients in bf16; DEFAULT in fp32 (Composer).
  // Megatron-LM accumulates and reduces gradients in fp32 for bf16 only
  // (arguments.py: bf16 implies --accumulate-allreduce-grads-in-fp32); fp16 keeps fp16 grads.
  if (s.fsdp)
    s.main_grad_fp32 = notes.find("PURE") == std::string::npos;
  else
    s.main_grad_fp32 = s.dtype != DType::kFp16;
  if (dp > 0 && 1LL * dp * s.tp * s.pp * s.cp != s.world_size)
    return Status::Invalid(where + ": parallel.dp: dp*tp*pp*cp must equal gpus");
  std::string rc;
  if (j.contains("recompute") && j["recompute"].is_string()) rc = j["recompute"].get<std::string>();
  if (rc.empty()) rc = fw.recompute;
  if (rc == "auto") {
    c.recompute_auto = true;
  } else if (auto policy = ParseRecompute(rc); policy.ok()) {
    s.recompute = policy.value();
  } else {
    return Status::Invalid(where + ": recompute: must be none, selective, full or null");
  }
  s = NormaliseStrategy(s);  // vpp > 1: interleaved; fsdp: zero >= 2; the batch both ways
  if (!j.contains("target_iter_time_s") || !j["target_iter_time_s"].is_number())
    return Status::Invalid(where + ": target_iter_time_s: must be a number");
  c.target_s = j["target_iter_time_s"].get<double>();
  if (j.contains("measured") && j["measured"].is_object()) {
    const json& m = j["measured"];
    if (m.contains("peak_mem_gib") && m["peak_mem_gib"].is_number())
      c.measured_mem_gib = m["peak_mem_gib"].get<double>();
  }
  return c;
}

Result<std::vector<ValidationCase>> ParseValidationCases(std::string_view jsonl,
                                                         std::string_view origin,
                                                         std::vector<CaseResult>* unparsable) {
  std::vector<ValidationCase> cases;
  std::istringstream in{std::string(jsonl)};
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = std::string(origin) + ":" + std::to_string(lineno);
    json probe = json::parse(line, nullptr, false);
    if (probe.is_discarded()) return Status::Parse(where + ": malformed JSON");
    auto c = ParseValidationCase(line, where);
    if (!c.ok()) {
      if (unparsable) {
        CaseResult r;
        r.id = probe.is_object() && probe.contains("id") && probe["id"].is_string()
                   ? probe["id"].get<std::string>()
                   : where;
        r.family = Family(r.id);
        r.skipped = true;
        r.reason = c.status().message();
        unparsable->push_back(r);
      }
      continue;
    }
    cases.push_back(std::move(c).value());
  }
  return cases;
}

Result<std::vector<ValidationCase>> LoadValidationCases(const std::vector<std::string>& files,
                                                        std::vector<CaseResult>* unparsable) {
  std::vector<ValidationCase> cases;
  for (const std::string& f : files) {
    auto text = ReadTextFile(f);
    if (!text.ok()) return text.status();
    auto parsed = ParseValidationCases(text.value(), f, unparsable);
    if (!parsed.ok()) return parsed.status();
    for (ValidationCase& c : parsed.value()) cases.push_back(std::move(c));
  }
  return cases;
}

namespace {

void Aggregate(ValidationSummary& sum) {
  std::map<std::string, FamilyStats> fam;
  double total = 0, mem_total = 0;
  sum.n = sum.skipped = sum.mem_n = sum.band_inside = 0;
  for (const CaseResult& r : sum.cases) {
    FamilyStats& f = fam[r.family];
    f.family = r.family;
    if (r.skipped) {
      ++f.skipped;
      ++sum.skipped;
      continue;
    }
    const double e = std::fabs(r.error);
    ++f.n;
    ++sum.n;
    f.mape += e;
    total += e;
    if (r.predicted_low_s <= r.target_s && r.target_s <= r.predicted_high_s) ++sum.band_inside;
    if (e >= f.worst) {
      f.worst = e;
      f.worst_id = r.id;
    }
    if (r.measured_mem_gib > 0) {
      ++f.mem_n;
      ++sum.mem_n;
      f.mem_mape += std::fabs(r.mem_error);
      mem_total += std::fabs(r.mem_error);
    }
  }
  sum.families.clear();
  for (auto& [name, f] : fam) {
    if (f.n) f.mape /= f.n;
    if (f.mem_n) f.mem_mape /= f.mem_n;
    sum.families.push_back(f);
  }
  sum.mape = sum.n ? total / sum.n : 0;
  sum.mem_mape = sum.mem_n ? mem_total / sum.mem_n : 0;
  sum.band_coverage = sum.n ? static_cast<double>(sum.band_inside) / sum.n : 0;
}

}  // namespace

ValidationSummary ScoreCases(const std::vector<ValidationCase>& cases) {
  ValidationSummary sum;
  for (const ValidationCase& c : cases) {
    CaseResult r;
    r.id = c.id;
    r.family = c.family;
    r.framework = c.framework;
    r.target_s = c.target_s;
    r.measured_mem_gib = c.measured_mem_gib;
    Strategy s = c.strategy;
    Result<StepReport> rep = Status::Invalid("not run");
    if (c.recompute_auto) {
      // The framework's default is no recompute; a run that would not fit used recompute.
      // Lightest first: none, Megatron's default selective (core_attn), the wider module set
      // that MoE/MLA recipes use, then full.
      const struct {
        Recompute policy;
        int modules;
      } ladder[] = {{Recompute::kNone, 0},
                    {Recompute::kSelective, kRecomputeCoreAttn},
                    {Recompute::kSelective, kRecomputeCoreAttn | kRecomputeLayerNorm |
                                                kRecomputeMlaUpProj | kRecomputeMoeAct},
                    {Recompute::kFull, 0}};
      for (const auto& step : ladder) {
        s.recompute = step.policy;
        if (step.modules) s.recompute_modules = step.modules;
        if (step.policy == Recompute::kFull) {
          // Full recompute of the fewest layers per stage that fits (Megatron's
          // --recompute-method block --recompute-num-layers N); memory falls as N grows.
          const int per_stage = std::max(1, c.model.layers / s.pp);
          int lo = 1, hi = per_stage;
          s.recompute_layers = hi;
          rep = Simulate(c.model, c.hw, s);
          if (!rep.ok() || !rep->fits) break;
          while (lo < hi) {
            const int mid = (lo + hi) / 2;
            s.recompute_layers = mid;
            auto probe = Simulate(c.model, c.hw, s);
            if (probe.ok() && probe->fits) {
              hi = mid;
            } else {
              lo = mid + 1;
            }
          }
          s.recompute_layers = hi == per_stage ? -1 : hi;
          rep = Simulate(c.model, c.hw, s);
          break;
        }
        rep = Simulate(c.model, c.hw, s);
        if (!rep.ok() || rep->fits) break;
      }
    } else {
      rep = Simulate(c.model, c.hw, s);
    }
    if (!rep.ok()) {
      r.skipped = true;
      r.reason = rep.status().message();
    } else {
      r.predicted_s = rep->step_time_s;
      r.predicted_low_s = rep->step_time_s_low;
      r.predicted_high_s = rep->step_time_s_high;
      r.regime = std::string(rep->uncertainty.regime);
      r.error = (r.predicted_s - r.target_s) / r.target_s;
      r.predicted_mem_gib = rep->peak_mem_bytes / (1024.0 * 1024.0 * 1024.0);
      if (r.measured_mem_gib > 0)
        r.mem_error = (r.predicted_mem_gib - r.measured_mem_gib) / r.measured_mem_gib;
      r.strategy_used = Describe(s, c.model);
    }
    sum.cases.push_back(std::move(r));
  }
  Aggregate(sum);
  return sum;
}

ValidationSummary ScoreCases(const std::vector<ValidationCase>& cases,
                             std::vector<CaseResult> unparsable) {
  ValidationSummary sum = ScoreCases(cases);
  for (CaseResult& r : unparsable) sum.cases.push_back(std::move(r));
  Aggregate(sum);
  return sum;
}

Result<ValidationSummary> RunValidation(const std::vector<std::string>& files) {
  std::vector<CaseResult> bad;
  auto cases = LoadValidationCases(files, &bad);
  if (!cases.ok()) return cases.status();
  return ScoreCases(cases.value(), std::move(bad));
}

}  // namespace trainsim

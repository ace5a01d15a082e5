// `validate`: parse measured runs, fill nulls with framework defaults, simulate, score.
#include "trainsim/validate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "memory/memory.h"
#include "spec/field_text.h"
#include "spec/json_fields.h"
#include "spec/pipeline_split.h"
#include "trainsim/presets.h"
#include "trainsim/trainsim.h"
#include "trainsim/uncertainty.h"
#include "util/units.h"
#include "validate/case_strategy.h"
#include "validate/inference_case.h"
#include "validate/recompute_fit.h"

namespace trainsim {
namespace {

// The source a blinded case is read with: matched by no profile (tools/blind_validate.py uses the
// same text).
constexpr const char* kBlindSource = "(unknown source)";

using nlohmann::json;

// The `attention` object of a case (shared/validation/README.md, small_pretrain.jsonl): kind
// dense_causal | sliding_window | block_sparse_windowed | chunked_local, window_tokens,
// document_masking, mean_document_tokens (null: kDefaultMeanDocumentTokens when documents are
// masked).
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
  } else if (kind == "chunked_local") {
    a.kind = AttentionKind::kChunkedLocal;  // window_tokens = the chunk (Llama-4 iRoPE)
  } else {
    r.Fail("kind", "must be dense_causal, sliding_window, block_sparse_windowed or chunked_local");
  }
  r.Int64("window_tokens", a.window, 0);
  r.Bool("document_masking", a.document_masking);
  r.Double("mean_document_tokens", a.mean_document_tokens);
  r.Ignore("window_schedule");  // free text; window_tokens (the largest window) is used
  if (Status st = r.Finish(true); !st.ok()) return st;
  return ValidateAttention(a).WithContext(where + ": attention");
}

// The case's optimizer (trainsim/finetune.h names); an unknown one stays AdamW.
void ReadOptimizer(const json& j, Execution& e) {
  if (j.contains("optimizer") && j["optimizer"].is_string())
    if (auto k = ParseOptimizer(j["optimizer"].get<std::string>()); k.ok()) e.optimizer = *k;
}

// A supervised or preference fine-tuning stage, or a PEFT method: the stacks such runs use
// (Hugging Face Trainer and its wrappers) differ from the pre-training recipes.
bool IsFineTuningCase(const json& j) {
  static constexpr std::string_view kStages[] = {"sft", "dpo", "ipo", "kto", "orpo", "simpo", "rm"};
  auto text = [&](const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  const std::string stage = text("stage"), method = text("method");
  if (std::find(std::begin(kStages), std::end(kStages), stage) != std::end(kStages)) return true;
  return !method.empty() && method != "full";
}

// What the run looks like (model size, parallel sizes the case states; null sizes are 1), for
// the fallback profile of a run no profile names.
detail::RunShape Shape(const json& j, const ModelSpec& m) {
  detail::RunShape r;
  r.params = static_cast<double>(CountParams(m).total);
  r.moe = m.is_moe();
  if (j.contains("stage") && j["stage"].is_string()) {
    const Result<TrainStage> stage = ParseTrainStage(j["stage"].get<std::string>());
    r.rl = stage.ok() && IsRlStage(*stage);
  }
  if (!j.contains("parallel") || !j["parallel"].is_object()) return r;
  const json& par = j["parallel"];
  auto size = [&](const char* key) {
    return par.contains(key) && par[key].is_number_integer() ? par[key].get<int>() : 1;
  };
  r.tp = size("tp"), r.pp = size("pp"), r.cp = size("cp"), r.ep = size("ep");
  const bool fsdp = par.contains("fsdp") && par["fsdp"].is_boolean() && par["fsdp"].get<bool>();
  r.sharded = fsdp || size("zero") >= 2;
  r.fully_sharded = fsdp || size("zero") >= 3;
  return r;
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
  if (a.kind == AttentionKind::kChunkedLocal) o << " chunk" << a.window;
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

// The profile's memory habits that change this case's peak, listed with the profile: the
// unfused loss's bytes per logit, DeepSpeed ZeRO-1/2's gradient buckets and torch AdamW's
// foreach temporaries, as memory/memory.h applies them.
void RecordMemoryHabits(ValidationCase& c, const std::string& why) {
  const Strategy& s = c.strategy;
  const Execution& e = s.exec;
  if (!s.fused_cross_entropy && e.loss_bytes_per_logit > 0) {
    const double bytes = memory::LossBytesPerLogit(s);
    c.assumed.push_back({"loss_bytes_per_logit", detail::NumberText(bytes),
                         bytes == e.loss_bytes_per_logit
                             ? why
                             : why + "; DeepSpeed runs the 16-bit module without autocast, so "
                                     "the logits stay 16-bit"});
  }
  if (memory::HoldsReduceBuckets(s))
    c.assumed.push_back(
        {"deepspeed_reduce_bucket_elems", detail::NumberText(e.zero_reduce_bucket_elems),
         why + ": two 16-bit gradient buckets (contiguous_gradients, overlap_comm)"});
  if (memory::TorchForeachStep(s))
    c.assumed.push_back({"adam_foreach_temporaries", std::to_string(e.adam_foreach_temporaries),
                         why + ": torch AdamW's foreach update, parameter-sized temporaries at "
                               "the step"});
}

}  // namespace

Result<HardwareSpec> detail::LoadCaseHardware(const json& j, const std::string& where) {
  if (!j.contains("hardware") || !j["hardware"].is_string())
    return Status::Invalid(where + ": hardware: must be a preset id");
  auto hw = LoadHardwarePreset(j["hardware"].get<std::string>());
  if (!hw.ok()) return Status::Invalid(where + ": " + hw.status().message());
  if (j.contains("hardware_overrides") && !j["hardware_overrides"].is_null())
    if (Status st = ApplyHardwareOverrides(hw.value(), j["hardware_overrides"].dump(),
                                           where + ": hardware_overrides");
        !st.ok())
      return st;
  return hw;
}

namespace {

// The training-case schema's keys (shared/validation/README.md: "Schema" and "Training cases:
// extra keys", "RL step structure"); a set key outside them is listed in c.ignored, not dropped.
// `measured` holds the figures a source publishes; the README names seven (a source's other
// figures, e.g. a memory summed over GPUs, are listed too: trainsim scores none of them).
void ListUnknownCaseKeys(const json& j, ValidationCase& c) {
  static const std::set<std::string> kTop = {
      // "Schema"
      "id", "source", "model", "hardware", "hardware_overrides", "gpus", "precision", "parallel",
      "recompute", "seq", "mbs", "gbs", "measured", "target_iter_time_s", "target_derived", "notes",
      // "Training cases: extra keys"
      "stage", "method", "lora", "optimizer", "framework", "rl", "attention"};
  static const std::set<std::string> kParallel = {"tp",  "pp", "vpp", "cp",   "ep",
                                                  "etp", "dp", "sp",  "zero", "fsdp"};
  static const std::set<std::string> kRl = {
      // "Training cases: extra keys"
      "algorithm", "prompt_len", "response_len", "group_size", "num_prompts_per_step", "rollout",
      "generation_engine", "actor_gpus", "rollout_gpus", "critic", "reward", "reference",
      // "RL step structure"
      "mean_seq_len", "max_seq_len", "mean_response_len", "max_response_len", "max_prompt_len",
      "generation_parallel", "training_parallel", "samples_per_step", "train_samples_per_step",
      "optimizer_steps_per_rl_step", "kl_reference"};
  static const std::set<std::string> kMeasured = {
      // "Schema"
      "iter_time_s", "tokens_per_s_per_gpu", "tflops_per_gpu", "mfu", "peak_mem_gib",
      // below the schema table: "`measured` may also hold ..."
      "samples_per_s", "tokens_per_s_total"};
  const std::string why = "not in the validation case schema (shared/validation/README.md)";
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!kTop.count(it.key()) && !it.value().is_null())
      c.ignored.push_back({it.key(), it.value().dump(), why});
  for (const auto& [name, keys] : {std::pair{"parallel", &kParallel}, std::pair{"rl", &kRl},
                                   std::pair{"measured", &kMeasured}})
    if (j.contains(name) && j[name].is_object())
      for (auto it = j[name].begin(); it != j[name].end(); ++it)
        if (!keys->count(it.key()) && !it.value().is_null())
          c.ignored.push_back({std::string(name) + "." + it.key(), it.value().dump(), why});
}

}  // namespace

Result<ValidationCase> ParseValidationCase(std::string_view line, std::string_view origin) {
  auto parsed = detail::ParseJsonText(line, origin);
  if (!parsed.ok()) return parsed.status();
  const json& j = parsed.value();
  if (!j.is_object()) return Status::Invalid(std::string(origin) + ": a case must be an object");
  ValidationCase c;
  c.id = j.contains("id") && j["id"].is_string() ? j["id"].get<std::string>() : std::string(origin);
  ListUnknownCaseKeys(j, c);
  const std::string where = c.id;
  c.family = Family(c.id);
  const std::string source =
      j.contains("source") && j["source"].is_string() ? j["source"].get<std::string>() : "";
  const std::string notes =
      j.contains("notes") && j["notes"].is_string() ? j["notes"].get<std::string>() : "";
  const std::string framework = j.contains("framework") && j["framework"].is_string()
                                    ? j["framework"].get<std::string>()
                                    : "";
  if (!j.contains("model")) return Status::Invalid(where + ": model: missing");
  auto model = ParseModelJson(j["model"].dump(), where + ": model");
  if (!model.ok()) return model.status();
  c.model = model.value();
  if (j.contains("attention") && j["attention"].is_object())
    if (Status st = ReadAttention(j["attention"], c.model.attention, where); !st.ok()) return st;
  auto hw = detail::LoadCaseHardware(j, where);
  if (!hw.ok()) return hw.status();
  c.hw = std::move(hw).value();

  const detail::ProfilePick pick =
      detail::PickFramework(framework, source, c.hw, IsFineTuningCase(j), Shape(j, c.model));
  c.framework = pick.fw->id;
  c.stack_inferred = pick.fw->id == "none" || !pick.fw->fallback.empty();
  if (Status st = detail::FillCaseStrategy(j, where, pick, notes, c); !st.ok()) return st;
  c.strategy.exec = pick.fw->exec;  // host issue rate, optimizer implementation
  // The profile's execution settings are defaults like any other: listed with the profile.
  c.assumed.push_back({"host_issue_us_per_kernel",
                       detail::NumberText(c.strategy.exec.host_issue_us_per_kernel), pick.why});
  // Memory-bound kernels at efficiency.mem_fused (compiled / hand-fused) or at the fitted mem.
  c.assumed.push_back(
      {"fused_elementwise", c.strategy.exec.fused_elementwise ? "true" : "false", pick.why});
  ReadOptimizer(j, c.strategy.exec);
  detail::ReadLoopOptions(notes, c);
  RecordMemoryHabits(c, pick.why);
  // torchtitan compiles only with [compile] enable (off by default): a case whose notes do not
  // name torch.compile runs the model's eager element-wise chains (RMSNorm in fp32, complex
  // rotary, SiLU and product as separate kernels).
  if (pick.fw->eager_unless_compiled && notes.find("compile") == std::string::npos &&
      !c.strategy.exec.eager_modules) {
    c.strategy.exec.eager_modules = true;
    c.assumed.push_back({"eager_modules", "true",
                         pick.why + "; the notes do not name torch.compile, off by default"});
  }
  if (!j.contains("target_iter_time_s") || !j["target_iter_time_s"].is_number())
    return Status::Invalid(where + ": target_iter_time_s: must be a number");
  c.target_s = j["target_iter_time_s"].get<double>();
  // A measured time or memory that cannot be scored (0, negative, denormal, absurd) skips the
  // case with this reason instead of giving an infinite or negative error.
  if (!(c.target_s >= 1e-6 && c.target_s <= 1e7))
    return Status::Invalid(where + ": target_iter_time_s: must be in [1e-06, 1e+07] s, got " +
                           detail::NumberText(c.target_s));
  if (notes.find("max_memory_reserved") != std::string::npos) {
    c.memory_reserved = true;
    c.assumed.push_back({"memory compared", "reserved",
                         "case notes: the measured peak is the allocator's max_memory_reserved, "
                         "compared with the allocated peak plus the 5 % fragmentation allowance"});
  } else if (pick.fw->memory_reserved) {
    c.memory_reserved = true;
    c.assumed.push_back({"memory compared", "reserved",
                         pick.why + ": its log's memory is max_memory_reserved, compared with "
                                    "the allocated peak plus the 5 % fragmentation allowance"});
  } else if (pick.fw->memory_device) {
    c.memory_device = true;
    c.assumed.push_back({"memory compared", "device",
                         pick.why + ": its figures are the GPU's used memory (allocator reserve, "
                                    "CUDA context and workspaces), compared with the reserved "
                                    "estimate (peak + 5 % + runtime overhead)"});
  }
  if (j.contains("measured") && j["measured"].is_object()) {
    const json& m = j["measured"];
    if (m.contains("peak_mem_gib") && m["peak_mem_gib"].is_number())
      c.measured_mem_gib = m["peak_mem_gib"].get<double>();
    if (!(c.measured_mem_gib >= 1e-3 && c.measured_mem_gib <= 1e6) && c.measured_mem_gib != 0)
      return Status::Invalid(where +
                             ": measured.peak_mem_gib: must be in [0.001, 1e+06] GiB, got " +
                             detail::NumberText(c.measured_mem_gib));
  }
  return c;
}

Result<std::vector<ValidationCase>> ParseValidationCases(std::string_view jsonl,
                                                         std::string_view origin,
                                                         std::vector<CaseResult>* unparsable,
                                                         bool blind) {
  std::vector<ValidationCase> cases;
  std::istringstream in{std::string(jsonl)};
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = std::string(origin) + ":" + std::to_string(lineno);
    // Text that is not JSON fails the file; JSON that breaks a limit (nesting, duplicate keys)
    // skips its case like any other bad case.
    auto parsed = detail::ParseJsonText(line, where);
    if (!parsed.ok() && parsed.status().code() == StatusCode::kParseError)
      return Status::Parse(where + ": malformed JSON");
    json probe = parsed.ok() ? std::move(parsed).value() : json();
    if (blind && probe.is_object()) {
      probe["source"] = kBlindSource;
      if (probe.contains("framework")) probe["framework"] = nullptr;
    }
    auto c = parsed.ok() ? ParseValidationCase(blind ? probe.dump() : line, where)
                         : Result<ValidationCase>(parsed.status());
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
                                                        std::vector<CaseResult>* unparsable,
                                                        bool blind) {
  std::vector<ValidationCase> cases;
  for (const std::string& f : files) {
    auto text = ReadTextFile(f);
    if (!text.ok()) return text.status();
    auto parsed = ParseValidationCases(text.value(), f, unparsable, blind);
    if (!parsed.ok()) return parsed.status();
    for (ValidationCase& c : parsed.value()) cases.push_back(std::move(c));
  }
  return cases;
}

namespace {

void Aggregate(ValidationSummary& sum) {
  std::map<std::string, FamilyStats> fam;
  double total = 0, mem_total = 0;
  sum.n = sum.skipped = sum.mem_n = sum.band_inside = sum.band_n = 0;
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
    if (r.predicted_high_s > r.predicted_low_s) {  // the case carries a band (width > 0)
      ++sum.band_n;
      if (r.predicted_low_s <= r.target_s && r.target_s <= r.predicted_high_s) ++sum.band_inside;
    }
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
  sum.band_coverage = sum.band_n ? static_cast<double>(sum.band_inside) / sum.band_n : 0;
}

}  // namespace

Result<StepReport> SimulateCase(const ValidationCase& c, Strategy* used, Assumption* recompute) {
  Strategy s = c.strategy;
  SimOptions quiet;  // ScoreCases lists the split with the other assumptions
  quiet.assumptions = false;
  Assumption chosen;
  Result<StepReport> rep = c.recompute_auto
                               ? detail::SimulateLightestFittingRecompute(c.model, c.hw, s, &chosen)
                               : Simulate(c.model, c.hw, s, quiet);
  if (rep.ok() && c.stack_inferred) WidenForInferredStack(rep.value(), s);
  if (used) *used = s;
  if (recompute) *recompute = std::move(chosen);
  return rep;
}

ValidationSummary ScoreCases(const std::vector<ValidationCase>& cases) {
  ValidationSummary sum;
  for (const ValidationCase& c : cases) {
    CaseResult r;
    r.id = c.id;
    r.family = c.family;
    r.framework = c.framework;
    r.target_s = c.target_s;
    r.measured_mem_gib = c.measured_mem_gib;
    r.ignored = c.ignored;
    Strategy s;
    Assumption recompute;
    Result<StepReport> rep = SimulateCase(c, &s, &recompute);
    if (rep.ok()) {
      r.assumed = c.assumed;
      if (c.recompute_auto) r.assumed.push_back(std::move(recompute));
      if (auto split = detail::PipelineSplitAssumption(s, c.model)) r.assumed.push_back(*split);
      // RL steps list the rollout's defaults themselves (src/rl: lengths, engines, batch).
      if (IsRlStage(s.stage))
        r.assumed.insert(r.assumed.end(), rep->assumed.begin(), rep->assumed.end());
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
      r.predicted_mem_gib = units::BytesToGiB(rep->peak_mem_bytes);
      if (c.memory_reserved) r.predicted_mem_gib *= 1 + memory::kFragmentation;
      if (c.memory_device) {
        double reserved = 0;
        for (const StageReport& st : rep->stages) reserved = std::max(reserved, st.reserved_bytes);
        r.predicted_mem_gib = units::BytesToGiB(reserved);
      }
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
  std::vector<CaseResult> bad;  // also carries the scored inference cases (inference_case.h)
  std::vector<std::string> training;
  if (Status st = detail::ScoreInferenceFiles(files, training, bad); !st.ok()) return st;
  auto cases = LoadValidationCases(training, &bad);
  if (!cases.ok()) return cases.status();
  return ScoreCases(cases.value(), std::move(bad));
}

}  // namespace trainsim

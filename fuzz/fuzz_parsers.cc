// libFuzzer entry point for every parser of user input. One binary; the parser is chosen by the
// environment variable TRAINSIM_FUZZ_TARGET (a name in kTargets). A new input format is one row
// of kTargets (and its name in the Makefile's FUZZ_TARGETS): call its public parse entry point.
//
// Each harness checks the library's contract on any bytes: no crash, no hang, no exception;
// an error is a non-empty one-line message; what parses passes its own validation, and a
// simulated step has a finite, positive time. A broken contract aborts (a libFuzzer crash).
//
//   TRAINSIM_FUZZ_TARGET=model ./trainsim_fuzz -runs=10000000 corpus/model fuzz/seeds/model
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "serve/service.h"
#include "trainsim/finetune.h"
#include "trainsim/formats.h"
#include "trainsim/hardware.h"
#include "trainsim/infer.h"
#include "trainsim/megatron.h"
#include "trainsim/results_json.h"
#include "trainsim/schema.h"
#include "trainsim/search.h"
#include "trainsim/strategy.h"
#include "trainsim/sweep.h"
#include "trainsim/trainsim.h"
#include "trainsim/validate.h"

namespace trainsim {
namespace {

[[noreturn]] void Broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "contract broken: %s: %s\n", what, detail.c_str());
  std::abort();
}

// An error must say something, on one line once escaped.
void CheckError(const Status& st) {
  if (st.ok()) return;
  if (st.message().empty()) Broken("empty error message", "");
  if (st.OneLine().find('\n') != std::string::npos) Broken("multi-line error", st.message());
}

// A small model and hardware that every accepted strategy is simulated on.
const ModelSpec& TinyModel() {
  static const ModelSpec m = LoadModelPreset("llama3-8b").value();
  return m;
}
const HardwareSpec& H100() {
  static const HardwareSpec h = LoadHardwarePreset("h100_sxm_80gb").value();
  return h;
}

void CheckSimulate(const ModelSpec& m, const HardwareSpec& hw, const Strategy& s) {
  // The representative-rank model is cheap for any size, but keep each input fast.
  if (s.pp * s.vpp > 4096) return;
  auto r = Simulate(m, hw, s);
  CheckError(r.status());
  if (r.ok() && !(std::isfinite(r->step_time_s) && r->step_time_s > 0))
    Broken("non-finite step time", std::to_string(r->step_time_s));
}

void FuzzModel(std::string_view text) {
  auto m = ParseModelJson(text, "fuzz");
  CheckError(m.status());
  if (m.ok() && !ValidateModel(m.value()).ok()) Broken("model parses but does not validate", "");
}

void FuzzHardware(std::string_view text) {
  auto h = ParseHardwareJson(text, "fuzz");
  CheckError(h.status());
  if (!h.ok()) return;
  if (Status st = ValidateHardware(h.value()); !st.ok()) Broken("hardware invalid", st.message());
  Strategy s;
  s.gbs = 16;
  CheckSimulate(TinyModel(), h.value(), s);
}

void FuzzOverride(std::string_view text) {
  HardwareSpec h = H100();
  Status st = ApplyHardwareOverrides(h, text, "fuzz");
  CheckError(st);
  if (!st.ok() && h.hbm_bytes != H100().hbm_bytes) Broken("rejected override changed the spec", "");
  if (st.ok()) {
    Strategy s;
    s.gbs = 16;
    CheckSimulate(TinyModel(), h, s);
  }
}

void FuzzStrategy(std::string_view text) {
  auto s = ParseStrategyJson(text, "fuzz");
  CheckError(s.status());
  if (s.ok() && ValidateStrategy(s.value(), TinyModel()).ok())
    CheckSimulate(TinyModel(), H100(), s.value());
}

void FuzzMegatron(std::string_view text) {
  auto s = ParseMegatronArgs(text, Strategy{});
  CheckError(s.status());
  if (s.ok() && ValidateStrategy(s.value(), TinyModel()).ok())
    CheckSimulate(TinyModel(), H100(), s.value());
}

void FuzzValidation(std::string_view text) {
  std::vector<CaseResult> bad;
  auto cases = ParseValidationCases(text, "fuzz", &bad);
  CheckError(cases.status());
  for (const CaseResult& r : bad)
    if (r.reason.empty()) Broken("skipped case without a reason", r.id);
  if (cases.ok() && cases->size() <= 4) {
    const ValidationSummary sum = ScoreCases(cases.value(), bad);
    for (const CaseResult& r : sum.cases)
      if (!r.skipped && !std::isfinite(r.error)) Broken("non-finite case error", r.id);
  }
}

void FuzzVary(std::string_view text) {
  std::vector<std::string> vary;
  std::string cur;
  for (char c : text) {  // one --vary item per line
    if (c == '\n') {
      vary.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  vary.push_back(cur);
  auto systems = ExpandSystems(std::vector<SweepSystem>{{"h100", H100()}}, vary);
  CheckError(systems.status());
  if (systems.ok())
    for (const SweepSystem& s : systems.value())
      if (Status st = ValidateHardware(s.hw); !st.ok())
        Broken("vary gave bad hardware", st.message());
}

void FuzzSearchShard(std::string_view text) {
  SearchOptions o;
  o.gpus = 8;
  o.gbs = 16;
  static const SearchSpace space(TinyModel(), H100(), o);
  CheckError(ParseSearchShardJson(text, space).status());
}

// A framework file: what it sets must apply to a strategy or be refused with one line.
void CheckFrameworkConfig(const Result<FrameworkConfig>& c) {
  CheckError(c.status());
  if (!c.ok()) return;
  Strategy s;
  s.gbs = 16;
  Status st = ApplyStrategySettings(s, c->settings, false);
  CheckError(st);
  if (!st.ok()) return;
  Strategy n = NormaliseStrategy(s);
  if (ValidateStrategy(n, TinyModel()).ok()) CheckSimulate(TinyModel(), H100(), n);
}

void FuzzDeepSpeed(std::string_view text) {
  CheckFrameworkConfig(ParseDeepSpeedConfig(text, "fuzz"));
}

void FuzzTorchtitan(std::string_view text) {
  CheckFrameworkConfig(ParseTorchtitanToml(text, "fuzz", 32));
}

void FuzzAccelerate(std::string_view text) {
  CheckFrameworkConfig(ParseAccelerateConfig(text, "fuzz"));
}

// A TRL / TrainingArguments JSON: besides the settings, a GRPO file's completions per rank
// become the batch (ResolveFrameworkBatch), which must stay a valid strategy or be refused.
void FuzzTrl(std::string_view text) {
  const Result<FrameworkConfig> c = ParseTrlArgsJson(text, "fuzz");
  CheckFrameworkConfig(c);
  if (!c.ok()) return;
  if (c->completions_per_rank < 0) Broken("negative completions per rank", "");
  Strategy s;
  s.gbs = 16;
  if (!ApplyStrategySettings(s, c->settings, false).ok()) return;
  Strategy n = NormaliseStrategy(s);
  CheckError(ResolveFrameworkBatch(c.value(), n, false));
}

// A LLaMA-Factory training YAML, against a 32-layer model (freeze_trainable_layers counts
// layers).
void FuzzLlamaFactory(std::string_view text) {
  CheckFrameworkConfig(ParseLlamaFactoryYaml(text, "fuzz", TinyModel().layers));
}

// A Megatron-LM script or argument list with its model-shape arguments: the model it builds
// must validate, and the job simulate or be refused.
// A first line "#args: ..." (a comment to the script) gives the script's own arguments.
void FuzzMegatronModel(std::string_view text) {
  std::vector<std::string> args;
  if (text.substr(0, 6) == "#args:") {
    auto words = SplitShellWords(text.substr(6, text.find('\n') - 6));
    CheckError(words.status());
    if (words.ok()) args = std::move(words).value();
  }
  auto cmd = ParseMegatronScript(text, args);
  CheckError(cmd.status());
  if (!cmd.ok()) return;
  Strategy s;
  MegatronReading r;
  Status st = ReadMegatronArgs(cmd->args, s, nullptr, r);
  CheckError(st);
  if (!st.ok()) return;
  auto m = ResolveMegatronModel(r, nullptr, s);
  CheckError(m.status());
  if (!m.ok()) return;
  if (Status v = ValidateModel(m.value()); !v.ok())
    Broken("Megatron model resolves but does not validate", v.message());
  const Strategy n = NormaliseStrategy(s);
  if (m->layers <= 256 && ValidateStrategy(n, m.value()).ok()) CheckSimulate(m.value(), H100(), n);
}

// The pipeline layout string against a stage count taken from the first byte.
void FuzzLayout(std::string_view text) {
  if (text.empty()) return;
  const int pp = 1 + static_cast<unsigned char>(text[0]) % 16;
  CheckError(ParsePipelineLayout(text.substr(1), pp).status());
}

void FuzzEnums(std::string_view text) {
  CheckError(ParseTrainStage(text).status());
  CheckError(ParseFtMethod(text).status());
  CheckError(ParseLoraTargets(text).status());
  CheckError(ParseOptimizer(text).status());
  CheckError(ParseWeightDType(text).status());
  CheckError(ParseKvDType(text).status());
  CheckError(ParseDType(text).status());
  CheckError(ParseRecompute(text).status());
  CheckError(ParseRecomputeModules(text).status());
  CheckError(ParseSchedule(text).status());
  CheckError(ParseRankOrder(text).status());
  CheckError(ParseObjective(text).status());
}

// A REST request body (POST /v1/simulate, /v1/timeline, /v1/validate, /v1/plan; the endpoint
// from the first byte) through Service::Handle as `trainsim serve` routes it: the answer is 200
// or 400 (503 past the request time limit), never 500; its body is JSON, an error a one-line
// "error" naming a "field". The search endpoints are left out: they run for their time budget.
void FuzzRest(std::string_view text) {
  if (text.empty()) return;
  static const serve::Service service([] {
    serve::ServiceOptions o;
    o.simulate_cache_entries = 0;  // every body simulated
    o.request_seconds = 5;
    return o;
  }());
  static constexpr const char* kPaths[] = {"/v1/simulate", "/v1/timeline", "/v1/validate",
                                           "/v1/plan"};
  const char* path = kPaths[static_cast<unsigned char>(text[0]) % 4];
  const serve::Response r = service.Handle("POST", path, text.substr(1));
  if (r.status != 200 && r.status != 400 && r.status != 503)
    Broken("REST status", std::to_string(r.status) + " " + r.body);
  const auto doc = nlohmann::json::parse(r.body, nullptr, false);
  if (doc.is_discarded()) Broken("REST answer is not JSON", r.body.substr(0, 200));
  if (r.status == 200) return;
  if (!doc.is_object() || !doc.contains("error") || !doc["error"].is_string())
    Broken("REST error without an error message", r.body);
  const std::string msg = doc["error"].get<std::string>();
  if (msg.empty() || msg.find('\n') != std::string::npos) Broken("REST error not one line", msg);
}

struct Target {
  const char* name;
  void (*run)(std::string_view);
};

// One row per parser of user input (the REST bodies and new file formats go here).
constexpr Target kTargets[] = {
    {"model", FuzzModel},
    {"hardware", FuzzHardware},
    {"override", FuzzOverride},
    {"strategy", FuzzStrategy},
    {"megatron", FuzzMegatron},
    {"validation", FuzzValidation},
    {"vary", FuzzVary},
    {"search_shard", FuzzSearchShard},
    {"enums", FuzzEnums},
    {"deepspeed", FuzzDeepSpeed},
    {"torchtitan", FuzzTorchtitan},
    {"accelerate", FuzzAccelerate},
    {"trl", FuzzTrl},
    {"llamafactory", FuzzLlamaFactory},
    {"megatron_model", FuzzMegatronModel},
    {"layout", FuzzLayout},
    {"rest", FuzzRest},
};

const Target* Chosen() {
  static const Target* chosen = [] {
    const char* want = std::getenv("TRAINSIM_FUZZ_TARGET");
    for (const Target& t : kTargets)
      if (want && std::strcmp(want, t.name) == 0) return &t;
    std::fprintf(stderr, "set TRAINSIM_FUZZ_TARGET to one of:");
    for (const Target& t : kTargets) std::fprintf(stderr, " %s", t.name);
    std::fprintf(stderr, "\n");
    std::exit(2);
    return static_cast<const Target*>(nullptr);
  }();
  return chosen;
}

}  // namespace
}  // namespace trainsim

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  trainsim::Chosen();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  trainsim::Chosen()->run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

// The REST service's handler layer (serve/service.h), without sockets.
#include "serve/service.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "serve/endpoints.h"
#include "serve/openapi.h"
#include "trainsim/front_end.h"
#include "trainsim/infer_front_end.h"
#include "trainsim/presets.h"
#include "trainsim/schema.h"
#include "trainsim/trainsim.h"
#include "util/test_time_scale.h"

namespace trainsim::serve {
namespace {

using nlohmann::json;

constexpr const char* kSimBody =
    R"({"model": "llama3-8b", "hardware": "h100_sxm_80gb",
        "strategy": {"world_size": 8, "tp_size": 2, "pp_size": 2, "global_batch_size": 32}})";
constexpr const char* kSearchBody =
    R"({"model": "llama3-8b", "hardware": "h100_sxm_80gb", "gpus": 8, "gbs": 32, "top": 3})";

// The default options with the server's wall-clock budgets stretched by TRAINSIM_TEST_TIME_SCALE
// (util/test_time_scale.h): a sanitized search of kSearchBody under load passed the 10 s budget
// (`make test-sanitize`, 2026-11-24), a failure of speed, not of the service.
ServiceOptions TestOptions() {
  ServiceOptions o;
  o.search_seconds *= util::TestTimeScale();
  o.request_seconds *= util::TestTimeScale();
  return o;
}

TEST(Serve, HealthModelsHardware) {
  Service s(TestOptions());
  Response h = s.Handle("GET", "/healthz", "");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(json::parse(h.body)["status"], "ok");
  const json models = json::parse(s.Handle("GET", "/v1/models", "").body)["models"];
  const json hw = json::parse(s.Handle("GET", "/v1/hardware", "").body)["hardware"];
  EXPECT_EQ(models.size(), ListModelPresets().size());
  EXPECT_EQ(hw.size(), ListHardwarePresets().size());
  EXPECT_EQ(models[0]["id"], ListModelPresets()[0]);
  EXPECT_GT(models[0]["params_total"].get<double>(), 1e8);
  EXPECT_GT(hw[0]["hbm_bytes"].get<double>(), 1e9);
}

// The answer is the library's report for the same inputs: the body's strategy reaches it and
// its defaults are listed as assumed, as `simulate --json` lists them (the CLI comparison
// itself is tests/serve_test.py's).
TEST(Serve, SimulateAnswersTheReport) {
  Service s(TestOptions());
  Response r = s.Handle("POST", "/v1/simulate", kSimBody);
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  EXPECT_EQ(j["strategy"]["tp_size"], 2);
  EXPECT_EQ(j["strategy"]["pp_size"], 2);
  EXPECT_EQ(j["strategy"]["global_batch_size"], 32);
  EXPECT_GT(j["step_time_s"].get<double>(), 0);
  bool seq_assumed = false;
  for (const json& a : j["assumed"]) seq_assumed = seq_assumed || a["field"] == "seq_len";
  EXPECT_TRUE(seq_assumed) << "seq_len was not given, so it is an assumption";
  // The same inputs through the library directly.
  Strategy st;
  st.world_size = 8, st.tp = 2, st.pp = 2, st.gbs = 32;
  auto rep = Simulate(LoadModelPreset("llama3-8b").value(),
                      LoadHardwarePreset("h100_sxm_80gb").value(), NormaliseStrategy(st));
  ASSERT_TRUE(rep.ok());
  EXPECT_DOUBLE_EQ(j["step_time_s"].get<double>(), rep.value().step_time_s);
}

TEST(Serve, InlineObjectsEqualPresets) {
  Service s(TestOptions());
  const json models = json::parse(s.Handle("GET", "/v1/models", "").body)["models"];
  const json hw = json::parse(s.Handle("GET", "/v1/hardware", "").body)["hardware"];
  json body = json::parse(kSimBody);
  for (const json& m : models)
    if (m["id"] == "llama3-8b") body["model"] = m["preset"];
  for (const json& h : hw)
    if (h["id"] == "h100_sxm_80gb") body["hardware"] = h["preset"];
  Response inline_r = s.Handle("POST", "/v1/simulate", body.dump());
  ASSERT_EQ(inline_r.status, 200) << inline_r.body;
  const json a = json::parse(inline_r.body);
  const json b = json::parse(s.Handle("POST", "/v1/simulate", kSimBody).body);
  EXPECT_EQ(a["step_time_s"], b["step_time_s"]);
  EXPECT_EQ(a["peak_mem_bytes"], b["peak_mem_bytes"]);
  EXPECT_EQ(a["stages"], b["stages"]);
}

// Bad input: a 400 naming the field (or 404/405/413), never a crash, never a file read.
struct BadRequest {
  const char* name;
  const char* method;
  const char* path;
  std::string body;
  int status;
  const char* field;  // "" = not checked
};

std::string Nested(int depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

// A framework file sent as text reads as the CLI reads the file: a LLaMA-Factory LoRA YAML gives
// the stage, method and batch, the strategy object overrides it, and a model the YAML names by
// hub id needs "model" (the service never fetches or opens anything).
TEST(Serve, FrameworkConfigTextReadsAsTheFile) {
  const std::string yaml =
      "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\nfinetuning_type: "
      "lora\nlora_rank: 8\nlora_target: all\ncutoff_len: 2048\nper_device_train_batch_size: "
      "2\ngradient_accumulation_steps: 4\nbf16: true\ndeepspeed: ds_z3_config.json\n";
  const json fc = {{"format", "llamafactory"}, {"text", yaml}};
  Service s(TestOptions());
  json body = {{"model", "llama3-8b"},
               {"hardware", "h100_sxm_80gb"},
               {"strategy", {{"world_size", 8}}},
               {"framework_config", fc}};
  Response r = s.Handle("POST", "/v1/simulate", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["strategy"]["seq_len"], 2048);
  EXPECT_EQ(j["strategy"]["micro_batch_size"], 2);
  EXPECT_EQ(j["strategy"]["global_batch_size"], 2 * 4 * 8);
  bool ds_note = false;
  for (const json& a : j["assumed"])
    ds_note = ds_note || (a["field"] == "deepspeed" &&
                          a["why"].get<std::string>().find("deepspeed_text") != std::string::npos);
  EXPECT_TRUE(ds_note) << "the named DeepSpeed file was not read, and the report says so";
  // The DeepSpeed file's contents, sent beside it, set ZeRO-3.
  body["framework_config"]["deepspeed_text"] = R"({"zero_optimization": {"stage": 3}})";
  r = s.Handle("POST", "/v1/simulate", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["strategy"]["zero_state"], 3);
  // The strategy object wins over the file.
  body["strategy"]["seq_len"] = 1024;
  r = s.Handle("POST", "/v1/simulate", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["strategy"]["seq_len"], 1024);
  // Without "model", the hub id is not a preset: refused by name.
  body.erase("model");
  r = s.Handle("POST", "/v1/simulate", body.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("model_name_or_path"), std::string::npos) << r.body;
}

// A Megatron-LM launch script sent as text reads as `simulate --megatron-script` reads the file:
// the launcher's GPU count, the parallel sizes, the model from its shape arguments; its $1 from
// "args"; the strategy object overrides it; a "model" given is checked against the shape.
TEST(Serve, MegatronScriptReadsAsTheCli) {
  const std::string script =
      "#!/bin/bash\nTP=${1:-2}\ntorchrun --nproc_per_node 8 pretrain_gpt.py "
      "--tensor-model-parallel-size $TP --pipeline-model-parallel-size 2 --num-layers 32 "
      "--hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --max-position-embeddings "
      "4096 --vocab-size 32000 --micro-batch-size 1 --global-batch-size 32 --bf16 --foo-unknown "
      "1\n";
  Service s;
  json body = {{"hardware", "h100_sxm_80gb"}, {"megatron", {{"script", script}}}};
  Response r = s.Handle("POST", "/v1/simulate", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["strategy"]["world_size"], 8);
  EXPECT_EQ(j["strategy"]["tp_size"], 2);
  EXPECT_EQ(j["strategy"]["pp_size"], 2);
  EXPECT_EQ(j["strategy"]["global_batch_size"], 32);
  bool unknown = false;
  for (const json& i : j["ignored"]) unknown = unknown || i["field"] == "--foo-unknown";
  EXPECT_TRUE(unknown) << "the unknown argument is listed as ignored";
  // The same job through the library, as the CLI builds it.
  auto job = ParseMegatronJob(script, "", "script", "args");
  ASSERT_TRUE(job.ok()) << job.status().message();
  Strategy st;
  StrategyKeys given;
  ASSERT_TRUE(ApplyMegatronJob(job.value(), st, given).ok());
  auto finished = FinishStrategy(st, {}, given);
  ASSERT_TRUE(finished.ok());
  auto model = MegatronJobModel(job.value(), nullptr, finished.value());
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto hw = LoadHardwarePreset("h100_sxm_80gb");
  auto rep = SimulateWithAssumptions(model.value(), hw.value(), finished.value(), given);
  ASSERT_TRUE(rep.ok());
  EXPECT_DOUBLE_EQ(j["step_time_s"].get<double>(), rep.value().step_time_s);
  // The script's $1, then the strategy object over the script.
  body["megatron"]["args"] = "4";
  r = s.Handle("POST", "/v1/simulate", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["strategy"]["tp_size"], 4);
  body["strategy"] = {{"pp_size", 1}};
  r = s.Handle("POST", "/v1/simulate", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["strategy"]["pp_size"], 1);
  // A preset that contradicts the shape arguments is refused, naming the model.
  body["model"] = "llama3-70b";
  r = s.Handle("POST", "/v1/simulate", body.dump());
  EXPECT_EQ(r.status, 400) << r.body;
}

TEST(Serve, BadRequestsNameTheField) {
  const BadRequest rows[] = {
      {"not json", "POST", "/v1/simulate", "{", 400, "body"},
      {"not an object", "POST", "/v1/simulate", "[1]", 400, "body"},
      {"empty model object", "POST", "/v1/simulate", R"({"model": {}})", 400, "model"},
      {"unknown key", "POST", "/v1/simulate", R"({"modle": "llama3-8b"})", 400, "modle"},
      {"model type", "POST", "/v1/simulate", R"({"model": 3})", 400, "model"},
      {"unknown preset", "POST", "/v1/simulate", R"({"model": "gpt-9"})", 400, "model"},
      {"model path", "POST", "/v1/simulate", R"({"model": "/etc/passwd"})", 400, "model"},
      {"hardware path", "POST", "/v1/simulate", R"({"hardware": "../../etc/passwd"})", 400,
       "hardware"},
      {"bad strategy value", "POST", "/v1/simulate", R"({"strategy": {"tp_size": 0}})", 400,
       "tp_size"},
      {"unknown strategy key", "POST", "/v1/simulate", R"({"strategy": {"tpp": 2}})", 400, "tpp"},
      {"tp over gpus", "POST", "/v1/simulate", R"({"strategy": {"world_size": 8, "tp_size": 16}})",
       400, ""},
      {"1e400", "POST", "/v1/simulate", R"({"strategy": {"world_size": 1e400}})", 400, ""},
      {"deep nesting", "POST", "/v1/simulate", "{\"model\": " + Nested(100000) + "}", 400, ""},
      {"invalid UTF-8", "POST", "/v1/simulate", "{\"model\": \"\xff\xfe\"}", 400, ""},
      {"duplicate key", "POST", "/v1/simulate", R"({"model": "a", "model": "b"})", 400, "model"},
      {"duplicate nested key", "POST", "/v1/simulate",
       R"({"model": {"model_type": "mpt", "attn_config": {"a": 1, "a": 2}}})", 400,
       "model.attn_config.a"},
      {"nested model key out of its kinds", "POST", "/v1/simulate",
       R"({"model": {"model_type": "mpt", "d_model": 1024, "n_heads": 16, "n_layers": 4,
           "expansion_ratio": 4, "vocab_size": 50432, "attn_config": {"attn_type": "bogus"}}})",
       400, "attn_config.attn_type"},
      {"body over the limit", "POST", "/v1/simulate",
       std::string(limits::kMaxRequestBodyBytes + 1, ' '), 413, "body"},
      {"framework_config type", "POST", "/v1/simulate", R"({"framework_config": "ds.json"})", 400,
       "framework_config"},
      {"framework_config format", "POST", "/v1/simulate",
       R"({"framework_config": {"format": "fairseq", "text": ""}})", 400,
       "framework_config.format"},
      {"framework_config text missing", "POST", "/v1/simulate",
       R"({"framework_config": {"format": "deepspeed"}})", 400, "framework_config.text"},
      {"framework_config unknown key", "POST", "/v1/simulate",
       R"({"framework_config": {"format": "deepspeed", "text": "{}", "path": "x"}})", 400, "path"},
      {"framework_config bad file", "POST", "/v1/simulate",
       R"({"framework_config": {"format": "deepspeed", "text": "{\"zero_optimization\": 3}"}})",
       400, ""},
      {"accelerate names a DeepSpeed file not sent", "POST", "/v1/simulate",
       R"({"framework_config": {"format": "accelerate", "text": "distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n"}})",
       400, "framework_config.deepspeed_text"},
      {"megatron type", "POST", "/v1/simulate", R"({"megatron": "run.sh"})", 400, "megatron"},
      {"framework type", "POST", "/v1/simulate", R"({"framework": 7})", 400, "framework"},
      {"framework unknown", "POST", "/v1/simulate", R"({"framework": "megatron"})", 400,
       "framework"},
      {"megatron script missing", "POST", "/v1/simulate", R"({"megatron": {"args": "1"}})", 400,
       "megatron.script"},
      {"megatron unknown key", "POST", "/v1/simulate",
       R"({"megatron": {"script": "", "path": "run.sh"}})", 400, "path"},
      {"megatron args type", "POST", "/v1/simulate",
       R"({"megatron": {"script": "--num-layers 2", "args": [1]}})", 400, "megatron.args"},
      {"megatron unmatched quote", "POST", "/v1/simulate",
       R"({"megatron": {"script": "torchrun pretrain_gpt.py --num-layers '2"}})", 400, ""},
      {"megatron with framework_config", "POST", "/v1/simulate",
       R"({"megatron": {"script": "--num-layers 2"}, "framework_config": {"format": "deepspeed", "text": "{}"}})",
       400, "megatron"},
      {"search without gbs", "POST", "/v1/search", R"({"gpus": 8})", 400, "gbs"},
      {"search objective", "POST", "/v1/search", R"({"gbs": 8, "objective": "fun"})", 400, ""},
      {"search top", "POST", "/v1/search", R"({"gbs": 8, "top": 1000001})", 400, "top"},
      {"search workload value", "POST", "/v1/search", R"({"gbs": 8, "method": "bogus"})", 400,
       "method"},
      {"search method item", "POST", "/v1/search", R"({"gbs": 8, "method": ["lora", {}]})", 400,
       "method"},
      {"search empty rank list", "POST", "/v1/search", R"({"gbs": 8, "lora_rank": []})", 400,
       "lora_rank"},
      {"search layout key", "POST", "/v1/search", R"({"gbs": 8, "tp": 2})", 400, "tp"},
      // The CLI's checks of the second hostile pass, through the REST doors (issue 11): one row
      // per class (tests/cli_probes.txt has the CLI's).
      {"rl group_size x gbs", "POST", "/v1/simulate",
       R"({"strategy": {"stage": "grpo", "global_batch_size": 64, "group_size": 2147483647}})", 400,
       "group_size"},
      {"rl prompt + response", "POST", "/v1/simulate",
       R"({"strategy": {"stage": "grpo", "global_batch_size": 64, "prompt_len": 16777216,
           "max_response_len": 16777216}})",
       400, "max_response_len"},
      {"rl rollout_max_age", "POST", "/v1/simulate",
       R"({"strategy": {"stage": "grpo", "global_batch_size": 64, "rollout_max_age": 1025}})", 400,
       "rollout_max_age"},
      {"tdp_w below the power-cap range", "POST", "/v1/simulate",
       R"({"hw_override": {"tdp_w": 1}})", 400, "tdp_w"},
      {"tdp_w denormal", "POST", "/v1/plan",
       R"({"model": "llama3-8b", "tokens": 1e9, "hw_override": {"tdp_w": 1e-320}})", 400, "tdp_w"},
      {"moe padding without capacity", "POST", "/v1/simulate",
       R"({"model": "qwen3-30b-a3b", "strategy": {"world_size": 8, "ep_size": 8,
           "moe_pad_to_capacity": true}})",
       400, "moe_pad_to_capacity"},
      {"moe capacity denormal", "POST", "/v1/simulate",
       R"({"model": "qwen3-30b-a3b", "strategy": {"moe_capacity_factor": 1e-320}})", 400,
       "moe_capacity_factor"},
      {"moe router dtype", "POST", "/v1/simulate",
       R"({"model": "qwen3-30b-a3b", "strategy": {"moe_router_dtype": "fp16"}})", 400,
       "moe_router_dtype"},
      {"infer batch denormal", "POST", "/v1/infer",
       R"({"prompt_len": 128, "output_len": 128, "batch": 1e-320})", 400, "batch"},
      {"infer prompt_len", "POST", "/v1/infer", R"({"prompt_len": 1e300, "output_len": 128})", 400,
       "prompt_len"},
      {"infer acceptance_rate", "POST", "/v1/infer",
       R"({"prompt_len": 128, "output_len": 128, "spec_tokens": 4, "acceptance_rate": 1e-320})",
       400, "acceptance_rate"},
      {"infer slo", "POST", "/v1/infer",
       R"({"prompt_len": 128, "output_len": 128, "search": true, "slo_ttft_ms": 1e-320})", 400,
       "slo_ttft_ms"},
      {"plan tokens", "POST", "/v1/plan", R"({"model": "llama3-8b", "tokens": 1e300})", 400,
       "tokens"},
      {"plan storage_gbps", "POST", "/v1/plan",
       R"({"model": "llama3-8b", "tokens": 1e9, "storage_gbps": 1e-320})", 400, "storage_gbps"},
      {"recommend deadline", "POST", "/v1/recommend", R"({"tokens": 1e9, "deadline_days": 1e-320})",
       400, "deadline_days"},
      {"recommend budget", "POST", "/v1/recommend", R"({"tokens": 1e9, "budget_usd": 1e-320})", 400,
       "budget_usd"},
      // search refuses a workload simulate refuses, before it enumerates (one rule, both doors).
      {"search lora_rank past hidden", "POST", "/v1/search",
       R"({"gbs": 64, "method": "lora", "lora_rank": 100000})", 400, "lora_rank"},
      {"search freeze_layers past layers", "POST", "/v1/search",
       R"({"gbs": 64, "method": "freeze", "freeze_layers": 1000})", 400, "freeze_layers"},
      {"search rl group x gbs", "POST", "/v1/search",
       R"({"gbs": 64, "stage": "grpo", "group_size": 100000000})", 400, "group_size"},
      {"search rl minibatch", "POST", "/v1/search",
       R"({"gbs": 64, "stage": "grpo", "rl_minibatch": 7})", 400, "rl_minibatch"},
      {"search stream workload", "POST", "/v1/search/stream",
       R"({"gbs": 64, "method": "prompt_tuning", "virtual_tokens": 16777216})", 400,
       "virtual_tokens"},
      {"validate without cases", "POST", "/v1/validate", "{}", 400, "cases"},
      {"validate cases type", "POST", "/v1/validate", R"({"cases": 3})", 400, "cases"},
      {"traversal", "GET", "/../../etc/passwd", "", 404, "path"},
      {"encoded traversal", "GET", "/%2e%2e/%2e%2e/etc/passwd", "", 404, "path"},
      {"static file", "GET", "/data/models/llama3-8b.json", "", 404, "path"},
      {"wrong method", "GET", "/v1/simulate", "", 405, "method"},
      {"unknown method", "DELETE", "/healthz", "", 405, "method"},
  };
  Service s(TestOptions());
  for (const BadRequest& row : rows) {
    Response r = s.Handle(row.method, row.path, row.body);
    EXPECT_EQ(r.status, row.status) << row.name << ": " << r.body;
    const json j = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << row.name << ": the error is a JSON document";
    EXPECT_TRUE(j["error"].is_string()) << row.name;
    if (*row.field) {
      EXPECT_EQ(j.value("field", ""), row.field) << row.name << ": " << r.body;
    }
  }
}

// The error is the CLI's message (Status::OneLine), as one line of JSON.
TEST(Serve, ErrorIsTheLibraryMessage) {
  Service s(TestOptions());
  Response r = s.Handle("POST", "/v1/simulate", R"({"model": "gpt-9"})");
  const Status st = LoadModelPreset("gpt-9").status();
  EXPECT_EQ(json::parse(r.body)["error"], st.OneLine());
  EXPECT_EQ(r.body.find('\n'), r.body.size() - 1);
}

TEST(Serve, TimelineIsAChromeTrace) {
  Service s(TestOptions());
  Response r = s.Handle("POST", "/v1/timeline", kSimBody);
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  ASSERT_TRUE(j.contains("traceEvents"));
  EXPECT_GT(j["traceEvents"].size(), 8u);
}

// The fine-tuning workload of a search (issue 12): the CLI's --method / --lora-rank, a list
// searched over.
TEST(Serve, SearchTakesTheFineTuningWorkload) {
  Service s(TestOptions());
  Response r = s.Handle("POST", "/v1/search",
                        R"({"model": "llama3-8b", "hardware": "h100_sxm_80gb", "gpus": 8,
                            "gbs": 32, "top": 6, "method": ["lora", "qlora"], "lora_rank": 16})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json doc = json::parse(r.body);
  std::set<std::string> methods;
  for (const json& c : doc["top"]) {
    methods.insert(c["strategy_file"]["method"].get<std::string>());
    EXPECT_EQ(c["strategy_file"]["lora_rank"], 16);
  }
  EXPECT_FALSE(methods.empty());
  for (const std::string& m : methods) EXPECT_TRUE(m == "lora" || m == "qlora") << m;
}

TEST(Serve, SearchRanksAndIsBounded) {
  Service s(TestOptions());
  Response r = s.Handle("POST", "/v1/search", kSearchBody);
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  EXPECT_EQ(j["top"].size(), 3u);
  EXPECT_GT(j["evaluated"].get<double>(), 10);
  // A search past the time limit is stopped: 503 naming the limit, with what it evaluated.
  ServiceOptions tight;
  tight.search_seconds = 1e-9;
  Response late = Service(tight).Handle("POST", "/v1/search", kSearchBody);
  EXPECT_EQ(late.status, 503) << late.body;
  EXPECT_EQ(json::parse(late.body)["field"], "time_limit");
  // No free search slot: 503 with Retry-After.
  ServiceOptions none = TestOptions();
  none.max_searches = 0;
  Response busy = Service(none).Handle("POST", "/v1/search", kSearchBody);
  EXPECT_EQ(busy.status, 503);
  ASSERT_EQ(busy.headers.size(), 1u);
  EXPECT_EQ(busy.headers[0].first, "Retry-After");
  EXPECT_EQ(Service(none).CheckSearch(kSearchBody).status, 503);
}

TEST(Serve, SearchStreamSendsProgressThenTheResult) {
  Service s(TestOptions());
  std::vector<std::string> events;
  Response r = s.SearchStream(kSearchBody, [&](const std::string& e) {
    events.push_back(e);
    return true;
  });
  EXPECT_EQ(r.status, 200);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.front().rfind("event: progress\ndata: {", 0), 0u) << events.front();
  const std::string& last = events.back();
  ASSERT_EQ(last.rfind("event: result\ndata: ", 0), 0u) << last;
  const json result = json::parse(last.substr(20));
  EXPECT_EQ(result["top"].size(), 3u);
  // The same result as POST /v1/search (the timing aside).
  json plain = json::parse(s.Handle("POST", "/v1/search", kSearchBody).body);
  EXPECT_EQ(result["top"], plain["top"]);
  // A client that has gone cancels the search: nothing more is sent.
  int sent = 0;
  s.SearchStream(kSearchBody, [&](const std::string&) { return ++sent, false; });
  EXPECT_EQ(sent, 1);
  // A bad body is refused before any event.
  int bad = 0;
  EXPECT_EQ(s.SearchStream("{}", [&](const std::string&) { return ++bad, true; }).status, 400);
  EXPECT_EQ(bad, 0);
}

TEST(Serve, ValidateScoresTheGivenCases) {
  auto text =
      ReadTextFile(std::string(TRAINSIM_SHARED_DIR) + "/validation/cases/small_pretrain.jsonl");
  if (!text.ok()) GTEST_SKIP() << "no shared/validation";
  const std::string first = text.value().substr(0, text.value().find('\n') + 1);
  Service s(TestOptions());
  Response r = s.Handle("POST", "/v1/validate", json{{"cases", first}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["cases"].size(), 1u);
  ServiceOptions shipped = TestOptions();
  shipped.shipped_cases = text.value();
  shipped.shipped_cases_origin = "small_pretrain.jsonl";
  Response all = Service(shipped).Handle("POST", "/v1/validate", "");
  ASSERT_EQ(all.status, 200);
  EXPECT_GT(json::parse(all.body)["cases"].size(), 10u);
}

// The OpenAPI document is generated from the schema tables: every strategy key is in it. (Its
// validity against the OpenAPI 3.1 schema is checked by tests/serve_test.py with a validator.)
TEST(Serve, OpenApiCoversTheSchema) {
  Service s(TestOptions());
  Response r = s.Handle("GET", "/openapi.json", "");
  ASSERT_EQ(r.status, 200);
  const json doc = json::parse(r.body);
  EXPECT_EQ(doc["openapi"], "3.1.0");
  const json& props = doc["components"]["schemas"]["Strategy"]["properties"];
  for (const StrategyField& f : StrategySchema())
    EXPECT_TRUE(props.contains(std::string(f.key))) << f.key;
  for (const char* p : {"/v1/simulate", "/v1/search", "/v1/search/stream", "/v1/validate",
                        "/v1/timeline", "/v1/models", "/v1/hardware", "/healthz", "/v1/infer"})
    EXPECT_TRUE(doc["paths"].contains(p)) << p;
}

// POST /v1/infer: the `infer --json` document of the same request (InferJson), 400 naming the
// field, the search bounded by the server's slots and time limit, every documented key read.
TEST(Serve, InferAnswersTheInferDocument) {
  Service s(TestOptions());
  const char* body = R"({"model": "llama3-8b", "hardware": "h100_sxm_80gb", "tp": 2,
      "prompt_len": 1000, "output_len": 100, "batch": 8, "disaggregate": "1:1"})";
  Response r = s.Handle("POST", "/v1/infer", body);
  ASSERT_EQ(r.status, 200) << r.body;
  InferRequest req;
  req.tp = 2;
  req.prompt_len = 1000;
  req.output_len = 100;
  req.batch = 8;
  req.disaggregate = "1:1";
  auto want = InferJson(LoadModelPreset("llama3-8b").value(),
                        LoadHardwarePreset("h100_sxm_80gb").value(), req);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(r.body, want.value() + "\n");
  EXPECT_EQ(json::parse(r.body)["disaggregation"]["decode_gpus"], 2);
  for (auto [b, field] :
       {std::pair{R"({"output_len": 10})", "prompt_len"},
        std::pair{R"({"prompt_len": 10, "output_len": 10, "tp": 0})", "tp"},
        std::pair{R"({"prompt_len": 10, "output_len": 10, "colour": 1})", "colour"},
        std::pair{R"({"prompt_len": 10, "output_len": 10, "batch": 2,
                                       "rate": 1})",
                  "rate"},
        std::pair{R"({"prompt_len": 10, "output_len": 10,
                                       "disaggregate": "x"})",
                  "disaggregate"}}) {
    Response e = s.Handle("POST", "/v1/infer", b);
    EXPECT_EQ(e.status, 400) << b;
    EXPECT_EQ(json::parse(e.body).value("field", ""), field) << e.body;
  }
  const json doc = json::parse(s.Handle("GET", "/openapi.json", "").body);
  for (const auto& [key, _] : doc["components"]["schemas"]["InferRequest"]["properties"].items()) {
    const std::string b = R"({"prompt_len": 10, "output_len": 10, ")" + key + R"(": [1]})";
    Response e = s.Handle("POST", "/v1/infer", b);
    EXPECT_EQ(e.body.find("unknown key"), std::string::npos) << key << ": " << e.body;
  }
  const char* search = R"({"prompt_len": 1000, "output_len": 100, "gpus": 8, "search": true,
                           "search_disaggregate": true, "top": 2})";
  Response ok = s.Handle("POST", "/v1/infer", search);
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(json::parse(ok.body)["kind"], "infer_search");
  ServiceOptions tight;
  tight.search_seconds = 1e-9;
  EXPECT_EQ(Service(tight).Handle("POST", "/v1/infer", search).status, 503);
  ServiceOptions none = TestOptions();
  none.max_searches = 0;
  EXPECT_EQ(Service(none).Handle("POST", "/v1/infer", search).status, 503);
}

TEST(Serve, RootServesAPage) {
  Service s(TestOptions());
  Response r = s.Handle("GET", "/", "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_NE(r.body.find("<html"), std::string::npos);
}

}  // namespace
}  // namespace trainsim::serve

// The compute gate admits at most its slots at once and the waiters in arrival order.
TEST(ComputeGate, BoundsConcurrencyAndServesInArrivalOrder) {
  using trainsim::serve::ComputeGate;
  ComputeGate gate(1);
  std::vector<int> order;
  std::mutex order_mutex;
  std::vector<std::thread> threads;
  {
    const ComputeGate::Pass first(gate);  // holds the only slot while the others queue
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&, i] {
        const ComputeGate::Pass pass(gate);
        EXPECT_EQ(gate.active(), 1);
        const std::lock_guard<std::mutex> lock(order_mutex);
        order.push_back(i);
      });
      // Thread i is queued before thread i+1 starts (bounded: a gate that never queues fails
      // the checks below instead of hanging the test).
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::duration<double>(10 * trainsim::util::TestTimeScale());
      while (gate.waiting() < i + 1 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
    }
    EXPECT_EQ(gate.active(), 1);
    EXPECT_EQ(gate.waiting(), 4);
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(gate.active(), 0);
  EXPECT_EQ(gate.waiting(), 0);
}

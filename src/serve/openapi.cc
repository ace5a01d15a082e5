// GET /openapi.json: the service's OpenAPI 3.1 document. The strategy and efficiency objects are
// generated from the library's schema tables (trainsim/schema.h), the preset ids from the
// embedded presets, so the document cannot drift from what the service accepts.
// OpenAPI 3.1.0: https://spec.openapis.org/oas/v3.1.0 (schemas are JSON Schema 2020-12).
#include "serve/openapi.h"

#include <nlohmann/json.hpp>

#include "trainsim/front_end.h"
#include "trainsim/presets.h"
#include "trainsim/schema.h"
#include "trainsim/search.h"
#include "trainsim/version.h"

namespace trainsim::serve {

using nlohmann::json;

namespace {

// A schema row's type ("int", "bool", "number", "string") as JSON Schema, null allowed (a
// report's "strategy" echo writes null where a value cannot be derived).
json RowType(const std::string& t) {
  const char* s = t == "int"      ? "integer"
                  : t == "bool"   ? "boolean"
                  : t == "number" ? "number"
                                  : "string";
  return json::array({s, "null"});
}

// Every canonical strategy key and every accepted alias (trainsim schema strategy /
// strategy-aliases).
json StrategySchema() {
  json props = json::object();
  const json rows = SchemaJson("strategy").value(),
             aliases = SchemaJson("strategy-aliases").value();
  for (const json& row : rows) {
    json p = {{"type", RowType(row.value("type", "string"))}};
    p["description"] = row.value("doc", "") + " (rule: " + row.value("rule", "") + ")";
    if (row.contains("flag"))
      p["description"] = p["description"].get<std::string>() + "; CLI " + row.value("flag", "");
    props[row.value("key", "")] = p;
  }
  props["dp"] = {{"type", json::array({"integer", "null"})},
                 {"description", "derived (world_size / (tp·pp·cp)); accepted and checked"}};
  for (const json& row : aliases) {
    const std::string key = row.value("key", "");
    if (props.contains(key)) continue;
    props[key] = {{"type", RowType(row.value("type", "string"))},
                  {"description", "SimuMax alias (" + row.value("effect", "ignored") + ")"}};
  }
  return {{"type", "object"},
          {"description",
           "What a strategy file holds, workload fields included (docs/INPUTS.md); absent keys "
           "take the defaults that the report lists as assumed"},
          {"properties", props},
          {"additionalProperties", false}};
}

json EfficiencySchema() {
  json props = json::object();
  const json rows = SchemaJson("efficiency").value();
  for (const json& row : rows)
    props[row.value("key", "")] = {
        {"type", "number"},
        {"description", row.value("doc", "") + " (" + row.value("rule", "") + ")"}};
  props["fitted_on"] = {{"type", "string"}};
  props["fitted_date"] = {{"type", "string"}};
  return {{"type", "object"}, {"properties", props}};
}

json PresetOrObject(const std::vector<std::string>& ids, const char* what, json object) {
  return {{"oneOf", json::array({{{"type", "string"},
                                  {"enum", ids},
                                  {"description", std::string("a ") + what + " preset id"}},
                                 object})}};
}

// A training framework's file sent as text (the CLI's --deepspeed-config, --torchtitan-config,
// --llamafactory, --trl-args), applied under the strategy object.
json FrameworkConfigSchema() {
  return {{"type", "object"},
          {"description",
           "a framework file's contents, read as the CLI reads the file (docs/INPUTS.md); the "
           "strategy object's keys override its settings"},
          {"required", {"format", "text"}},
          {"properties",
           {{"format",
             {{"type", "string"},
              {"enum", {"deepspeed", "torchtitan", "llamafactory", "trl", "accelerate"}}}},
            {"text", {{"type", "string"}, {"description", "the file's contents (never a path)"}}},
            {"deepspeed_text",
             {{"type", "string"},
              {"description", "the DeepSpeed config a LLaMA-Factory / TRL file names"}}}}},
          {"additionalProperties", false}};
}

json MegatronSchema() {
  return {{"type", "object"},
          {"description",
           "a Megatron-LM launch script or argument string, read as the CLI's --megatron-script "
           "reads the file; the strategy object's keys override its settings"},
          {"required", {"script"}},
          {"properties",
           {{"script", {{"type", "string"}, {"description", "the script's text (never a path)"}}},
            {"args",
             {{"type", "string"},
              {"description", "the script's own arguments ($1, $2, ...) as a command line"}}}}},
          {"additionalProperties", false}};
}

// /v1/plan's body: the simulate request's keys and `trainsim plan`'s options (PlanOptionNames);
// /v1/recommend's: `trainsim recommend`'s options.
void AddPlanSchemas(json& s) {
  json plan = s["SimulateRequest"];
  for (std::string_view name : PlanOptionNames())
    plan["properties"][std::string(name)] = {
        {"type", "number"}, {"description", "trainsim plan --" + std::string(name)}};
  for (const char* b : {"search", "compute_optimal", "detail"})
    plan["properties"][b] = {{"type", "boolean"},
                             {"description", std::string("trainsim plan --") + b}};
  s["PlanRequest"] = plan;
  auto number = [](const char* d) { return json{{"type", "number"}, {"description", d}}; };
  s["RecommendRequest"] = {
      {"type", "object"},
      {"required", {"tokens"}},
      {"properties",
       {{"model", {{"$ref", "#/components/schemas/Model"}}},
        {"tokens", number("training tokens of the run")},
        {"deadline_days", number("the run must finish within (days)")},
        {"budget_usd", number("the run may cost at most (USD)")},
        {"price_per_gpu_hour", number("one price for every profile (USD)")},
        {"objective", {{"type", "string"}, {"enum", {"cost", "time", "energy"}}}},
        {"dtype", {{"type", "string"}, {"description", "bf16 (default), fp16, fp8, ..."}}},
        {"gbs", {{"type", "integer"}, {"minimum", 1}}},
        {"seq", {{"type", "integer"}, {"minimum", 1}}},
        {"gpus",
         {{"type", "array"},
          {"items", {{"type", "integer"}, {"minimum", 1}}},
          {"minItems", 1},
          {"maxItems", 64}}},
        {"top", {{"type", "integer"}, {"minimum", 1}, {"maximum", 1000}}},
        {"include_uncalibrated", {{"type", "boolean"}}}}},
      {"additionalProperties", false}};
}

// /v1/infer's body: model, hardware, hw_override and `trainsim infer`'s options as its flags
// name them (trainsim/infer_front_end.h, ReadInferRequest).
json InferSchema(const json& model, const json& hw, const json& over) {
  auto num = [](const char* d, double min) {
    return json{{"type", "number"}, {"minimum", min}, {"description", d}};
  };
  auto integer = [](const char* d, int min) {
    return json{{"type", "integer"}, {"minimum", min}, {"description", d}};
  };
  auto text = [](const char* d) { return json{{"type", "string"}, {"description", d}}; };
  auto flag = [](const char* d) { return json{{"type", "boolean"}, {"description", d}}; };
  json p = {{"model", model},
            {"hardware", hw},
            {"hw_override", over},
            {"gpus", integer("GPUs in all (default tp x pp, or the disaggregated pools' sum)", 1)},
            {"tp", integer("tensor-parallel size", 1)},
            {"pp", integer("pipeline-parallel size", 1)},
            {"ep", integer("expert-parallel size (0: tp for MoE)", 0)},
            {"prompt_len", num("prompt tokens per request", 1)},
            {"output_len", num("generated tokens per request", 1)},
            {"batch", num("concurrent sequences per replica; 0 = offline maximum load", 0)},
            {"rate", num("requests/s (Poisson): online serving; excludes batch", 0)},
            {"weight_dtype", text("bf16|fp16|fp8|int8|int4|nvfp4")},
            {"quant", text("gptq|awq (weight-only int4/int8)")},
            {"kv_dtype", text("bf16|fp16|fp8|int8|int4")},
            {"engine", text("vllm|sglang|tensorrt-llm|transformers")},
            {"gpu_memory_utilization", num("engine memory fraction", 0.001)},
            {"max_num_seqs", integer("scheduler batch limit", 1)},
            {"prefix_cache_hit", num("fraction of each prompt already in the prefix cache", 0)},
            {"draft_model", model},
            {"spec_tokens", integer("speculative decoding: tokens drafted per step", 0)},
            {"acceptance_rate", num("speculative decoding: acceptance probability", 0)},
            {"disaggregate", text("P:D or xPyD prefill and decode instances (KV over the NIC)")},
            {"prefill_tp", integer("disaggregate: prefill instance tp (default tp)", 1)},
            {"decode_tp", integer("disaggregate: decode instance tp (default tp)", 1)},
            {"slo_ttft_ms", num("TTFT bound: search, and the goodput of disaggregate", 0)},
            {"slo_tpot_ms", num("TPOT bound: search, and the goodput of disaggregate", 0)},
            {"search", flag("rank serving layouts over gpus (= infer --search)")},
            {"objective", {{"type", "string"}, {"enum", {"throughput", "cost"}}}},
            {"price", num("search: USD per GPU-hour (default: the hardware's)", 0)},
            {"search_weight_dtypes", text("search: comma list of weight dtypes")},
            {"search_kv_dtypes", text("search: comma list of KV dtypes")},
            {"top", integer("search: layouts returned", 1)},
            {"search_disaggregate", flag("search: also disaggregated prefill/decode layouts")}};
  return {{"type", "object"},
          {"required", {"prompt_len", "output_len"}},
          {"properties", p},
          {"additionalProperties", false}};
}

json Components() {
  json s;
  s["Strategy"] = StrategySchema();
  s["Efficiency"] = EfficiencySchema();
  s["Model"] = PresetOrObject(
      ListModelPresets(), "model",
      {{"type", "object"},
       {"description", "a Hugging Face config.json or a trainsim model JSON (data/models/)"}});
  s["Hardware"] = PresetOrObject(
      ListHardwarePresets(), "hardware",
      {{"type", "object"},
       {"description", "a trainsim hardware JSON (data/hardware/) or a SimuMax system file"},
       {"properties", {{"efficiency", {{"$ref", "#/components/schemas/Efficiency"}}}}}});
  const json model = {{"$ref", "#/components/schemas/Model"}};
  const json hw = {{"$ref", "#/components/schemas/Hardware"}};
  const json over = {{"type", "object"}, {"description", "hardware fields to override"}};
  s["SimulateRequest"] = {{"type", "object"},
                          {"properties",
                           {{"model", model},
                            {"hardware", hw},
                            {"hw_override", over},
                            {"strategy", {{"$ref", "#/components/schemas/Strategy"}}},
                            {"framework_config", FrameworkConfigSchema()},
                            {"megatron", MegatronSchema()},
                            {"framework",
                             {{"type", "string"},
                              {"enum", FrameworkProfileNames()},
                              {"description",
                               "a framework profile: its defaults for the settings nothing "
                               "else gives, listed in assumed (simulate --framework)"}}}}},
                          {"additionalProperties", false}};
  auto integer = [](const char* d) {
    return json{{"type", "integer"}, {"minimum", 1}, {"description", d}};
  };
  s["SearchRequest"] = {
      {"type", "object"},
      {"required", {"gbs"}},
      {"properties",
       {{"model", model},
        {"hardware", hw},
        {"hw_override", over},
        {"gpus", integer("world size (default 8)")},
        {"gbs", integer("global batch in sequences")},
        {"seq", integer("sequence length (default 4096)")},
        {"dtype", {{"type", "string"}, {"description", "bf16 (default), fp16, fp8, ..."}}},
        {"top", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100000}}},
        {"objective", {{"type", "string"}, {"enum", {"time", "cost", "memory"}}}},
        {"memory_margin", {{"type", "number"}, {"minimum", 0}, {"maximum", 0.9}}}}},
      {"additionalProperties", false}};
  // What is trained (trainsim/search.h, SearchWorkloadKeys): the strategy keys' own schema;
  // method and lora_rank also take a list of values to search over.
  const json strategy = s["Strategy"]["properties"];
  for (const std::string& key : SearchWorkloadKeys()) {
    json p = strategy.value(key, json{{"type", "string"}});
    if (key == "method" || key == "lora_rank")
      p = {{"oneOf", json::array({p, {{"type", "array"}, {"items", p}, {"minItems", 1}}})},
           {"description", "one value, or the values to search over"}};
    s["SearchRequest"]["properties"][key] = p;
  }
  s["ValidateRequest"] = {
      {"type", "object"},
      {"properties",
       {{"cases",
         {{"description",
           "validation cases: JSONL text or an array of case objects (shared/validation "
           "schema); absent = the cases the server was started with (--cases)"},
          {"oneOf", json::array({{{"type", "string"}},
                                 {{"type", "array"}, {"items", {{"type", "object"}}}}})}}}}},
      {"additionalProperties", false}};
  s["Error"] = {
      {"type", "object"},
      {"required", {"error"}},
      {"properties",
       {{"error", {{"type", "string"}, {"description", "the CLI's one-line message"}}},
        {"field", {{"type", "string"}, {"description", "the offending field"}}},
        {"partial", {{"type", "object"}, {"description", "a stopped search's result"}}}}}};
  AddPlanSchemas(s);
  s["InferRequest"] = InferSchema(model, hw, over);
  s["Document"] = {{"type", "object"},
                   {"description", "a JSON document of the library (see docs/SERVE.md)"}};
  return s;
}

json Answer(const char* description, const char* schema = "Document") {
  return {{"description", description},
          {"content",
           {{"application/json",
             {{"schema", {{"$ref", std::string("#/components/schemas/") + schema}}}}}}}};
}

// The common error answers of a POST endpoint.
json PostOperation(const char* id, const char* summary, const char* request, json ok) {
  json responses = {{"200", std::move(ok)},
                    {"400", Answer("bad input: names the field and the rule", "Error")},
                    {"413", Answer("body over the size limit", "Error")},
                    {"503", Answer("over a time limit or a concurrency bound", "Error")}};
  return {{"post",
           {{"operationId", id},
            {"summary", summary},
            {"requestBody",
             {{"required", true},
              {"content",
               {{"application/json",
                 {{"schema", {{"$ref", std::string("#/components/schemas/") + request}}}}}}}}},
            {"responses", responses}}}};
}

json GetOperation(const char* id, const char* summary, json ok) {
  return {{"get", {{"operationId", id}, {"summary", summary}, {"responses", {{"200", ok}}}}}};
}

json Paths() {
  json p;
  p["/healthz"] = GetOperation("health", "liveness", Answer("{\"status\": \"ok\", \"version\"}"));
  p["/v1/models"] = GetOperation("listModels", "model presets", Answer("{\"models\": [...]}"));
  p["/v1/hardware"] =
      GetOperation("listHardware", "hardware presets", Answer("{\"hardware\": [...]}"));
  p["/openapi.json"] = GetOperation("openapi", "this document", Answer("OpenAPI 3.1"));
  p["/v1/simulate"] = PostOperation("simulate", "one training step (= trainsim simulate --json)",
                                    "SimulateRequest", Answer("the step report"));
  p["/v1/timeline"] =
      PostOperation("timeline", "the event-driven step as Chrome trace JSON (Perfetto)",
                    "SimulateRequest", Answer("Chrome trace JSON"));
  p["/v1/search"] = PostOperation("search", "ranked strategies (= trainsim search --json)",
                                  "SearchRequest", Answer("the search result"));
  p["/v1/search/stream"] = PostOperation(
      "searchStream", "the search with progress as Server-Sent Events", "SearchRequest",
      {{"description",
        "events: progress ({fraction, evaluated, feasible, elapsed_s}), then result (the search "
        "result) or error"},
       {"content", {{"text/event-stream", {{"schema", {{"type", "string"}}}}}}}});
  p["/v1/search/stream"]["get"] = {
      {"operationId", "searchStreamGet"},
      {"summary", "the same, for EventSource (which can only GET)"},
      {"parameters", json::array({{{"name", "q"},
                                   {"in", "query"},
                                   {"required", true},
                                   {"description", "the SearchRequest as JSON text"},
                                   {"schema", {{"type", "string"}}}}})},
      {"responses", p["/v1/search/stream"]["post"]["responses"]}};
  p["/v1/validate"] = PostOperation("validate",
                                    "score predictions against measured runs (= trainsim validate "
                                    "--json)",
                                    "ValidateRequest", Answer("the validation result"));
  p["/v1/plan"] = PostOperation("plan", "the whole run of a step (= trainsim plan --json)",
                                "PlanRequest", Answer("the run plan"));
  p["/v1/recommend"] =
      PostOperation("recommend", "hardware x GPUs x strategy ranked (= trainsim recommend --json)",
                    "RecommendRequest", Answer("the recommendation"));
  p["/v1/infer"] = PostOperation(
      "infer", "serving latency and throughput, or the best layout (= trainsim infer --json)",
      "InferRequest", Answer("the inference report or the layout search"));
  return p;
}

}  // namespace

const std::string& OpenApiDocument() {
  static const std::string doc = [] {
    json j = {{"openapi", "3.1.0"},
              {"info",
               {{"title", "trainsim"},
                {"version", std::string(TrainsimVersion())},
                {"description",
                 "Predicts step time, MFU and memory of LLM training on GPU clusters. Every "
                 "answer is a document of the library's JSON schema (docs/SERVE.md)."}}},
              {"paths", Paths()},
              {"components", {{"schemas", Components()}}}};
    return j.dump(2) + "\n";
  }();
  return doc;
}

}  // namespace trainsim::serve

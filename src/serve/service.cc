#include "serve/service.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "serve/endpoints.h"
#include "serve/openapi.h"
#include "serve/web_page.h"
#include "trainsim/version.h"

namespace trainsim::serve {

using nlohmann::json;

Response ErrorResponse(int status, std::string_view message, std::string_view field) {
  json j = {{"error", std::string(message)}};
  if (!field.empty()) j["field"] = std::string(field);
  Response r;
  r.status = status;
  // Echoed input may hold bytes that are not UTF-8 (a key of a rejected body): replaced.
  r.body = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  return r;
}

Response StatusResponse(const Status& st) {
  std::string field = st.field();
  // An error about an input as a whole ("model: not a model description ...") names no field:
  // the input it is about is the field (the whole body: "body").
  if (field.empty()) {
    const std::string& m = st.message();
    const size_t colon = m.find(": ");
    if (colon != std::string::npos && colon < 40 && m.find(' ') > colon) field = m.substr(0, colon);
  }
  if (field == "request") field = "body";  // the body as a whole (malformed JSON, not an object)
  if (field == "hw-override") field = "hw_override";  // the body's key, not the CLI's flag
  return ErrorResponse(400, st.OneLine(), field);
}

namespace {

// "/" when the page was not built: what to do about it.
constexpr std::string_view kNoPage =
    "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>trainsim</title>"
    "</head>\n<body><h1>trainsim</h1>\n<p>The web page was not built into this binary (npm was "
    "not found when it was built). Install Node.js and npm, then run <code>make build</code> "
    "and start <code>trainsim serve</code> again.</p>\n<p>The REST API works without it: see "
    "<a href=\"/openapi.json\">/openapi.json</a> and docs/SERVE.md.</p></body></html>\n";

Response Html(std::string_view text) {
  Response r;
  r.content_type = "text/html; charset=utf-8";
  r.body = std::string(text);
  return r;
}

Response Json(std::string body) {
  Response r;
  r.body = std::move(body);
  return r;
}

enum class Route {
  kNone,
  kRoot,
  kHealth,
  kOpenApi,
  kModels,
  kHardware,
  kSimulate,
  kTimeline,
  kSearch,
  kSearchStream,
  kValidate,
  kPlan,
  kRecommend,
  kInfer
};

struct RouteRow {
  std::string_view path;
  std::string_view method;
  Route route;
};

constexpr RouteRow kRoutes[] = {
    {"/", "GET", Route::kRoot},
    {"/index.html", "GET", Route::kRoot},
    {"/healthz", "GET", Route::kHealth},
    {"/openapi.json", "GET", Route::kOpenApi},
    {"/v1/models", "GET", Route::kModels},
    {"/v1/hardware", "GET", Route::kHardware},
    {"/v1/simulate", "POST", Route::kSimulate},
    {"/v1/timeline", "POST", Route::kTimeline},
    {"/v1/search", "POST", Route::kSearch},
    {"/v1/search/stream", "POST", Route::kSearchStream},
    {"/v1/validate", "POST", Route::kValidate},
    {"/v1/plan", "POST", Route::kPlan},
    {"/v1/recommend", "POST", Route::kRecommend},
    {"/v1/infer", "POST", Route::kInfer},
};

// The route of (method, path); `allowed` gets the method a known path takes (405 otherwise).
Route FindRoute(std::string_view method, std::string_view path, std::string_view& allowed) {
  const bool head = method == "HEAD";
  for (const RouteRow& r : kRoutes) {
    if (r.path != path) continue;
    allowed = r.method;
    if (r.method == method || (head && r.method == "GET")) return r.route;
  }
  return Route::kNone;
}

}  // namespace

// Default compute slots per core: a slot whose thread the OS preempts (the machine runs other
// work) or hands over to the next waiter leaves its core idle for a moment, so the gate admits a
// few per core. Measured 2026-11-24 on the 2-core machine under load 12-23, 4 interleaved rounds
// of `serve_load --requests 20000 --concurrency 64 --distinct 1` (docs/SERVE.md, Load): p99
// 27-38 ms ungated, 14-30 ms at 2 slots per core, 14-22 ms at 4.
constexpr int kComputeSlotsPerCore = 4;

Service::Service(ServiceOptions o)
    : opt_(std::move(o)),
      simulate_cache_(std::make_shared<ResponseCache>(
          static_cast<size_t>(std::max(0, opt_.simulate_cache_entries)))),
      gate_(std::make_shared<ComputeGate>(
          opt_.compute_slots > 0
              ? opt_.compute_slots
              : kComputeSlotsPerCore * static_cast<int>(std::thread::hardware_concurrency()))) {}

Response Service::Handle(std::string_view method, std::string_view path,
                         std::string_view body) const {
  std::string_view allowed;
  const Route route = FindRoute(method, path, allowed);
  if (route == Route::kNone) {
    if (!allowed.empty()) {
      Response r = ErrorResponse(
          405, "method: " + std::string(path) + " takes " + std::string(allowed), "method");
      r.headers.emplace_back("Allow", std::string(allowed));
      return r;
    }
    return ErrorResponse(404, "path: no such endpoint (see /openapi.json)", "path");
  }
  if (static_cast<int64_t>(body.size()) > opt_.max_body_bytes)
    return ErrorResponse(413,
                         "request: the body is " + std::to_string(body.size()) +
                             " bytes; at most " + std::to_string(opt_.max_body_bytes) +
                             " are accepted",
                         "body");
  const auto start = std::chrono::steady_clock::now();
  Response r;
  switch (route) {
    case Route::kRoot:
      return Html(EmbeddedWebPage().empty() ? kNoPage : EmbeddedWebPage());
    case Route::kHealth:
      return Json(json{{"status", "ok"}, {"version", TrainsimVersion()}}.dump() + "\n");
    case Route::kOpenApi:
      return Json(OpenApiDocument());
    case Route::kModels:
      return Json(ModelCatalogueJson());
    case Route::kHardware:
      return Json(HardwareCatalogueJson());
    case Route::kSearch:
      return Search(body);
    case Route::kSearchStream:  // the HTTP layer streams it (SearchStream); here, the result only
      return Search(body);
    case Route::kRecommend:  // bounded by the search time limit, as /v1/search
      return Recommend(body);
    case Route::kPlan:
      r = Plan(body);
      break;
    case Route::kInfer:  // bounded by the search time limit with "search", else per request
      return Infer(body);
    case Route::kSimulate:
      r = Simulate(body);
      break;
    case Route::kTimeline:
      r = Timeline(body);
      break;
    case Route::kValidate:
      r = Validate(body);
      break;
    case Route::kNone:
      break;
  }
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (took > opt_.request_seconds)
    return ErrorResponse(503,
                         "request: took " + std::to_string(took) +
                             " s, over the server's limit of " +
                             std::to_string(opt_.request_seconds) + " s per request",
                         "time_limit");
  return r;
}

}  // namespace trainsim::serve

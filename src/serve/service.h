// The REST service's request handling, without sockets: a request (method, path, body) in, a
// response (status, content type, body) out. `trainsim serve` (serve/http_server.h) puts it
// behind cpp-httplib; the tests call it directly.
//
// Every answer is a document of the library's one JSON schema: POST /v1/simulate answers
// exactly what `trainsim simulate --json` prints for the same model, hardware and strategy.
// Bad input is a 400 {"error": "<the CLI's message>", "field": "<the field>"}; a request body
// never names a file (presets by id or objects inline), so no request reads the disk.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "serve/compute_gate.h"
#include "serve/response_cache.h"
#include "trainsim/limits.h"
#include "trainsim/status.h"

namespace trainsim::serve {

struct ServiceOptions {
  // Bodies over this many bytes are refused with 413 (trainsim/limits.h).
  int64_t max_body_bytes = limits::kMaxRequestBodyBytes;
  // Wall-clock budget of one search (POST /v1/search, /v1/search/stream): the search stops at it
  // and the answer is 503 with what was evaluated. 10 s: a 405B model on 16,384 GPUs takes 1.1 s
  // (README), so only spaces of ~10^8 strategies and more reach it.
  double search_seconds = 10;
  // Budget of any other request; one that takes longer (a huge timeline) is answered 503.
  double request_seconds = 10;
  // Searches running at once; more are answered 503 with Retry-After. Each search already uses
  // every core, so a second one only shares them.
  int max_searches = 2;
  int search_threads = 0;  // worker threads per search (0 = all cores)
  // Answers of POST /v1/simulate kept by body (a pure function of it; serve/response_cache.h):
  // a repeated body is answered without simulating and formatting again. 0 disables it.
  int simulate_cache_entries = 1024;
  // Requests of the CPU-bound endpoints (simulate after a cache miss, timeline, validate)
  // computing at once; the rest wait first come, first served (serve/compute_gate.h). 0 = four per
  // core. Searches are bounded by max_searches instead.
  int compute_slots = 0;
  // Validation cases (JSONL text) that POST /v1/validate scores when the body gives none: the
  // files given to `trainsim serve --cases`, read once at start-up.
  std::string shipped_cases;
  std::string shipped_cases_origin;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers (Retry-After, ...)
};

// The JSON error body {"error": message, "field": field} (field omitted when empty) as a
// response with `status`. Text that is not UTF-8 is written with U+FFFD in its place.
Response ErrorResponse(int status, std::string_view message, std::string_view field = {});
// A library Status as a 400 (every code: all are about the input).
Response StatusResponse(const Status& st);

class Service {
 public:
  explicit Service(ServiceOptions o = {});

  // Routes one request. Paths are matched exactly (no files are served): "/" the embedded web
  // page, "/healthz", "/openapi.json" and the /v1/ endpoints (docs/SERVE.md); anything else is
  // 404, a known path with another method 405. Never throws.
  Response Handle(std::string_view method, std::string_view path, std::string_view body) const;

  // POST /v1/search/stream: the search of `body`, with its progress as Server-Sent Events
  // ("event: progress" lines, then one "event: result" with SearchResultJson or one "event:
  // error" with the error body, each with a one-line JSON "data:"). `emit` sends one event's
  // text and returns false when the client has gone, which cancels the search. Returns the
  // error response when the body is bad (nothing emitted) or no search slot is free (also
  // emitted as an error event), else an empty 200.
  Response SearchStream(std::string_view body,
                        const std::function<bool(const std::string&)>& emit) const;

  // What SearchStream would refuse before it starts (bad body, no free search slot), so that
  // the HTTP layer can answer with its status before the event stream begins; else 200.
  Response CheckSearch(std::string_view body) const;

  const ServiceOptions& options() const { return opt_; }

 private:
  Response Simulate(std::string_view body) const;
  Response Timeline(std::string_view body) const;
  Response Search(std::string_view body) const;
  Response Validate(std::string_view body) const;
  Response Plan(std::string_view body) const;
  Response Recommend(std::string_view body) const;
  Response Infer(std::string_view body) const;

  ServiceOptions opt_;
  mutable std::atomic<int> searches_{0};
  std::shared_ptr<const ResponseCache> simulate_cache_;
  std::shared_ptr<ComputeGate> gate_;
  friend class SearchSlot;
};

}  // namespace trainsim::serve

// POST /v1/search and its Server-Sent Events form /v1/search/stream: bounded in time (the search
// stops at ServiceOptions::search_seconds) and in number (ServiceOptions::max_searches at once).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "serve/endpoints.h"
#include "serve/search_slot.h"
#include "serve/service.h"
#include "trainsim/results_json.h"

namespace trainsim::serve {

using nlohmann::json;

namespace {

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// The answer to a search stopped at the time limit: 503, the reason, and what was evaluated.
Response DeadlineResponse(const SearchResult& r, double limit_s) {
  json j = {
      {"error", "search: stopped at the server's time limit of " + Seconds(limit_s) + " s after " +
                    std::to_string(r.evaluated) + " of " + std::to_string(r.space_size) +
                    " strategies; narrow the search (fewer GPUs, a fixed model) or raise "
                    "`trainsim serve --search-seconds`"},
      {"field", "time_limit"},
      {"partial", json::parse(SearchResultJson(r, -1))}};
  Response resp;
  resp.status = 503;
  resp.body = j.dump() + "\n";
  return resp;
}

Result<SearchRequest> ReadSearch(std::string_view body) {
  auto parsed = ParseBody(body);
  if (!parsed.ok()) return parsed.status();
  return ReadSearchRequest(parsed.value());
}

void SetBounds(SearchOptions& o, const ServiceOptions& s) {
  o.threads = s.search_threads;
  o.deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(s.search_seconds));
}

std::string Event(std::string_view name, std::string_view data) {
  return "event: " + std::string(name) + "\ndata: " + std::string(data) + "\n\n";
}

}  // namespace

Response Service::Search(std::string_view body) const {
  auto req = ReadSearch(body);
  if (!req.ok()) return StatusResponse(req.status());
  SearchSlot slot(*this);
  if (!slot.ok()) return TooManySearches(opt_.max_searches);
  SearchOptions o = req.value().options;
  SetBounds(o, opt_);
  auto res = trainsim::Search(req.value().model, req.value().hardware, o);
  if (!res.ok()) return StatusResponse(res.status());
  if (!res.value().complete) return DeadlineResponse(res.value(), opt_.search_seconds);
  Response r;
  r.body = SearchResultJson(res.value(), 2, &req.value().hardware) + "\n";
  return r;
}

Response Service::CheckSearch(std::string_view body) const {
  auto req = ReadSearch(body);
  if (!req.ok()) return StatusResponse(req.status());
  if (searches_.load() >= opt_.max_searches) return TooManySearches(opt_.max_searches);
  return Response{};
}

Response Service::SearchStream(std::string_view body,
                               const std::function<bool(const std::string&)>& emit) const {
  auto req = ReadSearch(body);
  if (!req.ok()) return StatusResponse(req.status());
  SearchSlot slot(*this);
  if (!slot.ok()) {
    Response e = TooManySearches(opt_.max_searches);
    emit(Event("error", e.body.substr(0, e.body.size() - 1)));
    return e;
  }
  SearchOptions o = req.value().options;
  SetBounds(o, opt_);
  std::atomic<bool> gone{false};
  o.cancel = &gone;
  o.progress_interval_s = 0.2;
  o.progress = [&](const SearchProgress& p) {
    const json j = {{"fraction", p.fraction},
                    {"evaluated", p.evaluated},
                    {"feasible", p.feasible},
                    {"elapsed_s", p.elapsed_s}};
    if (!gone.load() && !emit(Event("progress", j.dump()))) gone.store(true);
  };
  auto res = trainsim::Search(req.value().model, req.value().hardware, o);
  if (gone.load()) return Response{};
  if (!res.ok()) {
    const Response e = StatusResponse(res.status());
    emit(Event("error", e.body.substr(0, e.body.size() - 1)));
  } else if (!res.value().complete) {
    const Response e = DeadlineResponse(res.value(), opt_.search_seconds);
    emit(Event("error", e.body.substr(0, e.body.size() - 1)));
  } else {
    emit(Event("result", SearchResultJson(res.value(), -1, &req.value().hardware)));
  }
  return Response{};
}

}  // namespace trainsim::serve

#include "cmd_serve.h"

#include <csignal>
#include <cstdio>

#include "cli_util.h"
#include "serve/http_server.h"
#include "trainsim/presets.h"

namespace trainsim::cli {

void AddServe(CLI::App& app, ServeArgs& a) {
  CLI::App* c = app.add_subcommand(
      "serve", "REST service (simulate, search, validate, timeline) and the web page");
  c->add_option("--host", a.host, "address to listen on")->capture_default_str();
  c->add_option("--port", a.port, "port (0 = any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  c->add_option("--max-connections", a.max_connections,
                "connections open at once; more are answered 503")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  c->add_option("--threads", a.threads, "worker threads serving connections")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  c->add_option("--max-searches", a.max_searches, "searches running at once; more are 503")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  c->add_option("--search-threads", a.search_threads, "threads per search (0 = all cores)")
      ->check(CLI::Range(0, 1024));
  c->add_option("--compute-slots", a.compute_slots,
                "simulate / timeline / validate requests computing at once; the rest wait first "
                "come, first served (0 = four per core)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  c->add_option("--simulate-cache", a.simulate_cache,
                "answers of POST /v1/simulate kept by body (0 = none)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  c->add_option("--search-seconds", a.search_seconds,
                "time limit of one search; a search stopped by it is answered 503")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  c->add_option("--request-seconds", a.request_seconds,
                "time limit of any other request (503 past it)")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  c->add_option("--read-timeout", a.read_timeout,
                "seconds a client may stall while sending; then it is answered 400 and dropped")
      ->check(CLI::Range(1, 600))
      ->capture_default_str();
  c->add_option("--cases", a.cases,
                "validation case files (JSONL) that POST /v1/validate scores when the request "
                "gives none");
}

namespace {

serve::HttpServer* g_server = nullptr;

void OnSignal(int) {
  if (g_server) g_server->Stop();
}

}  // namespace

int RunServe(const ServeArgs& a) {
  serve::ServerOptions o;
  o.host = a.host;
  o.port = a.port;
  o.max_connections = a.max_connections;
  o.worker_threads = a.threads;
  o.read_timeout_s = a.read_timeout;
  o.service.max_searches = a.max_searches;
  o.service.search_threads = a.search_threads;
  o.service.simulate_cache_entries = a.simulate_cache;
  o.service.compute_slots = a.compute_slots;
  o.service.search_seconds = a.search_seconds;
  o.service.request_seconds = a.request_seconds;
  for (const std::string& f : a.cases) {  // read once, here: no request names a file
    auto text = ReadTextFile(f);
    if (!text.ok()) return Fail(Status::NotFound("cases: " + text.status().message()));
    o.service.shipped_cases += text.value();
    if (!o.service.shipped_cases.empty() && o.service.shipped_cases.back() != '\n')
      o.service.shipped_cases += '\n';
    o.service.shipped_cases_origin += (o.service.shipped_cases_origin.empty() ? "" : "+") + f;
  }
  serve::HttpServer server(o);
  if (Status st = server.Bind(); !st.ok()) return Fail(st);
  std::printf(
      "trainsim serve: listening on http://%s:%d (the page at /, the API at /v1/, "
      "/openapi.json)\n",
      a.host.c_str(), server.port());
  std::fflush(stdout);
  g_server = &server;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  server.Run();
  g_server = nullptr;
  return 0;
}

}  // namespace trainsim::cli

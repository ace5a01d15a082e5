// `trainsim serve`: the REST service and the web page (src/serve/, docs/SERVE.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace trainsim::cli {

struct ServeArgs {
  std::string host = "127.0.0.1";
  int port = 8080;
  int max_connections = 500, threads = 128, max_searches = 2, search_threads = 0;
  int compute_slots = 0;  // simulate/timeline/validate requests computing at once (0 = 4 per core)
  int read_timeout = 5;
  int simulate_cache = 1024;  // answers of /v1/simulate kept by body
  double search_seconds = 10, request_seconds = 10;
  std::vector<std::string> cases;  // validation case files scored by POST /v1/validate
};
void AddServe(CLI::App& app, ServeArgs& a);
int RunServe(const ServeArgs& a);

}  // namespace trainsim::cli

// Load generator for `trainsim serve` (docs/SERVE.md): N POST /v1/simulate requests at each
// concurrency, each client a thread with one kept-alive connection (cpp-httplib's client).
// Prints throughput, p50/p99/max latency and the error count per concurrency.
//
//   build/trainsim serve --port 8181 &
//   build/serve_load --port 8181 --requests 100000 --concurrency 1,8,64 [--distinct 1]
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

// The request of docs/SERVE.md: Llama-3 8B on 8 H100s, tp 2, pp 2.
constexpr const char* kBody =
    R"({"model": "llama3-8b", "hardware": "h100_sxm_80gb", "strategy": {"world_size": 8, )"
    R"("tp_size": 2, "pp_size": 2, "global_batch_size": 32}})";

struct Options {
  std::string host = "127.0.0.1";
  int port = 8080;
  long requests = 100000;
  std::vector<int> concurrency = {1, 8, 64};
  // --distinct 1: every request a different body (global_batch_size 2, 4, 6, ... cycling over
  // 100,000 values), so that no answer comes from the server's simulate cache.
  bool distinct = false;
};

// The body of request `i` (of all clients: `seq` counts them).
std::string Body(const Options& o, long i) {
  if (!o.distinct) return kBody;
  return R"({"model": "llama3-8b", "hardware": "h100_sxm_80gb", "strategy": {"world_size": 8, )"
         R"("tp_size": 2, "pp_size": 2, "global_batch_size": )" +
         std::to_string(2 * (1 + i % 100000)) + "}}";
}

struct Run {
  std::vector<double> latency_s;  // of the successful requests
  long errors = 0;
  double seconds = 0;
};

// One client: `n` requests on one connection, latencies appended to `out`.
void Client(const Options& o, long n, std::vector<double>& out, std::atomic<long>& errors,
            std::atomic<long>& seq) {
  httplib::Client c(o.host, o.port);
  c.set_keep_alive(true);
  c.set_tcp_nodelay(true);  // else each request waits for a delayed ACK (~40 ms)
  c.set_read_timeout(30, 0);
  out.reserve(n);
  for (long i = 0; i < n; ++i) {
    const std::string body = Body(o, seq.fetch_add(1));
    const auto t0 = std::chrono::steady_clock::now();
    auto res = c.Post("/v1/simulate", body, "application/json");
    const auto t1 = std::chrono::steady_clock::now();
    if (!res || res->status != 200 || res->body.empty()) {
      errors.fetch_add(1);
      continue;
    }
    out.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
}

Run Measure(const Options& o, int conc) {
  std::vector<std::vector<double>> lat(conc);
  std::atomic<long> errors{0}, seq{0};
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < conc; ++t) {
    const long n = o.requests / conc + (t < o.requests % conc ? 1 : 0);
    threads.emplace_back([&, t, n] { Client(o, n, lat[t], errors, seq); });
  }
  for (std::thread& t : threads) t.join();
  Run r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& v : lat) r.latency_s.insert(r.latency_s.end(), v.begin(), v.end());
  std::sort(r.latency_s.begin(), r.latency_s.end());
  r.errors = errors.load();
  return r;
}

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()));
  return sorted[i];
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--host")
      o.host = v;
    else if (k == "--port")
      o.port = std::atoi(v.c_str());
    else if (k == "--distinct")
      o.distinct = v == "1";
    else if (k == "--requests")
      o.requests = std::atol(v.c_str());
    else if (k == "--concurrency") {
      o.concurrency.clear();
      for (size_t p = 0; p < v.size();) {
        const size_t q = v.find(',', p);
        o.concurrency.push_back(std::atoi(v.substr(p, q - p).c_str()));
        p = q == std::string::npos ? v.size() : q + 1;
      }
    } else {
      std::fprintf(stderr, "serve_load: unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::printf("%-11s %9s %9s %12s %9s %9s %9s %7s\n", "concurrency", "requests", "seconds",
              "requests/s", "p50 ms", "p99 ms", "max ms", "errors");
  int rc = 0;
  for (int conc : o.concurrency) {
    if (conc < 1) continue;
    const Run r = Measure(o, conc);
    std::printf("%-11d %9ld %9.2f %12.0f %9.3f %9.3f %9.3f %7ld\n", conc, o.requests, r.seconds,
                r.latency_s.size() / r.seconds, 1e3 * Quantile(r.latency_s, 0.50),
                1e3 * Quantile(r.latency_s, 0.99), 1e3 * Quantile(r.latency_s, 1.0), r.errors);
    std::fflush(stdout);
    rc = rc || r.errors > 0;
  }
  return rc;
}

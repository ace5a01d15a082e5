#include "serve/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace trainsim::serve {

namespace {

// True on the threads that answer connections over the bound: every request they read is
// answered 503 (Connection: close) without being routed.
thread_local bool t_over_bound = false;

// cpp-httplib's task queue with a bound: connections beyond `max` (open ones: being served or
// waiting for a worker) go to the reject threads, which answer them 503 (Connection: close).
class BoundedQueue : public httplib::TaskQueue {
 public:
  // A rejected connection holds its thread until the client closes (as "Connection: close"
  // asks) or the keep-alive timeout; a few threads keep a burst of rejects moving.
  static constexpr int kRejectThreads = 8;

  BoundedQueue(int workers, int max) : max_(max) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { Work(jobs_, false); });
    for (int i = 0; i < kRejectThreads; ++i)
      threads_.emplace_back([this] { Work(rejects_, true); });
  }
  ~BoundedQueue() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (open_ >= max_) {
      rejects_.push_back(std::move(fn));
      reject_cv_.notify_one();
      return;
    }
    ++open_;
    jobs_.push_back([this, fn = std::move(fn)] {
      fn();
      std::lock_guard<std::mutex> l(mu_);
      --open_;
    });
    cv_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    cv_.notify_all();
    reject_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  void Work(std::deque<std::function<void()>>& q, bool reject) {
    t_over_bound = reject;
    std::condition_variable& cv = reject ? reject_cv_ : cv_;
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv.wait(lock, [&] { return stopping_ || !q.empty(); });
        if (q.empty()) return;  // stopping, and nothing left to close
        fn = std::move(q.front());
        q.pop_front();
      }
      fn();
    }
  }

  const int max_;
  int open_ = 0;
  bool stopping_ = false;
  std::mutex mu_;
  std::condition_variable cv_, reject_cv_;
  std::deque<std::function<void()>> jobs_, rejects_;
  std::vector<std::thread> threads_;
};

void Send(const Response& from, httplib::Response& to) {
  to.status = from.status;
  for (const auto& [k, v] : from.headers) to.set_header(k, v);
  to.set_content(from.body, from.content_type.c_str());
}

}  // namespace

// cpp-httplib 0.11 listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, compiled into
// Debian's library): on a loaded machine a burst of connections then waits for SYN
// retransmissions (1 s each). listen(2) again on the bound socket raises the backlog.
class BacklogServer : public httplib::Server {
 public:
  void RaiseBacklog(int backlog) { ::listen(svr_sock_, backlog); }
};

struct HttpServer::Impl {
  ServerOptions opt;
  Service service;
  BacklogServer http;
  int port = -1;

  explicit Impl(ServerOptions o) : opt(std::move(o)), service(opt.service) {}
  void Route(const httplib::Request& req, const std::string& body, httplib::Response& res);
  void ReadAndRoute(const httplib::Request& req, httplib::Response& res,
                    const httplib::ContentReader& read);
  void Stream(const httplib::Request& req, const std::string& post_body, httplib::Response& res);
  void Configure();
};

// /v1/search/stream: POST with the body, or GET with it in the query (?q=..., for EventSource).
void HttpServer::Impl::Stream(const httplib::Request& req, const std::string& post_body,
                              httplib::Response& res) {
  std::string body = req.method == "GET" ? req.get_param_value("q") : post_body;
  Response check = service.CheckSearch(body);
  if (check.status != 200) return Send(check, res);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream", [this, body = std::move(body)](size_t, httplib::DataSink& sink) {
        service.SearchStream(body, [&sink](const std::string& event) {
          return sink.is_writable() && sink.write(event.data(), event.size());
        });
        sink.done();
        return true;
      });
}

void HttpServer::Impl::Route(const httplib::Request& req, const std::string& body,
                             httplib::Response& res) {
  if (req.path == "/v1/search/stream" && (req.method == "GET" || req.method == "POST"))
    return Stream(req, body, res);
  Send(service.Handle(req.method, req.path, body), res);
}

// A body is read here, not by cpp-httplib: 0.11 bounds a body by its Content-Length only, and
// would read a chunked body of any size into memory.
void HttpServer::Impl::ReadAndRoute(const httplib::Request& req, httplib::Response& res,
                                    const httplib::ContentReader& read) {
  std::string body;
  bool over = false;
  const size_t max = static_cast<size_t>(opt.service.max_body_bytes);
  const bool ok = read([&](const char* data, size_t n) {
    if (body.size() + n > max) return over = true, false;
    body.append(data, n);
    return true;
  });
  if (over || res.status == 413) {
    Send(ErrorResponse(413, "request: the body is over " + std::to_string(max) + " bytes", "body"),
         res);
    res.set_header("Connection", "close");
    return;
  }
  if (!ok) return Send(ErrorResponse(400, "request: incomplete body", "body"), res);
  Route(req, body, res);
}

void HttpServer::Impl::Configure() {
  const int workers = opt.worker_threads, max = opt.max_connections;
  http.new_task_queue = [workers, max] { return new BoundedQueue(workers, max); };
  http.set_payload_max_length(static_cast<size_t>(opt.service.max_body_bytes));
  http.set_read_timeout(opt.read_timeout_s, 0);
  http.set_write_timeout(opt.read_timeout_s, 0);
  http.set_keep_alive_max_count(100000);  // a client may keep one connection (the load test)
  http.set_tcp_nodelay(true);
  http.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    using H = httplib::Server::HandlerResponse;
    if (t_over_bound) {
      Send(ErrorResponse(503, "server: too many connections; retry", "connections"), res);
      res.set_header("Retry-After", "1");
    } else if ((req.method == "GET" || req.method == "HEAD" || req.method == "OPTIONS") &&
               req.has_header("Transfer-Encoding")) {  // would be read unbounded (see above)
      Send(ErrorResponse(400, "request: " + req.method + " takes no body", "body"), res);
    } else {
      return H::Unhandled;
    }
    res.set_header("Connection", "close");
    return H::Handled;
  });
  auto get = [this](const httplib::Request& req, httplib::Response& res) {
    Route(req, req.body, res);
  };
  auto with_body = [this](const httplib::Request& req, httplib::Response& res,
                          const httplib::ContentReader& read) { ReadAndRoute(req, res, read); };
  http.Get(".*", get);
  http.Options(".*", get);
  http.Post(".*", with_body);
  http.Put(".*", with_body);
  http.Delete(".*", with_body);
  http.Patch(".*", with_body);
  // cpp-httplib's own refusals (413 over the body limit, 400 on a malformed request line or
  // headers) carry no body: give them the service's error document.
  http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    const char* what = res.status == 413
                           ? "request: the body is over the size limit"
                           : "request: malformed or incomplete HTTP request (a client that "
                             "stalls is answered this after the read timeout)";
    Send(ErrorResponse(res.status, what, res.status == 413 ? "body" : "request"), res);
  });
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        Send(ErrorResponse(500, "server: internal error (a bug: please report the request)"), res);
      });
}

HttpServer::HttpServer(ServerOptions o) : impl_(std::make_unique<Impl>(std::move(o))) {
  impl_->Configure();
}
HttpServer::~HttpServer() {
  Stop();
}

Status HttpServer::Bind() {
  const std::string& host = impl_->opt.host;
  if (impl_->opt.port == 0) {
    impl_->port = impl_->http.bind_to_any_port(host);
  } else if (impl_->http.bind_to_port(host, impl_->opt.port)) {
    impl_->port = impl_->opt.port;
  }
  if (impl_->port <= 0)
    return Status::Invalid("port", "cannot listen on " + host + ":" +
                                       std::to_string(impl_->opt.port) +
                                       " (in use, or not an address of this machine)");
  impl_->http.RaiseBacklog(std::max(impl_->opt.max_connections, 128));
  return Status::Ok();
}

int HttpServer::port() const {
  return impl_->port;
}
void HttpServer::Run() {
  impl_->http.listen_after_bind();
}
void HttpServer::Stop() {
  if (impl_->http.is_running()) impl_->http.stop();
}

}  // namespace trainsim::serve

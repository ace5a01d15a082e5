// `trainsim serve`'s HTTP layer: cpp-httplib in front of Service (serve/service.h). It adds what
// only a socket has: the connection bound (503 beyond it), the body limit at the socket (413
// before the body is read), read/write timeouts for slow clients, and the event stream of
// /v1/search/stream.
#pragma once

#include <memory>
#include <string>

#include "serve/service.h"
#include "trainsim/status.h"

namespace trainsim::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0 = any free port (HttpServer::port() says which)
  // Connections open at once (being served or waiting for a worker); one more is answered 503
  // and closed.
  int max_connections = 500;
  // Worker threads serving connections (a kept-alive connection holds one while it is open).
  int worker_threads = 128;
  // A client that sends nothing for this long is dropped (slow clients; cpp-httplib's default).
  int read_timeout_s = 5;
  ServiceOptions service;
};

class HttpServer {
 public:
  explicit HttpServer(ServerOptions o);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the listening socket; an error names the host and port.
  Status Bind();
  int port() const;
  // Serves until Stop() (from another thread or a signal handler); REQUIRES: Bind() succeeded.
  void Run();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainsim::serve

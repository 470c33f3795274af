// HttpServer: tide's HTTP endpoints (docs/live.md), on cpp-httplib.
//
//   GET  /               StatusSource::ReportPage, the live status page (HTML)
//   GET  /api/v1/report  StatusSource::ReportJson, the page's data; 503 if unavailable
//   GET  /metrics        StatusSource::MetricsText, Prometheus text format 0.0.4
//   GET  /status         StatusSource::StatusJson
//   GET  /healthz        200 "ok\n", or 503 with the reason
//   POST /api/v1/<name>  StatusSource::Command; needs `Authorization: Bearer <token>`
//
// The read endpoints answer GET (and HEAD) only: other methods get 405. An
// unknown path gets 404. Command parameters come from the query string and
// from a body that is either a form (application/x-www-form-urlencoded) or
// a JSON object of strings, numbers and booleans; a body value replaces a
// query value of the same name.
//
// Every connection is bounded (HttpLimits, enforced by LimitedServer in
// http_connections.h): what any number of clients, however slow, large or
// malformed their requests, can take of the server is a few threads, a few
// file descriptors and a few hundred KiB, each for seconds. The controller's
// loop never waits on the server: the handlers read its published snapshots.
#ifndef TIDE_CONTROLLER_HTTP_SERVER_H_
#define TIDE_CONTROLLER_HTTP_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "core/status.h"

namespace tide::controller {

class LimitedServer;

// What the server shows and does: the controller implements it.
//
// Thread-safety: every method is called from the server's worker threads,
// several at once and concurrently with the controller's own loop, so an
// implementation must be thread-safe. Calls should return quickly (they
// hold a worker thread): hand slow work to the loop instead.
class StatusSource {
 public:
  virtual ~StatusSource() = default;
  // The body of GET /metrics: a page of the Prometheus text format 0.0.4.
  virtual std::string MetricsText() = 0;
  // The body of GET /status: a JSON document.
  virtual std::string StatusJson() = 0;
  // GET /healthz: true if healthy; otherwise false with `*why` (never null)
  // set to a human-readable reason.
  virtual bool Healthy(std::string* why) = 0;
  // The body of GET /: an HTML page.
  virtual std::string ReportPage() = 0;
  // The body of GET /api/v1/report: a JSON document, or an error whose
  // message becomes the 503 reply's JSON body ({"error": ...}).
  virtual Result<std::string> ReportJson() = 0;
  // POST /api/v1/<name>, already authenticated. Returns the JSON body of the
  // 200 reply, or an error whose message becomes the reply's body:
  // InvalidArgument -> 400, NotFound -> 404 (no such command),
  // FailedPrecondition -> 409, anything else -> 500.
  virtual Result<std::string> Command(const std::string& name, const std::map<std::string, std::string>& params) = 0;
};

// What one client may take of the server. The defaults are for a
// controller's admin API (a few scrapers, pages and operators); tests shrink
// the times so that they run fast.
struct HttpLimits {
  // Threads that serve connections, one connection each at a time. The
  // handlers answer from snapshots in well under a millisecond, so eight
  // serve far more scrapers and open pages than one controller has.
  int workers = 8;
  // Accepted connections waiting for a worker. When this many wait, tide
  // stops accepting: later clients wait in the kernel's listen queue, where
  // they cost none of the file descriptors that the controller's own work
  // (SQLite, provider commands, the Kubernetes client) needs.
  int max_waiting = 64;
  // listen(2)'s backlog: connections the kernel completes while tide does not
  // accept. 128 (Linux's SOMAXCONN until 5.4) holds a burst of clients
  // instead of dropping their SYNs (which costs them a 1 s retry each).
  int listen_backlog = 128;
  // The request line and the header fields together: browsers send 1-2 KiB,
  // and 16 KiB is twice nginx's default buffer for a request line or a
  // header line. More is refused with 431 (or 414 for a long request line).
  size_t max_head_bytes = 16 << 10;
  // Header fields in one request (Apache's LimitRequestFields); more: 431.
  int max_headers = 100;
  // A request body. A command's parameters are a few short strings, so
  // 8 KiB is room to spare; it is also the packaged httplib's own limit on a
  // form body (CPPHTTPLIB_FORM_URL_ENCODED_PAYLOAD_MAX_LENGTH), so form and
  // JSON bodies have one limit. A larger Content-Length is refused with 413
  // before the body is read.
  size_t max_body_bytes = 8 << 10;
  // From a request's first byte to its last (and, on a new connection, from
  // its acceptance to its request's last byte). A slower client, e.g. one
  // that sends a byte every few seconds to hold a worker, gets 408 and is
  // disconnected. Any honest client sends the at most 24 KiB in far less.
  std::chrono::milliseconds request_timeout{10'000};
  // For a reply to be taken. A client that stops reading is disconnected
  // (reset), so it holds neither a worker nor the reply's memory.
  std::chrono::milliseconds reply_timeout{10'000};
  // An idle kept-alive connection is closed after this, and after its
  // current reply when other connections wait for a worker, so that idle
  // browsers never keep a worker from a client with a request.
  std::chrono::milliseconds keep_alive_idle{2'000};
  // Requests on one connection before the server closes it: a busy client
  // then competes for a worker with the others from time to time.
  int max_requests_per_connection = 100;
};

struct HttpOptions {
  // The address to listen on. The default serves this machine only.
  std::string address = "127.0.0.1";
  // 0: pick a free port (HttpServer::port() says which).
  int port = 9464;
  // The bearer token for state-changing requests. Empty: every such
  // request is refused with 403 (nothing may change state over HTTP).
  std::string token;
  HttpLimits limits;
};

// Serves a StatusSource. Start/Stop/port are for the owning thread only.
class HttpServer {
 public:
  // `source` is borrowed and must outlive the server.
  HttpServer(HttpOptions options, StatusSource* source);
  ~HttpServer();  // Stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and serves on a background thread; returns once the server
  // accepts connections. Unavailable (naming address:port) if it cannot
  // bind; FailedPrecondition if already started.
  [[nodiscard]] Status Start();
  // Stops serving and joins the thread: requests being handled finish
  // first; connections that wait for a request are closed.
  // Idempotent; a stopped server cannot be started again.
  void Stop();
  // The bound port once started (the chosen one for port 0); else
  // options.port.
  int port() const { return port_; }

 private:
  void Routes();

  HttpOptions options_;
  StatusSource* source_;
  std::unique_ptr<LimitedServer> server_;
  std::thread thread_;
  std::atomic<bool> serving_{false};  // the listening thread has not returned
  bool started_ = false;
  int port_ = 0;
};

// True if the two strings are equal, in a time that does not depend on
// where they differ (for comparing secrets).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_HTTP_SERVER_H_

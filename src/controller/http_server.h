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
#ifndef TIDE_CONTROLLER_HTTP_SERVER_H_
#define TIDE_CONTROLLER_HTTP_SERVER_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "core/status.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace tide::controller {

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

struct HttpOptions {
  // The address to listen on. The default serves this machine only.
  std::string address = "127.0.0.1";
  // 0: pick a free port (HttpServer::port() says which).
  int port = 9464;
  // The bearer token for state-changing requests. Empty: every such
  // request is refused with 403 (nothing may change state over HTTP).
  std::string token;
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
  // Stops serving and joins the thread: in-flight requests finish first.
  // Idempotent; a stopped server cannot be started again.
  void Stop();
  // The bound port once started (the chosen one for port 0); else
  // options.port.
  int port() const { return port_; }

 private:
  void Routes();

  HttpOptions options_;
  StatusSource* source_;
  std::unique_ptr<httplib::Server> server_;
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

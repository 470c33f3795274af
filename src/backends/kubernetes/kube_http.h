// The transport under the Kubernetes client: one HTTP request, or one
// streaming watch, against the API server. An interface, so that the client
// and the watch caches run in unit tests on recorded replies
// (kube_fake_transport_test.h) and on the real server alike.
//
// A reply with any HTTP status is a Reply: the transport does not judge it.
// StatusFromReply() maps a non-2xx reply to a Status, the same way for every
// caller:
//   400, 422          InvalidArgument     the request is wrong: fix it, do not retry
//   401               Unauthenticated     the credentials are wrong or expired
//   403               PermissionDenied    RBAC says no
//   404               NotFound            the object (or the resource type) does not exist
//   409 AlreadyExists AlreadyExists       a create found the name taken
//   409 otherwise     Aborted             a resourceVersion/uid precondition failed: re-read, retry
//   410               OutOfRange          the resourceVersion is too old (IsGone): list again
//   429               ResourceExhausted   refused (a disruption budget on an eviction, or throttled): later
//   5xx, no reply     Unavailable         the server did not answer: retry later
//   other             Unknown
// Every message names what was asked (the caller's `what`, e.g.
// "pod default/p1"), the HTTP status and the API's own Status message.
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_HTTP_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_HTTP_H_

#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "backends/kubernetes/kube_config.h"
#include "core/status.h"
#include "core/time.h"

namespace tide::backends::kube {

struct Reply {
  int status = 0;  // the HTTP status
  std::string body;
};

// Called with each line of a watch (one JSON event, without the newline);
// returns false to end the watch.
using LineHandler = std::function<bool(std::string_view line)>;

class Transport {
 public:
  virtual ~Transport() = default;

  // Sends `method` (GET, POST, PATCH, PUT, DELETE) to `path_with_query`
  // (already URL-encoded, starting with '/'), with `body` of `content_type`
  // when the body is not empty. Returns the reply whatever its HTTP status;
  // Unavailable, naming the server, when no reply came (connection refused,
  // TLS failure, a read timeout); DeadlineExceeded when the whole call took
  // longer than its limit (HttpOptions::read_timeout for HttpTransport),
  // however steadily the server trickled its reply. Thread-safe.
  virtual Result<Reply> Request(std::string_view method, std::string_view path_with_query, std::string_view body = "",
                                std::string_view content_type = "application/json") = 0;

  // GETs `path_with_query` (a ?watch=1 URL) and calls `on_line` with each
  // newline-delimited line as it arrives, until the server ends the stream
  // (OK), `on_line` returns false (OK), `stop` is requested (Cancelled), or
  // the connection fails (Unavailable). `on_open` (optional) is called once
  // when the server has answered 200, before any line. A non-200 answer is
  // StatusFromReply's error for it (410: OutOfRange). Thread-safe: several
  // watches may run at once on different threads.
  virtual Status Watch(std::string_view path_with_query, const LineHandler& on_line, std::stop_token stop = {},
                       const std::function<void()>& on_open = nullptr) = 0;
};

// OK for 2xx; otherwise the code in the table above, with a message
// "<what>: HTTP <status> <reason>: <the API Status message>".
Status StatusFromReply(const Reply& reply, std::string_view what);

// True for the status of a 410 Gone (a watch's or a list's resourceVersion
// is too old), and only for it.
bool IsGone(const Status& status);

struct HttpOptions {
  Duration connect_timeout = Seconds(10);
  // For a plain request, both between two reads and for the whole call;
  // and between two reads of a watch (so it must be longer than the
  // watch's timeoutSeconds when no bookmark comes).
  Duration read_timeout = Seconds(30);
  Duration watch_read_timeout = Seconds(360);
  std::string user_agent = "tide";
};

// The real transport: cpp-httplib over TLS (httplib::SSLClient) for https://
// servers, plain HTTP for http:// (a test proxy). It verifies the server
// against the connection's CA (ca_data, else ca_file; else the system's CAs)
// unless insecure_skip_tls_verify, presents the client certificate when
// given, and sends the bearer token, re-reading token_file on every request
// (service-account tokens rotate). Each call opens its own connection, so
// calls from several threads never share one.
class HttpTransport final : public Transport {
 public:
  // InvalidArgument (naming the connection's source and field) when the
  // server URL or a PEM certificate or key cannot be read; Unavailable when
  // a file cannot be opened.
  static Result<std::unique_ptr<HttpTransport>> Create(const Connection& connection, HttpOptions options = {});
  ~HttpTransport() override;

  Result<Reply> Request(std::string_view method, std::string_view path_with_query, std::string_view body = "",
                        std::string_view content_type = "application/json") override;
  Status Watch(std::string_view path_with_query, const LineHandler& on_line, std::stop_token stop = {},
               const std::function<void()>& on_open = nullptr) override;

 private:
  struct Impl;
  explicit HttpTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tide::backends::kube

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_HTTP_H_

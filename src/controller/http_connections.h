// LimitedServer: cpp-httplib's server with every connection bounded by
// HttpLimits. A fixed pool of workers takes connections from a bounded wait
// list; for each request, a front end reads the head, checks it
// (CheckRequestHead), reads the body, and only then hands the whole request
// to httplib's parser and router, which read it from memory.
//
// Why not httplib's own limits: the packaged 0.11 times out each read but
// not a request (a client that sends a byte every few seconds holds a worker
// for ever), does not bound the number of header lines, applies no payload
// limit to chunked bodies, queues accepted connections without bound (each
// an open file descriptor), reads a POST without Content-Length until the
// client closes, reads (and drops) all of an oversized body before it
// answers 413, and ignores a header line without a colon. The front end
// closes each of these.
#ifndef TIDE_CONTROLLER_HTTP_CONNECTIONS_H_
#define TIDE_CONTROLLER_HTTP_CONNECTIONS_H_

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <string_view>

#include "controller/http_server.h"

namespace tide::controller {

// One request head, checked.
struct CheckedHead {
  // 0: the head is good. Otherwise the status to refuse the request with:
  // 400 (malformed), 411 (a chunked body), 413 (the body is too large), 414
  // (the request line is too long), 417 (an Expect other than 100-continue),
  // 431 (too many header fields) or 505 (not HTTP/1.0 or 1.1).
  int refuse = 0;
  std::string why;  // a refusal's reason, for the reply's body
  // A good head as httplib gets it: the Expect field dropped (the front end
  // answers it) and a Content-Length always given (0 when absent: RFC 9112
  // says a request without one has no body; httplib would wait for one).
  std::string head;
  size_t body_bytes = 0;
  bool expect_continue = false;  // the client waits for "100 Continue"
};

// Checks a request head: `head` runs from the request line to the blank line
// that ends the head, both CRLFs included. The rules are RFC 9112's, strictly:
// a request line "METHOD TARGET HTTP/1.x" of one space each, a visible-ASCII
// target, "name: value" fields with token names and no control characters,
// no folded lines, at most one Content-Length, all digits, no
// Transfer-Encoding.
CheckedHead CheckRequestHead(std::string_view head, const HttpLimits& limits);

class LimitedServer final : public httplib::Server {
 public:
  explicit LimitedServer(const HttpLimits& limits);

  // Sets limits.listen_backlog on the bound socket (httplib listens with a
  // backlog of 5). Call between binding and listen_after_bind().
  void ApplyBacklog();

 private:
  // Serves one connection on a worker thread; httplib calls it for each
  // accepted socket (a private virtual of httplib::Server, overridden here).
  bool process_and_close_socket(socket_t sock) override;

  const HttpLimits limits_;
  std::atomic<int> waiting_{0};  // connections accepted and waiting for a worker
};

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_HTTP_CONNECTIONS_H_

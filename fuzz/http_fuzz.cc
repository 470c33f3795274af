// The HTTP API end to end: each input is sent as is to a running server on
// loopback (controller::HttpServer, the one `tide run` serves), the sending
// side then closed, and the reply read.
//
// Properties: every reply is a well-formed HTTP/1.1 status line (or none,
// when the client sent nothing); a command runs only for a request that
// carries the right bearer token; no reply tells the token to a client that
// did not send it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "controller/http_server.h"
#include "fuzz/fuzz_check.h"

namespace tide::fuzz {
namespace {

constexpr std::string_view kToken = "fuzz-token-0123456789abcdef";

class Source final : public controller::StatusSource {
 public:
  std::atomic<int> commands{0};
  std::string MetricsText() override { return "tide_up 1\n"; }
  std::string StatusJson() override { return "{\"ok\": true}"; }
  bool Healthy(std::string* why) override {
    *why = "store: not writable";
    return false;
  }
  std::string ReportPage() override { return "<html></html>"; }
  Result<std::string> ReportJson() override { return std::string("{}"); }
  Result<std::string> Command(const std::string& name, const std::map<std::string, std::string>&) override {
    ++commands;
    if (name == "fail") return absl::InvalidArgumentError("give node=<name>");
    return std::string("{}");
  }
};

// Sends `request`, closes the sending side, and returns all the server said.
std::string Exchange(int port, std::string_view request) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // A long run opens hundreds of thousands of connections: loopback's
  // ephemeral ports run out for a moment (EADDRNOTAVAIL), which is the
  // client's limit, not the server's; and libFuzzer's timer signal
  // interrupts calls (EINTR). Such a connect is tried again.
  int fd = -1;
  for (int attempt = 0;; ++attempt) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) Fail("a socket", strerror(errno));
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) break;
    const int err = errno;
    close(fd);
    if ((err != EADDRNOTAVAIL && err != EINTR) || attempt == 200) Fail("the server accepts", strerror(err));
    usleep(10'000);
  }
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the server may close early, on a refused head
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;  // reset: the server cut a client it refused
    reply.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return reply;
}

bool HasToken(std::string_view request) {
  // Header names are case-insensitive; the token itself is exact.
  const std::string lower = ToLower(request);
  return lower.find(StrCat("authorization: bearer ", ToLower(kToken))) != std::string::npos &&
         request.find(kToken) != std::string_view::npos;
}

}  // namespace
}  // namespace tide::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tide;
  using namespace tide::fuzz;
  static Source* source = new Source();
  static controller::HttpServer* server = [] {
    controller::HttpOptions o;
    o.port = 0;
    o.token = std::string(kToken);
    // Short, so an input that stops mid-request is answered quickly.
    o.limits.request_timeout = std::chrono::milliseconds(500);
    o.limits.reply_timeout = std::chrono::milliseconds(500);
    auto* s = new controller::HttpServer(o, source);
    if (!s->Start().ok()) Fail("the server starts on loopback", "Start failed");
    return s;
  }();
  const std::string_view request = AsText(data, size);
  const int before = source->commands;
  const std::string reply = Exchange(server->port(), request);
  if (source->commands != before && !HasToken(request)) Fail("a command runs only with the token", request);
  // A reply may repeat what its own client sent (a path in a 404), but never
  // tells the token to a client that did not send it.
  if (reply.find(kToken) != std::string::npos && request.find(kToken) == std::string_view::npos) {
    Fail("no reply tells the token to a client without it", reply);
  }
  if (reply.empty()) return 0;
  if (!reply.starts_with("HTTP/1.1 ") || reply.size() < 12 || !isdigit(reply[9]) || !isdigit(reply[10]) ||
      !isdigit(reply[11])) {
    Fail("a reply starts with an HTTP/1.1 status line", reply);
  }
  return 0;
}

#include "controller/http_connections.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "core/strings.h"

namespace tide::controller {
namespace {

using Clock = std::chrono::steady_clock;

// How often a worker waiting on a client looks whether the server stops:
// Stop() waits at most this long for a connection that waits for a request.
constexpr auto kStopCheck = std::chrono::milliseconds(100);
// After refusing a request, tide reads and drops what the client still sends
// (the body it did not want) for this long at most before it closes: closing
// with unread data resets the connection, and the client could lose the
// reply (nginx's "lingering close", shorter).
constexpr auto kLinger = std::chrono::seconds(1);
// The packaged httplib's own limit on the request line
// (CPPHTTPLIB_REQUEST_URI_MAX_LENGTH, CRLF included): a longer line gets 414
// from the front end, so httplib never meets one.
constexpr size_t kMaxRequestLine = 8192;
// Bytes asked of the socket at a time.
constexpr size_t kReadChunk = 4096;

bool IsTchar(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}
bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return IsTchar(static_cast<unsigned char>(c)); });
}
// A field value's bytes: visible ASCII, space, tab and obs-text (0x80-0xFF).
bool IsFieldValue(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c == '\t' || (c >= 0x20 && c != 0x7f);
  });
}
bool IsVisibleAscii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}
std::string_view StripOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

const char* Reason(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

// The reply to a request the front end refuses; the connection closes after it.
std::string Refusal(int status, std::string_view why) {
  const std::string body = StrCat(why, "\n");
  return StrCat("HTTP/1.1 ", status, " ", Reason(status), "\r\nContent-Type: text/plain; charset=utf-8\r\n",
                "Content-Length: ", body.size(), "\r\nConnection: close\r\n\r\n", body);
}

// The workers: a fixed pool whose wait list is bounded. When the list is
// full, enqueue() (on httplib's accepting thread) waits for room, so the
// accepting stops and further clients wait in the kernel. Every connection
// ends within HttpLimits' times, so room always comes.
class BoundedPool final : public httplib::TaskQueue {
 public:
  BoundedPool(int workers, int max_waiting, std::atomic<int>* waiting)
      : max_waiting_(static_cast<size_t>(std::max(1, max_waiting))), waiting_(waiting) {
    for (int i = 0; i < std::max(1, workers); ++i) threads_.emplace_back([this] { Work(); });
  }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mu_);
    has_room_.wait(lock, [&] { return jobs_.size() < max_waiting_; });
    jobs_.push_back(std::move(fn));
    waiting_->store(static_cast<int>(jobs_.size()));
    has_job_.notify_one();
  }

  // Runs what is queued (the server has stopped, so each job only closes its
  // socket), then joins the workers.
  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    has_job_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  void Work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        has_job_.wait(lock, [&] { return !jobs_.empty() || stopping_; });
        if (jobs_.empty()) return;
        fn = std::move(jobs_.front());
        jobs_.pop_front();
        waiting_->store(static_cast<int>(jobs_.size()));
      }
      has_room_.notify_one();
      fn();
    }
  }

  const size_t max_waiting_;
  std::atomic<int>* waiting_;
  std::mutex mu_;
  std::condition_variable has_job_;
  std::condition_variable has_room_;
  std::deque<std::function<void()>> jobs_;  // guarded by mu_
  bool stopping_ = false;                   // guarded by mu_
  std::vector<std::thread> threads_;
};

void Endpoint(const sockaddr_storage& addr, std::string* ip, int* port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(addr);
    inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
    *port = ntohs(a.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(addr);
    inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof text);
    *port = ntohs(a.sin6_port);
  }
  *ip = text;
}

// One client connection: its socket, read and written under deadlines, and
// the httplib::Stream through which httplib reads one checked request (from
// memory) and writes its reply.
class Connection final : public httplib::Stream {
 public:
  enum class Got { kData, kClosed, kTimeout, kStopping };

  Connection(socket_t sock, const std::atomic<socket_t>& listener, const HttpLimits& limits)
      : sock_(sock), listener_(listener), limits_(limits) {}
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  ~Connection() override {
    if (reply_timed_out_) {
      // The client stopped reading: reset at once rather than leave the
      // kernel retrying the unsent rest of the reply.
      linger no_linger = {1, 0};
      setsockopt(sock_, SOL_SOCKET, SO_LINGER, &no_linger, sizeof no_linger);
    } else {
      ::shutdown(sock_, SHUT_RDWR);
    }
    ::close(sock_);
  }

  // Bytes received and not yet taken.
  std::string& in() { return in_; }

  // Receives what has arrived (at least one byte), waiting until `deadline`
  // at most; kStopping as soon as the server stops.
  Got Receive(Clock::time_point deadline) {
    for (;;) {
      const Got g = Wait(POLLIN, deadline, /*stop_aware=*/true);
      if (g != Got::kData) return g;
      char buf[kReadChunk];
      const ssize_t n = ::recv(sock_, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        in_.append(buf, static_cast<size_t>(n));
        return Got::kData;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      return Got::kClosed;
    }
  }

  // Sends all of `data` before the reply's deadline, which starts at the
  // reply's first byte. A reply being sent is finished even when the server
  // stops.
  bool SendAll(std::string_view data) {
    if (broken_) return false;
    if (!reply_deadline_) reply_deadline_ = Clock::now() + limits_.reply_timeout;
    while (!data.empty()) {
      const ssize_t n = ::send(sock_, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        data.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        const Got g = Wait(POLLOUT, *reply_deadline_, /*stop_aware=*/false);
        if (g == Got::kData) continue;
        reply_timed_out_ = g == Got::kTimeout;
      }
      broken_ = true;
      return false;
    }
    return true;
  }

  // Answers with a refusal, then drops what the client still sends (for
  // kLinger at most) so that it reads the reply rather than a reset.
  void Refuse(int status, std::string_view why) {
    if (!SendAll(Refusal(status, why))) return;
    ::shutdown(sock_, SHUT_WR);
    const auto until = Clock::now() + kLinger;
    while (Receive(until) == Got::kData) in_.clear();
  }

  // The next request for httplib to read; a new reply follows it.
  void Stage(std::string request) {
    staged_ = std::move(request);
    staged_pos_ = 0;
    reply_deadline_.reset();
  }

  // httplib::Stream. Reads come from the staged request only: the front
  // end has read all of it, so httplib never waits on the client.
  bool is_readable() const override { return staged_pos_ < staged_.size(); }
  bool is_writable() const override { return !broken_; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, staged_.size() - staged_pos_);
    staged_.copy(ptr, n, staged_pos_);
    staged_pos_ += n;
    return static_cast<ssize_t>(n);
  }
  using httplib::Stream::write;
  ssize_t write(const char* ptr, size_t size) override {
    return SendAll(std::string_view(ptr, size)) ? static_cast<ssize_t>(size) : -1;
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr = {};
    socklen_t len = sizeof addr;
    if (getpeername(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) Endpoint(addr, &ip, &port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr = {};
    socklen_t len = sizeof addr;
    if (getsockname(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) Endpoint(addr, &ip, &port);
  }
  socket_t socket() const override { return sock_; }

 private:
  // Waits for `events` until `deadline`, in slices of kStopCheck so that a
  // stop is seen (when `stop_aware`).
  Got Wait(short events, Clock::time_point deadline, bool stop_aware) const {
    for (;;) {
      if (stop_aware && listener_ == INVALID_SOCKET) return Got::kStopping;
      const auto now = Clock::now();
      if (now >= deadline) return Got::kTimeout;
      const auto slice = std::min<Clock::duration>(deadline - now, kStopCheck);
      const auto ms = std::chrono::ceil<std::chrono::milliseconds>(slice).count();
      pollfd p = {sock_, events, 0};
      const int n = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(1, ms)));
      if (n > 0) return Got::kData;  // also an error or a hang-up: the next call says which
      if (n < 0 && errno != EINTR) return Got::kClosed;
    }
  }

  const socket_t sock_;
  const std::atomic<socket_t>& listener_;  // httplib's; INVALID_SOCKET once the server stops
  const HttpLimits& limits_;
  std::string in_;
  std::string staged_;
  size_t staged_pos_ = 0;
  std::optional<Clock::time_point> reply_deadline_;
  bool broken_ = false;           // a send failed: nothing more goes out
  bool reply_timed_out_ = false;  // ... because the client did not take the reply in time
};

// The outcome of reading one request.
struct ReadOutcome {
  enum Kind { kStaged, kRefuse, kNothing } kind;  // kNothing: the client left, or the server stops
  int status = 0;
  std::string why;

  static ReadOutcome Staged() { return {kStaged, 0, {}}; }
  static ReadOutcome Refuse(int status, std::string why) { return {kRefuse, status, std::move(why)}; }
  static ReadOutcome Nothing() { return {kNothing, 0, {}}; }
};

ReadOutcome HeadTooLong(std::string_view in, const HttpLimits& limits) {
  if (in.find("\r\n") > kMaxRequestLine) {
    return ReadOutcome::Refuse(414, StrCat("the request line is longer than ", kMaxRequestLine, " bytes"));
  }
  return ReadOutcome::Refuse(
      431, StrCat("the request line and headers are longer than ", limits.max_head_bytes, " bytes"));
}

// Reads one request whole: the head (up to the blank line), checked, then
// the body. All of it must arrive by `deadline`.
ReadOutcome ReadRequest(Connection& conn, Clock::time_point deadline, const HttpLimits& limits) {
  std::string& in = conn.in();
  size_t scanned = 0;  // bytes of `in` already looked at for the head's end
  size_t head_end = std::string::npos;
  for (;;) {
    // RFC 9112 2.2: empty lines before a request line are ignored.
    while (in.starts_with("\r\n")) {
      in.erase(0, 2);
      scanned = 0;
    }
    for (size_t i = scanned; i < in.size(); ++i) {
      if (in[i] != '\n') continue;
      // A bare LF: httplib would refuse the line anyway; say so at once
      // rather than wait for a CRLF CRLF that never comes.
      if (i == 0 || in[i - 1] != '\r') return ReadOutcome::Refuse(400, "lines must end in CRLF");
      if (i >= 3 && in.compare(i - 3, 4, "\r\n\r\n") == 0) {
        head_end = i + 1;
        break;
      }
    }
    if (head_end != std::string::npos) break;
    scanned = in.size();
    if (in.size() > limits.max_head_bytes) return HeadTooLong(in, limits);
    const Connection::Got g = conn.Receive(deadline);
    if (g == Connection::Got::kTimeout) {
      return ReadOutcome::Refuse(408, "the request did not arrive in time");
    }
    if (g != Connection::Got::kData) return ReadOutcome::Nothing();
  }
  if (head_end > limits.max_head_bytes) return HeadTooLong(in, limits);

  CheckedHead head = CheckRequestHead(std::string_view(in).substr(0, head_end), limits);
  if (head.refuse != 0) return ReadOutcome::Refuse(head.refuse, std::move(head.why));
  const size_t total = head_end + head.body_bytes;
  if (head.expect_continue && in.size() < total && !conn.SendAll("HTTP/1.1 100 Continue\r\n\r\n")) {
    return ReadOutcome::Nothing();
  }
  while (in.size() < total) {
    const Connection::Got g = conn.Receive(deadline);
    if (g == Connection::Got::kTimeout) {
      return ReadOutcome::Refuse(408, "the request body did not arrive in time");
    }
    if (g != Connection::Got::kData) return ReadOutcome::Nothing();
  }
  head.head.append(in, head_end, head.body_bytes);
  in.erase(0, total);  // what follows is the next request's (pipelining)
  conn.Stage(std::move(head.head));
  return ReadOutcome::Staged();
}

}  // namespace

CheckedHead CheckRequestHead(std::string_view head, const HttpLimits& limits) {
  CheckedHead out;
  auto refuse = [&out](int status, std::string why) {
    out.refuse = status;
    out.why = std::move(why);
    out.head.clear();
    return out;
  };
  if (!head.ends_with("\r\n\r\n")) return refuse(400, "the head must end with an empty line");
  std::string_view rest = head.substr(0, head.size() - 2);  // each line still ends in CRLF
  auto next_line = [&rest] {
    const size_t eol = rest.find("\r\n");
    const std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol + 2);
    return line;
  };

  const std::string_view request_line = next_line();
  if (request_line.size() + 2 > kMaxRequestLine) {
    return refuse(414, StrCat("the request line is longer than ", kMaxRequestLine, " bytes"));
  }
  const size_t sp1 = request_line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : request_line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || request_line.find(' ', sp2 + 1) != std::string_view::npos) {
    return refuse(400, "the request line must be METHOD TARGET HTTP/1.1, one space apart");
  }
  const std::string_view method = request_line.substr(0, sp1);
  const std::string_view target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = request_line.substr(sp2 + 1);
  if (!IsToken(method)) return refuse(400, "the method is not a token");
  if (target.empty() || !IsVisibleAscii(target)) {
    return refuse(400, "the request target must be visible ASCII (escape other bytes as %XX)");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    if (version.starts_with("HTTP/")) return refuse(505, "HTTP/1.1 and HTTP/1.0 only");
    return refuse(400, "the request line must end with HTTP/1.1");
  }
  out.head = StrCat(request_line, "\r\n");

  int fields = 0;
  std::optional<size_t> length;
  bool transfer_encoding = false;
  while (!rest.empty()) {
    const std::string_view line = next_line();
    if (++fields > limits.max_headers) return refuse(431, StrCat("more than ", limits.max_headers, " header fields"));
    if (line.starts_with(' ') || line.starts_with('\t')) return refuse(400, "folded header lines are not accepted");
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return refuse(400, StrCat("header field ", fields, " has no ':'"));
    const std::string_view name = line.substr(0, colon);
    if (!IsToken(name)) {
      return refuse(400, StrCat("header field ", fields, ": the name must be a token, with no space before ':'"));
    }
    const std::string_view value = StripOws(line.substr(colon + 1));
    // By number, as above: a reply never repeats what the client sent
    // (found by fuzzing: a name can carry anything a token allows).
    if (!IsFieldValue(value)) return refuse(400, StrCat("header field ", fields, " holds a control character"));
    const std::string lower = ToLower(name);
    if (lower == "content-length") {
      // 18 digits cannot overflow size_t; any such length is refused below.
      if (length || value.empty() || value.size() > 18 ||
          !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return refuse(400, "Content-Length must be given once, as a number of bytes");
      }
      length = std::stoull(std::string(value));
    } else if (lower == "transfer-encoding") {
      transfer_encoding = true;
    } else if (lower == "expect") {
      if (ToLower(value) != "100-continue") return refuse(417, "the only expectation understood is 100-continue");
      out.expect_continue = true;
      continue;  // answered by the front end, not httplib
    }
    StrAppend(&out.head, line, "\r\n");
  }
  if (transfer_encoding) {
    if (length) return refuse(400, "Transfer-Encoding and Content-Length together");
    return refuse(411, "send the body with a Content-Length (chunked bodies are not accepted)");
  }
  if (length.value_or(0) > limits.max_body_bytes) {
    return refuse(413, StrCat("the body has ", *length, " bytes; at most ", limits.max_body_bytes, " are accepted"));
  }
  if (!length) out.head += "Content-Length: 0\r\n";
  out.head += "\r\n";
  out.body_bytes = length.value_or(0);
  return out;
}

LimitedServer::LimitedServer(const HttpLimits& limits) : limits_(limits) {
  new_task_queue = [this] { return new BoundedPool(limits_.workers, limits_.max_waiting, &waiting_); };
  // What httplib itself checks or announces (the Keep-Alive header); the
  // front end enforces the same limits before httplib sees a request.
  set_payload_max_length(limits_.max_body_bytes);
  set_keep_alive_max_count(static_cast<size_t>(std::max(1, limits_.max_requests_per_connection)));
  set_keep_alive_timeout(std::max<time_t>(
      1, static_cast<time_t>(std::chrono::duration_cast<std::chrono::seconds>(limits_.keep_alive_idle).count())));
}

void LimitedServer::ApplyBacklog() {
  // Linux lets listen(2) change the backlog of a socket that listens already.
  const socket_t sock = svr_sock_;
  if (sock != INVALID_SOCKET) ::listen(sock, limits_.listen_backlog);
}

bool LimitedServer::process_and_close_socket(socket_t sock) {
  Connection conn(sock, svr_sock_, limits_);
  const int max_requests = std::max(1, limits_.max_requests_per_connection);
  bool ok = true;
  for (int served = 0; served < max_requests; ++served) {
    // A new connection's first request has the request time from now; a
    // kept-alive connection may idle, then its request has the request time
    // from its first byte.
    Clock::time_point start = Clock::now();
    if (served > 0 && conn.in().empty()) {
      if (conn.Receive(start + limits_.keep_alive_idle) != Connection::Got::kData) break;
      start = Clock::now();
    }
    ReadOutcome got = ReadRequest(conn, start + limits_.request_timeout, limits_);
    if (got.kind == ReadOutcome::kNothing) break;
    if (got.kind == ReadOutcome::kRefuse) {
      // A connection that sent nothing at all is closed without a word.
      if (!(got.status == 408 && conn.in().empty())) conn.Refuse(got.status, got.why);
      ok = false;
      break;
    }
    // The last request of a connection, or other connections wait for a
    // worker: the reply says "Connection: close" and the worker moves on.
    const bool last = served + 1 == max_requests || waiting_.load() > 0;
    bool client_closes = false;
    ok = process_request(conn, last, client_closes, nullptr);
    if (!ok || last || client_closes) break;
  }
  return ok;
}

}  // namespace tide::controller

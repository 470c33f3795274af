// The HTTP server under abuse: oversized and malformed requests, slow
// clients, many connections and wrong tokens, against a real server on
// 127.0.0.1. The tests assert outcomes (who was answered what, which
// connection the server closed), never how long anything took; limits'
// times are shortened only so that the tests run fast.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "controller/http_connections.h"
#include "controller/http_fakes_test.h"
#include "controller/http_server.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::FakeSource;

constexpr char kToken[] = "abuse-test-token-7f3c";
// No reply in these tests takes this long: a server that fails to answer
// fails the test here instead of hanging it. Never an assertion on time.
constexpr int kGuardSeconds = 30;

// A client that sends exactly the bytes a test gives, on its own socket.
class RawClient {
 public:
  struct Reply {
    int status = 0;  // 0: the connection ended before a whole reply
    std::string head;
    std::string body;
  };

  // `receive_buffer` > 0 shrinks the socket's receive buffer (before it
  // connects, so that the kernel does not grow it).
  explicit RawClient(int port, int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval guard = {kGuardSeconds, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &guard, sizeof guard);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &guard, sizeof guard);
    if (receive_buffer > 0) setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }
  int fd() const { return fd_; }

  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // One reply: its head, then Content-Length bytes of body.
  Reply Read() {
    Reply r;
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return r;
    }
    r.head = buf_.substr(0, end + 4);
    size_t length = 0;
    const std::string lower = ToLower(r.head);
    if (const size_t at = lower.find("\r\ncontent-length:"); at != std::string::npos) {
      length = std::stoul(r.head.substr(at + 17));
    }
    while (buf_.size() < end + 4 + length) {
      if (!Fill()) return r;
    }
    r.body = buf_.substr(end + 4, length);
    buf_.erase(0, end + 4 + length);
    if (r.head.starts_with("HTTP/1.")) r.status = std::stoi(r.head.substr(9, 3));
    return r;
  }

  // Reads until the server ends the connection: true when it closed or
  // reset it, false if the guard ran out first. `*got` counts the bytes.
  bool ReadsToEnd(size_t* got = nullptr) {
    size_t total = buf_.size();
    buf_.clear();
    for (;;) {
      char chunk[1 << 16];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n > 0) {
        total += static_cast<size_t>(n);
        continue;
      }
      if (got != nullptr) *got = total;
      return n == 0 || errno == ECONNRESET;
    }
  }

  // True while the server has neither answered nor closed.
  bool Silent() const {
    pollfd p = {fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
  }

 private:
  bool Fill() {
    char chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buf_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string buf_;
};

class HttpAbuseTest : public ::testing::Test {
 protected:
  void Start(HttpLimits limits = {}) {
    HttpOptions o;
    o.port = 0;
    o.token = kToken;
    o.limits = limits;
    server_ = std::make_unique<HttpServer>(o, &source_);
    Status s = server_->Start();
    ASSERT_TRUE(s.ok()) << s;
  }

  std::unique_ptr<httplib::Client> Client() {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    c->set_connection_timeout(std::chrono::seconds(kGuardSeconds));
    c->set_read_timeout(std::chrono::seconds(kGuardSeconds));
    c->set_write_timeout(std::chrono::seconds(kGuardSeconds));
    return c;
  }

  // The status of a GET on a new connection; 0 if there was no reply.
  int Get(const std::string& path) {
    auto res = Client()->Get(path.c_str());
    return res ? res->status : 0;
  }

  // The reply to `request`, sent whole on a new connection.
  RawClient::Reply Exchange(std::string_view request) {
    RawClient c(server_->port());
    EXPECT_TRUE(c.connected());
    c.Send(request);
    return c.Read();
  }

  FakeSource source_;
  std::unique_ptr<HttpServer> server_;
};

std::string Post(std::string_view target, std::string_view extra_headers, std::string_view body) {
  return StrCat("POST ", target, " HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ", kToken, "\r\n", extra_headers,
                "Content-Length: ", body.size(), "\r\n\r\n", body);
}

TEST_F(HttpAbuseTest, AnOversizedBodyIs413AndTheServerKeepsAnswering) {
  HttpLimits limits;
  Start(limits);
  const std::string body(limits.max_body_bytes + 1, 'a');
  httplib::Headers auth = {{"Authorization", StrCat("Bearer ", kToken)}};
  auto res = Client()->Post("/api/v1/pause", auth, body, "application/x-www-form-urlencoded");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 413);
  EXPECT_THAT(res->body, HasSubstr(StrCat("at most ", limits.max_body_bytes)));
  EXPECT_THAT(source_.calls(), IsEmpty());
  EXPECT_EQ(Get("/healthz"), 200);

  // A body of exactly the limit is taken.
  const std::string full = StrCat("why=", std::string(limits.max_body_bytes - 4, 'b'));
  res = Client()->Post("/api/v1/pause", auth, full, "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  ASSERT_EQ(source_.calls().size(), 1u);
  EXPECT_EQ(source_.calls()[0].params.at("why").size(), limits.max_body_bytes - 4);
}

TEST_F(HttpAbuseTest, AnAnnouncedOversizedBodyIsRefusedBeforeItIsSent) {
  Start();
  for (const char* expect : {"", "Expect: 100-continue\r\n"}) {
    SCOPED_TRACE(expect);
    RawClient c(server_->port());
    // The client sends the head only: the refusal cannot wait for the body.
    ASSERT_TRUE(c.Send(StrCat("POST /api/v1/pause HTTP/1.1\r\nHost: t\r\n", expect,
                              "Content-Length: 99999999999\r\n\r\n")));
    const RawClient::Reply r = c.Read();
    EXPECT_EQ(r.status, 413);
    EXPECT_THAT(r.head, HasSubstr("Connection: close"));
    EXPECT_TRUE(c.ReadsToEnd());
  }
  EXPECT_THAT(source_.calls(), IsEmpty());
}

TEST_F(HttpAbuseTest, ChunkedBodiesAreRefusedWith411) {
  Start();
  const std::string chunk(200'000, 'c');  // larger than any body allowed
  const RawClient::Reply r = Exchange(StrCat("POST /api/v1/pause HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ",
                                             kToken, "\r\nTransfer-Encoding: chunked\r\n\r\n30d40\r\n", chunk,
                                             "\r\n0\r\n\r\n"));
  EXPECT_EQ(r.status, 411);
  EXPECT_THAT(source_.calls(), IsEmpty());
  EXPECT_EQ(Get("/healthz"), 200);
}

TEST_F(HttpAbuseTest, APostWithoutContentLengthHasNoBody) {
  Start();
  RawClient c(server_->port());
  // The connection stays open: the server must not wait for it to close.
  ASSERT_TRUE(c.Send(StrCat("POST /api/v1/loop HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ", kToken, "\r\n\r\n")));
  EXPECT_EQ(c.Read().status, 200);
  ASSERT_EQ(source_.calls().size(), 1u);
  EXPECT_EQ(source_.calls()[0].name, "loop");
}

TEST_F(HttpAbuseTest, ExpectContinueIsAnsweredThenTheBodyRead) {
  Start();
  RawClient c(server_->port());
  ASSERT_TRUE(c.Send(StrCat("POST /api/v1/interrupt HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ", kToken,
                            "\r\nContent-Type: application/x-www-form-urlencoded\r\nExpect: 100-continue\r\n",
                            "Content-Length: 9\r\n\r\n")));
  EXPECT_EQ(c.Read().status, 100);
  ASSERT_TRUE(c.Send("node=gpu1"));
  EXPECT_EQ(c.Read().status, 200);
  ASSERT_EQ(source_.calls().size(), 1u);
  EXPECT_EQ(source_.calls()[0].params.at("node"), "gpu1");
}

TEST_F(HttpAbuseTest, MalformedHeadsAreRefused) {
  Start();
  struct Case {
    std::string name;
    std::string request;
    int status;
  };
  const std::string get = "GET /status HTTP/1.1\r\nHost: t\r\n";
  const std::vector<Case> cases = {
      {"no colon", get + "badheader\r\n\r\n", 400},
      {"space before colon", get + "X-A : 1\r\n\r\n", 400},
      {"empty name", get + ": 1\r\n\r\n", 400},
      {"NUL in a value", get + std::string("X-A: a\0b\r\n\r\n", 12), 400},
      {"bare CR in a value", get + "X-A: a\rb\r\n\r\n", 400},
      {"folded line", get + "X-A: a\r\n  b\r\n\r\n", 400},
      {"bare LF", "GET /status HTTP/1.1\nHost: t\n\n", 400},
      {"garbage request line", "GARBAGE\r\n\r\n", 400},
      {"two spaces", "GET  /status HTTP/1.1\r\n\r\n", 400},
      {"no version", "GET /status\r\n\r\n", 400},
      {"space in target", "GET /sta tus HTTP/1.1\r\n\r\n", 400},
      {"control byte in target", "GET /st\x01us HTTP/1.1\r\n\r\n", 400},
      {"bad method", "G(T /status HTTP/1.1\r\n\r\n", 400},
      {"HTTP/2.0", "GET /status HTTP/2.0\r\n\r\n", 505},
      {"lower-case version", "GET /status http/1.1\r\n\r\n", 400},
      {"Content-Length not a number", get + "Content-Length: abc\r\n\r\n", 400},
      {"negative Content-Length", get + "Content-Length: -5\r\n\r\n", 400},
      {"Content-Length twice", get + "Content-Length: 1\r\nContent-Length: 1\r\n\r\nx", 400},
      {"Content-Length and Transfer-Encoding", get + "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"unknown expectation", get + "Expect: magic\r\n\r\n", 417},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    RawClient client(server_->port());
    ASSERT_TRUE(client.connected());
    client.Send(c.request);
    const RawClient::Reply r = client.Read();
    EXPECT_EQ(r.status, c.status) << r.head;
    EXPECT_THAT(r.head, HasSubstr("Connection: close"));
    EXPECT_TRUE(client.ReadsToEnd());  // and the server closes
  }
  EXPECT_EQ(Get("/healthz"), 200);
}

TEST_F(HttpAbuseTest, OversizedHeadsAre431Or414) {
  HttpLimits limits;
  Start(limits);
  std::string many = "GET /status HTTP/1.1\r\n";
  for (int i = 0; i <= limits.max_headers; ++i) StrAppend(&many, "X-", i, ": v\r\n");
  many += "\r\n";
  std::string endless = "GET /status HTTP/1.1\r\n";
  while (endless.size() <= limits.max_head_bytes) endless += "X-Pad: 0123456789abcdef0123456789abcdef\r\n";
  struct Case {
    std::string name;
    std::string request;
    int status;
  };
  const std::vector<Case> cases = {
      {"too many fields", many, 431},
      {"one long field", StrCat("GET /status HTTP/1.1\r\nX-Big: ", std::string(limits.max_head_bytes, 'x'), "\r\n\r\n"),
       431},
      // Never ends: refused once the head passes the limit, not when it ends.
      {"a head without end", endless, 431},
      {"long target", StrCat("GET /status?", std::string(9000, 'q'), " HTTP/1.1\r\n\r\n"), 414},
      {"a request line without end", std::string(limits.max_head_bytes + 10, 'G'), 414},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const RawClient::Reply r = Exchange(c.request);
    EXPECT_EQ(r.status, c.status) << r.head << r.body;
  }
  EXPECT_EQ(Get("/healthz"), 200);
}

TEST_F(HttpAbuseTest, PipelinedRequestsUpToThePerConnectionLimit) {
  HttpLimits limits;
  limits.max_requests_per_connection = 3;
  Start(limits);
  RawClient c(server_->port());
  std::string four;
  for (int i = 0; i < 4; ++i) four += "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_TRUE(c.Send(four));  // all at once: the server must keep what follows each request
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    const RawClient::Reply r = c.Read();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "ok\n");
    if (i == 2) {
      EXPECT_THAT(r.head, HasSubstr("Connection: close"));
    }
  }
  EXPECT_TRUE(c.ReadsToEnd());  // the fourth is not served on this connection
}

TEST_F(HttpAbuseTest, ASlowClientHoldsOnlyItsOwnWorker) {
  HttpLimits limits;
  limits.request_timeout = std::chrono::hours(1);  // it is never cut off during the test
  Start(limits);
  RawClient slow(server_->port());
  ASSERT_TRUE(slow.Send("GET /status HTTP/1.1\r\nHost: t\r\nX-Half: "));
  for (int i = 0; i < 20; ++i) EXPECT_EQ(Get("/status"), 200);
  EXPECT_TRUE(slow.Silent());  // still waited for, unanswered
}

TEST_F(HttpAbuseTest, SlowClientsAreCutOffAndTheOthersServedAfterThem) {
  HttpLimits limits;
  limits.workers = 1;  // the slow client holds the only worker
  limits.request_timeout = std::chrono::milliseconds(300);
  Start(limits);
  struct Case {
    std::string name;
    std::string sent;
    int status;  // what the slow client gets; 0: closed without a reply
  };
  const std::string full = Post("/api/v1/pause", "", std::string(40, 'x'));
  const std::vector<Case> cases = {
      {"half a head", "GET /status HTTP/1.1\r\nHost: t\r\nX-Half: ", 408},
      {"half a body", full.substr(0, full.size() - 20), 408},
      {"nothing at all", "", 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    RawClient slow(server_->port());
    ASSERT_TRUE(slow.Send(c.sent));
    EXPECT_EQ(Get("/status"), 200);  // served once the slow client is cut off
    const RawClient::Reply r = slow.Read();
    EXPECT_EQ(r.status, c.status) << r.head;
    EXPECT_TRUE(slow.ReadsToEnd());
  }
  EXPECT_THAT(source_.calls(), IsEmpty());
}

TEST_F(HttpAbuseTest, AClientThatDoesNotReadItsReplyIsReset) {
  HttpLimits limits;
  limits.workers = 1;
  limits.reply_timeout = std::chrono::milliseconds(300);
  Start(limits);
  // Far more than the socket buffers on both sides hold.
  const size_t size = 32 << 20;
  source_.SetMetrics(std::string(size, 'm'));
  RawClient stalled(server_->port(), /*receive_buffer=*/4096);
  ASSERT_TRUE(stalled.Send("GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n"));
  EXPECT_EQ(Get("/healthz"), 200);  // served once the stalled client is reset
  // The reset arrives (POLLHUP/POLLERR) although unread data waits.
  pollfd p = {stalled.fd(), 0, 0};
  ASSERT_EQ(::poll(&p, 1, kGuardSeconds * 1000), 1);
  size_t got = 0;
  EXPECT_TRUE(stalled.ReadsToEnd(&got));
  EXPECT_LT(got, size);
}

TEST_F(HttpAbuseTest, TwoHundredConcurrentClientsAreAllAnswered) {
  Start();
  constexpr int kClients = 200;
  std::vector<int> status(kClients, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([this, i, &status] { status[i] = Get(i % 2 == 0 ? "/status" : "/metrics"); });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(status, std::vector<int>(kClients, 200));
  EXPECT_EQ(Get("/healthz"), 200);
}

TEST_F(HttpAbuseTest, IdleConnectionsBeyondThePoolDoNotStarveAClient) {
  HttpLimits limits;
  limits.workers = 2;
  limits.max_waiting = 2;
  limits.request_timeout = std::chrono::milliseconds(300);
  Start(limits);
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 20; ++i) {
    idle.push_back(std::make_unique<RawClient>(server_->port()));
    ASSERT_TRUE(idle.back()->connected());
  }
  EXPECT_EQ(Get("/status"), 200);
  for (auto& c : idle) {
    EXPECT_EQ(c->Read().status, 0);  // closed without a word: it said nothing
    EXPECT_TRUE(c->ReadsToEnd());
  }
  EXPECT_EQ(Get("/healthz"), 200);
}

TEST_F(HttpAbuseTest, WrongTokensNeverRunACommand) {
  Start();
  struct Case {
    std::string name;
    std::string request;
    int status;
  };
  const std::string line = "POST /api/v1/pause HTTP/1.1\r\nHost: t\r\n";
  const std::vector<Case> cases = {
      {"no header", line + "\r\n", 401},
      {"basic scheme", StrCat(line, "Authorization: Basic ", kToken, "\r\n\r\n"), 401},
      {"wrong token", line + "Authorization: Bearer not-the-token-at-all\r\n\r\n", 403},
      {"the token and more", StrCat(line, "Authorization: Bearer ", kToken, " x\r\n\r\n"), 403},
      {"a prefix", StrCat(line, "Authorization: Bearer ", std::string_view(kToken).substr(0, 10), "\r\n\r\n"), 403},
      {"in the query", StrCat("POST /api/v1/pause?token=", kToken, " HTTP/1.1\r\nHost: t\r\n\r\n"), 401},
      {"in the body",
       StrCat(line, "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ", 6 + std::strlen(kToken),
              "\r\n\r\ntoken=", kToken),
       401},
      {"a long wrong token", StrCat(line, "Authorization: Bearer ", std::string(8000, 'z'), "\r\n\r\n"), 403},
      {"a token too long to read", StrCat(line, "Authorization: Bearer ", std::string(20000, 'z'), "\r\n\r\n"), 431},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const RawClient::Reply r = Exchange(c.request);
    EXPECT_EQ(r.status, c.status) << r.head << r.body;
    EXPECT_THAT(r.body, Not(HasSubstr(kToken)));
    if (c.status == 401) {
      EXPECT_THAT(r.head, HasSubstr("WWW-Authenticate: Bearer"));
    }
  }
  EXPECT_THAT(source_.calls(), IsEmpty());
}

TEST_F(HttpAbuseTest, StopDoesNotWaitForASlowClient) {
  HttpLimits limits;
  limits.request_timeout = std::chrono::hours(1);
  Start(limits);
  RawClient slow(server_->port());
  ASSERT_TRUE(slow.Send("GET /status HTTP/1.1\r\n"));
  EXPECT_EQ(Get("/healthz"), 200);  // the slow client has a worker by now
  server_->Stop();                  // returns: the test would hang otherwise
  EXPECT_TRUE(slow.ReadsToEnd());
}

TEST(CheckRequestHeadTest, AGoodHeadIsPassedOnWithItsBodyLength) {
  HttpLimits limits;
  CheckedHead h = CheckRequestHead("POST /x?a=1 HTTP/1.1\r\nHost: t\r\nContent-Length: 12\r\n\r\n", limits);
  EXPECT_EQ(h.refuse, 0) << h.why;
  EXPECT_EQ(h.body_bytes, 12u);
  EXPECT_EQ(h.head, "POST /x?a=1 HTTP/1.1\r\nHost: t\r\nContent-Length: 12\r\n\r\n");
  EXPECT_FALSE(h.expect_continue);
}

TEST(CheckRequestHeadTest, ExpectIsAnsweredHereAndAMissingLengthIsZero) {
  HttpLimits limits;
  CheckedHead h = CheckRequestHead("POST /x HTTP/1.0\r\nexpect: 100-Continue\r\nX-A:\tb \r\n\r\n", limits);
  EXPECT_EQ(h.refuse, 0) << h.why;
  EXPECT_TRUE(h.expect_continue);
  EXPECT_EQ(h.body_bytes, 0u);
  EXPECT_EQ(h.head, "POST /x HTTP/1.0\r\nX-A:\tb \r\nContent-Length: 0\r\n\r\n");
}

TEST(CheckRequestHeadTest, ObsTextInAValueIsKept) {
  HttpLimits limits;
  EXPECT_EQ(CheckRequestHead("GET / HTTP/1.1\r\nX-Name: caf\xc3\xa9\r\n\r\n", limits).refuse, 0);
}

// Found by fuzzing (fuzz/http_fuzz.cc): the refusal repeated the field's
// name, so whatever a client put there came back in the reply.
TEST(CheckRequestHeadTest, ARefusalNamesAFieldByNumberNotByWhatWasSent) {
  HttpLimits limits;
  CheckedHead h = CheckRequestHead("GET / HTTP/1.1\r\nHost: t\r\nX-secret-abc: a\x01" "b\r\n\r\n", limits);
  EXPECT_EQ(h.refuse, 400);
  EXPECT_EQ(h.why, "header field 2 holds a control character");
}

}  // namespace
}  // namespace tide::controller

#include "backends/kubernetes/kube_http.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "backends/kubernetes/kube_fake_transport_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::backends::kube {
namespace {

using testing::Fixture;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Msg(const Status& s) { return std::string(Message(s)); }

struct MapCase {
  std::string name;
  int status;
  std::string body;
  absl::StatusCode code;
  std::string want;
};

class StatusFromReplyTest : public ::testing::TestWithParam<MapCase> {};

TEST_P(StatusFromReplyTest, Maps) {
  const MapCase& c = GetParam();
  Status s = StatusFromReply(Reply{c.status, c.body}, "pod default/p1");
  EXPECT_EQ(s.code(), c.code) << s;
  EXPECT_THAT(Msg(s), HasSubstr("pod default/p1: HTTP "));
  EXPECT_THAT(Msg(s), HasSubstr(c.want));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, StatusFromReplyTest,
    ::testing::Values(
        MapCase{"NotFound", 404, Fixture("error_404.json"), absl::StatusCode::kNotFound,
                "HTTP 404 Not Found (NotFound): pods \"nope\" not found"},
        MapCase{"AlreadyExists", 409, Fixture("error_409_exists.json"), absl::StatusCode::kAlreadyExists,
                "409 Conflict (AlreadyExists): nodes \"kwok-a100-0\" already exists"},
        MapCase{"Conflict", 409, R"({"kind":"Status","reason":"Conflict","message":"the object has been modified"})",
                absl::StatusCode::kAborted, "the object has been modified"},
        MapCase{"Gone", 410, Fixture("error_410_gone.json"), absl::StatusCode::kOutOfRange, "410 Gone (Expired)"},
        MapCase{"TooManyRequests", 429, Fixture("error_429_eviction.json"), absl::StatusCode::kResourceExhausted,
                "violate the pod's disruption budget"},
        MapCase{"ServerError", 500, Fixture("error_500.json"), absl::StatusCode::kUnavailable,
                "etcdserver: request timed out"},
        MapCase{"Unauthorized", 401, R"({"kind":"Status","message":"Unauthorized","reason":"Unauthorized"})",
                absl::StatusCode::kUnauthenticated, "401"},
        MapCase{"Forbidden", 403, R"({"kind":"Status","message":"nodes is forbidden","reason":"Forbidden"})",
                absl::StatusCode::kPermissionDenied, "nodes is forbidden"},
        MapCase{"Invalid", 422, R"({"kind":"Status","message":"spec.x: Invalid value","reason":"Invalid"})",
                absl::StatusCode::kInvalidArgument, "spec.x: Invalid value"},
        MapCase{"GarbageBody", 502, "<html>bad gateway</html>", absl::StatusCode::kUnavailable,
                "502 Bad Gateway: <html>bad gateway</html>"}),
    [](const auto& info) { return info.param.name; });

TEST(StatusFromReplyTest, SuccessIsOk) {
  EXPECT_TRUE(StatusFromReply(Reply{201, "{}"}, "x").ok());
  EXPECT_TRUE(IsGone(StatusFromReply(Reply{410, ""}, "x")));
  EXPECT_FALSE(IsGone(StatusFromReply(Reply{404, ""}, "x")));
}

// A plain-HTTP server on loopback standing in for the API server.
class LoopbackServer {
 public:
  LoopbackServer() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LoopbackServer() {
    server_.stop();
    thread_.join();
  }
  httplib::Server& server() { return server_; }
  Connection Conn() const {
    Connection c;
    c.server = StrCat("http://127.0.0.1:", port_);
    c.source = "test";
    return c;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(HttpTransportTest, RequestSendsBodyTokenAndReturnsAnyStatus) {
  LoopbackServer srv;
  std::string seen_auth, seen_body, seen_type;
  srv.server().Post("/api/v1/nodes", [&](const httplib::Request& req, httplib::Response& res) {
    seen_auth = req.get_header_value("Authorization");
    seen_body = req.body;
    seen_type = req.get_header_value("Content-Type");
    res.status = 409;
    res.set_content(R"({"kind":"Status","reason":"AlreadyExists","message":"exists"})", "application/json");
  });
  const auto dir = std::filesystem::temp_directory_path() / "tide_kube_http_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "token") << "first\n";
  Connection c = srv.Conn();
  c.token_file = (dir / "token").string();
  auto t = HttpTransport::Create(c);
  ASSERT_TRUE(t.ok()) << t.status();
  auto r = (*t)->Request("POST", "/api/v1/nodes", R"({"a":1})", "application/json");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 409);
  EXPECT_EQ(seen_auth, "Bearer first");
  EXPECT_EQ(seen_body, R"({"a":1})");
  EXPECT_EQ(seen_type, "application/json");
  EXPECT_TRUE(absl::IsAlreadyExists(StatusFromReply(*r, "create node n")));
  // A rotated token is used on the next request.
  std::ofstream(dir / "token") << "second\n";
  ASSERT_TRUE((*t)->Request("POST", "/api/v1/nodes", "{}", "application/json").ok());
  EXPECT_EQ(seen_auth, "Bearer second");
  std::filesystem::remove_all(dir);
}

TEST(HttpTransportTest, WatchSplitsChunksIntoLines) {
  LoopbackServer srv;
  srv.server().Get("/api/v1/pods", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
      // Lines split across chunks, as a stream delivers them.
      for (std::string_view part : {"{\"type\":\"ADD", "ED\"}\n{\"type\":\"BOOK", "MARK\"}\r\n\n", "{\"type\":\"X\"}"}) {
        sink.write(part.data(), part.size());
      }
      sink.done();
      return true;
    });
  });
  auto t = HttpTransport::Create(srv.Conn());
  ASSERT_TRUE(t.ok()) << t.status();
  std::vector<std::string> lines;
  bool opened = false;
  Status s = (*t)->Watch("/api/v1/pods?watch=1", [&](std::string_view l) { lines.emplace_back(l); return true; }, {},
                         [&] { opened = true; });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(opened);
  EXPECT_THAT(lines, ElementsAre(R"({"type":"ADDED"})", R"({"type":"BOOKMARK"})", R"({"type":"X"})"));

  // The handler ends the watch early: OK.
  lines.clear();
  s = (*t)->Watch("/api/v1/pods?watch=1", [&](std::string_view l) { lines.emplace_back(l); return false; });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(lines.size(), 1u);
}

TEST(HttpTransportTest, WatchErrorStatusMapped) {
  LoopbackServer srv;
  srv.server().Get("/api/v1/nodes", [](const httplib::Request&, httplib::Response& res) {
    res.status = 410;
    res.set_content(Fixture("error_410_gone.json"), "application/json");
  });
  auto t = HttpTransport::Create(srv.Conn());
  ASSERT_TRUE(t.ok());
  Status s = (*t)->Watch("/api/v1/nodes?watch=1", [](std::string_view) { return true; });
  EXPECT_TRUE(IsGone(s)) << s;
  EXPECT_THAT(Msg(s), HasSubstr("watch /api/v1/nodes?watch=1: HTTP 410"));
}

// A server that answers a byte at a time, each well within the read
// timeout: the whole call is cut at its limit all the same.
TEST(HttpTransportTest, ATrickledReplyIsCutAtTheCallsDeadline) {
  LoopbackServer srv;
  srv.server().Get("/api/v1/nodes", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
      for (int i = 0; i < 600; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (!sink.write(" ", 1)) return false;  // the client hung up
      }
      sink.done();
      return true;
    });
  });
  HttpOptions o;
  o.read_timeout = Seconds(1);
  auto t = HttpTransport::Create(srv.Conn(), o);
  ASSERT_TRUE(t.ok()) << t.status();
  auto r = (*t)->Request("GET", "/api/v1/nodes");
  EXPECT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
  EXPECT_THAT(Msg(r.status()), HasSubstr("GET /api/v1/nodes: no whole reply within 1s"));
}

TEST(HttpTransportTest, NoServerIsUnavailable) {
  // A loopback port that was free a moment ago and has no listener.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  const int port = ntohs(addr.sin_port);
  Connection c;
  c.server = StrCat("http://127.0.0.1:", port);
  auto t = HttpTransport::Create(c);
  ASSERT_TRUE(t.ok());
  auto r = (*t)->Request("GET", "/version");
  EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  EXPECT_THAT(Msg(r.status()), HasSubstr(c.server));
}

TEST(HttpTransportTest, BadConnectionsRejected) {
  Connection c;
  c.source = "kubeconfig k";
  c.server = "https://h:99999";
  EXPECT_THAT(Msg(HttpTransport::Create(c).status()), HasSubstr("kubeconfig k: server 'https://h:99999': bad port"));
  c.server = "https://h";
  c.client_cert_data = "not pem";
  c.client_key_data = "not pem";
  EXPECT_THAT(Msg(HttpTransport::Create(c).status()), HasSubstr("client-certificate: not a PEM certificate"));
  c.client_cert_data.clear();
  c.client_key_data.clear();
  c.ca_data = "junk";
  EXPECT_THAT(Msg(HttpTransport::Create(c).status()), HasSubstr("certificate-authority-data: not a PEM certificate"));
}

}  // namespace
}  // namespace tide::backends::kube

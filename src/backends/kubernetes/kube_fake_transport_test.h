// A Transport that replays queued replies and watch streams, and records
// what was asked: the Kubernetes client's tests run on recorded API replies
// (testdata/) without a server.
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_FAKE_TRANSPORT_TEST_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_FAKE_TRANSPORT_TEST_H_

#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/kubernetes/kube_http.h"
#include "core/strings.h"
#include "gtest/gtest.h"

namespace tide::backends::kube::testing {

inline std::string Fixture(std::string_view name) {
  const std::string path = StrCat(TIDE_SOURCE_DIR, "/src/backends/kubernetes/testdata/", name);
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The lines of a .jsonl fixture.
inline std::vector<std::string> FixtureLines(std::string_view name) {
  std::vector<std::string> out;
  std::stringstream ss(Fixture(name));
  for (std::string line; std::getline(ss, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

struct Call {
  std::string method, path, body, content_type;
};

// One watch: the server answers `http_status` (with `error_body` when not
// 200), sends `lines`, then ends with `end` (OK: the server's timeout).
struct WatchScript {
  WatchScript(std::vector<std::string> l = {}, Status e = OkStatus()) : lines(std::move(l)), end(std::move(e)) {}
  static WatchScript Http(int status, std::string body) {
    WatchScript w;
    w.http_status = status;
    w.error_body = std::move(body);
    return w;
  }
  std::vector<std::string> lines;
  Status end = OkStatus();
  int http_status = 200;
  std::string error_body;
};

class FakeTransport final : public Transport {
 public:
  std::deque<Result<Reply>> replies;
  std::deque<WatchScript> watches;
  std::vector<Call> calls;
  std::vector<std::string> watch_paths;

  void Reply200(std::string body) { replies.push_back(Reply{200, std::move(body)}); }

  Result<Reply> Request(std::string_view method, std::string_view path, std::string_view body,
                        std::string_view content_type) override {
    calls.push_back(Call{std::string(method), std::string(path), std::string(body), std::string(content_type)});
    if (replies.empty()) return absl::UnavailableError(StrCat("fake: no reply queued for ", method, " ", path));
    Result<Reply> r = std::move(replies.front());
    replies.pop_front();
    return r;
  }

  Status Watch(std::string_view path, const LineHandler& on_line, std::stop_token,
               const std::function<void()>& on_open) override {
    watch_paths.emplace_back(path);
    if (watches.empty()) return absl::UnavailableError(StrCat("fake: no watch queued for ", path));
    WatchScript w = std::move(watches.front());
    watches.pop_front();
    if (w.http_status != 200) return StatusFromReply(Reply{w.http_status, w.error_body}, StrCat("watch ", path));
    if (on_open) on_open();
    for (const std::string& line : w.lines) {
      if (!on_line(line)) return OkStatus();
    }
    return w.end;
  }
};

}  // namespace tide::backends::kube::testing

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_FAKE_TRANSPORT_TEST_H_

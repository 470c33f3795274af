// fake_kube_proxy --port P --upstream https://HOST:PORT --ca FILE --mode-file F:
// a plain-HTTP stand-in for the API server's address, for
// tests/integration/k8s/bad_input.sh. It listens on 127.0.0.1 and, for each
// request, reads F (a missing or empty file means "pass"):
//
//   pass     forwards the request to the upstream API server (HTTPS, checked
//            against FILE; the client's Authorization header goes along),
//            streaming watches as they come
//   500      answers 500 with a Kubernetes Status object
//   garbage  answers 200 with a body that is not JSON
//
// A watch it streams ends as soon as F says anything but "pass", so the
// client's next list or watch meets the new mode. Prints
// "listening on 127.0.0.1:<port>" (port 0: any); exits 0 on SIGTERM or SIGINT.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "serve_on_loopback.h"

namespace {

struct Args {
  int port = -1;
  std::string upstream, ca, mode_file;
  const std::atomic<bool>* stopping = nullptr;  // set when the proxy stops: streams end
};

std::string Mode(const std::string& file) {
  std::ifstream in(file);
  std::string word;
  in >> word;
  return word.empty() ? "pass" : word;
}

bool IsWatch(const httplib::Request& req) {
  auto it = req.params.find("watch");
  return it != req.params.end() && (it->second == "true" || it->second == "1");
}

httplib::Headers ForwardedHeaders(const httplib::Request& req) {
  httplib::Headers h;
  for (const char* name : {"Authorization", "Content-Type", "Accept"}) {
    if (req.has_header(name)) h.emplace(name, req.get_header_value(name));
  }
  return h;
}

httplib::Client Upstream(const Args& a) {
  httplib::Client c(a.upstream);
  c.set_ca_cert_path(a.ca);
  c.enable_server_certificate_verification(true);
  c.set_connection_timeout(5);
  c.set_read_timeout(600);
  return c;
}

// The request as the upstream answers it, status, type and body copied.
void Forward(const Args& a, const httplib::Request& req, httplib::Response& res) {
  httplib::Client c = Upstream(a);
  httplib::Request up;
  up.method = req.method;
  up.path = req.target;
  up.headers = ForwardedHeaders(req);
  up.body = req.body;
  httplib::Response got;
  httplib::Error err = httplib::Error::Success;
  if (!c.send(up, got, err)) {
    res.status = 502;
    res.set_content("fake_kube_proxy: upstream: " + httplib::to_string(err), "text/plain");
    return;
  }
  res.status = got.status;
  res.set_content(got.body, got.get_header_value("Content-Type").empty() ? "application/json"
                                                                          : got.get_header_value("Content-Type"));
}

// A watch, streamed chunk by chunk until it ends or the mode changes. The
// upstream request runs on its own thread into a buffer; this one passes
// the buffer on and checks the mode at least every 100 ms, so that a quiet
// watch ends promptly too.
void ForwardWatch(const Args& a, const httplib::Request& req, httplib::Response& res) {
  const std::string target = req.target;
  const httplib::Headers headers = ForwardedHeaders(req);
  res.set_chunked_content_provider("application/json", [a, target, headers](size_t, httplib::DataSink& sink) {
    httplib::Client c = Upstream(a);
    std::mutex mu;
    std::condition_variable cv;
    std::string buffer;
    bool ended = false;
    std::thread reader([&] {
      c.Get(target, headers, [&](const char* data, size_t n) {
        std::lock_guard lock(mu);
        buffer.append(data, n);
        cv.notify_one();
        return true;
      });
      std::lock_guard lock(mu);
      ended = true;
      cv.notify_one();
    });
    bool open = true;
    while (open) {
      std::string out;
      {
        std::unique_lock lock(mu);
        cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return ended || !buffer.empty(); });
        out.swap(buffer);
        open = !ended;
      }
      if (!out.empty() && !sink.write(out.data(), out.size())) open = false;
      if (Mode(a.mode_file) != "pass" || *a.stopping || !sink.is_writable()) open = false;
    }
    c.stop();
    reader.join();
    sink.done();
    return true;
  });
}

void Serve(const Args& a, const httplib::Request& req, httplib::Response& res) {
  const std::string mode = Mode(a.mode_file);
  if (mode == "500") {
    res.status = 500;
    res.set_content(
        R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"fake proxy: internal error","code":500})",
        "application/json");
  } else if (mode == "garbage") {
    res.status = 200;
    res.set_content(R"({"kind":"PodList","items":[{"metadata":{"name":)" "\x01garbage", "application/json");
  } else if (IsWatch(req)) {
    ForwardWatch(a, req, res);
  } else {
    Forward(a, req, res);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--port") a.port = std::atoi(argv[i + 1]);
    if (flag == "--upstream") a.upstream = argv[i + 1];
    if (flag == "--ca") a.ca = argv[i + 1];
    if (flag == "--mode-file") a.mode_file = argv[i + 1];
  }
  if (a.port < 0 || a.upstream.empty() || a.ca.empty() || a.mode_file.empty() || argc != 9) {
    std::fprintf(stderr, "usage: fake_kube_proxy --port P --upstream https://HOST:PORT --ca FILE --mode-file F\n");
    return 2;
  }
  std::atomic<bool> stopping{false};
  a.stopping = &stopping;
  httplib::Server server;
  auto handler = [&a](const httplib::Request& req, httplib::Response& res) { Serve(a, req, res); };
  server.Get(".*", handler);
  server.Post(".*", handler);
  server.Put(".*", handler);
  server.Patch(".*", handler);
  server.Delete(".*", handler);
  server.set_read_timeout(600);
  server.set_write_timeout(600);
  return tide::testing::ServeOnLoopback(server, a.port, "fake_kube_proxy", [&] { stopping = true; });
}

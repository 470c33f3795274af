// ServeOnLoopback: how the integration tests' stand-in servers
// (fake_dcgm_exporter, k8s/fake_kube_proxy) run: on 127.0.0.1 only, port 0
// meaning any; "listening on 127.0.0.1:<port>" on stdout once bound; until
// SIGTERM or SIGINT, then a clean stop. Call it before any thread starts
// (the server's threads inherit the blocked signal mask).
#ifndef TIDE_TESTS_INTEGRATION_SERVE_ON_LOOPBACK_H_
#define TIDE_TESTS_INTEGRATION_SERVE_ON_LOOPBACK_H_

#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

namespace tide::testing {

// Returns the exit status: 0 after a signal, 1 if the port cannot be bound.
// `before_stop` runs after the signal, before the server stops (to end
// long-running responses).
inline int ServeOnLoopback(httplib::Server& server, int port, const char* name,
                           const std::function<void()>& before_stop = {}) {
  // The signals are taken by sigwait below, not by a handler; blocked here,
  // before the server's threads start, so that they inherit the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  const int bound =
      port == 0 ? server.bind_to_any_port("127.0.0.1") : (server.bind_to_port("127.0.0.1", port) ? port : -1);
  if (bound <= 0) {
    std::fprintf(stderr, "%s: cannot listen on 127.0.0.1:%d\n", name, port);
    return 1;
  }
  std::printf("listening on 127.0.0.1:%d\n", bound);
  std::fflush(stdout);
  std::atomic<bool> done{false};
  std::thread serve([&] {
    server.listen_after_bind();
    done = true;
    kill(getpid(), SIGTERM);  // wakes sigwait if the server stops by itself
  });
  int sig = 0;
  sigwait(&stop_signals, &sig);
  if (before_stop) before_stop();
  while (!done && !server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!done) server.stop();
  serve.join();
  return 0;
}

}  // namespace tide::testing

#endif  // TIDE_TESTS_INTEGRATION_SERVE_ON_LOOPBACK_H_

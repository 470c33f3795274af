// For the integration binaries that run against the Kubernetes test bed
// (tests/integration/k8s/run_gtest.sh starts it): its env file, and a bounded
// wait for the server.
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_TESTBED_TEST_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_TESTBED_TEST_H_

#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>

namespace tide::backends::kube::testing {

// KEY=VALUE lines of the test bed's env file (scripts/k8s-testbed start).
inline std::map<std::string, std::string> ReadTestBedEnv(const std::string& path) {
  std::map<std::string, std::string> env;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

// Polls `ok` until it holds or `seconds` pass (a bound on waiting for the
// server, never an assertion on how long anything took).
inline bool WaitFor(int seconds, const std::function<bool()>& ok) {
  for (int i = 0; i < seconds * 10; ++i) {
    if (ok()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return ok();
}

}  // namespace tide::backends::kube::testing

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_TESTBED_TEST_H_

// A StatusSource for the HTTP server's tests: fixed texts, and a record of
// the commands it was given.
#ifndef TIDE_CONTROLLER_HTTP_FAKES_TEST_H_
#define TIDE_CONTROLLER_HTTP_FAKES_TEST_H_

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/http_server.h"
#include "core/status.h"
#include "core/strings.h"

namespace tide::controller::testing {

// Records Command calls; the next Command may be made to fail.
class FakeSource final : public StatusSource {
 public:
  struct Call {
    std::string name;
    std::map<std::string, std::string> params;
  };
  std::string MetricsText() override {
    std::lock_guard<std::mutex> lock(mu_);
    return metrics_;
  }
  std::string StatusJson() override { return "{\"loops\": 3}\n"; }
  std::string ReportPage() override { return "<!DOCTYPE html><body data-source=\"/api/v1/report\"></body>"; }
  Result<std::string> ReportJson() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!report_error_.ok()) return report_error_;
    return std::string("{\"mode\": \"live\"}");
  }
  bool Healthy(std::string* why) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!unhealthy_.empty()) *why = unhealthy_;
    return unhealthy_.empty();
  }
  Result<std::string> Command(const std::string& name, const std::map<std::string, std::string>& params) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back({name, params});
    if (next_error_) {
      Status s = *next_error_;
      next_error_.reset();
      return s;
    }
    return StrCat("{\"done\": \"", name, "\"}\n");
  }

  void SetMetrics(std::string text) {
    std::lock_guard<std::mutex> lock(mu_);
    metrics_ = std::move(text);
  }
  void SetUnhealthy(std::string why) {
    std::lock_guard<std::mutex> lock(mu_);
    unhealthy_ = std::move(why);
  }
  void FailReport(Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    report_error_ = std::move(s);
  }
  void FailNext(Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    next_error_ = std::move(s);
  }
  std::vector<Call> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::string metrics_ = "# TYPE tide_up gauge\ntide_up 1\n";
  std::string unhealthy_;
  std::optional<Status> next_error_;
  Status report_error_ = OkStatus();
  std::vector<Call> calls_;
};

}  // namespace tide::controller::testing

#endif  // TIDE_CONTROLLER_HTTP_FAKES_TEST_H_

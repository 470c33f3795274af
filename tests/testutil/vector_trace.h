// A TraceReader over jobs held in memory, for tests.
#ifndef TIDE_TESTS_TESTUTIL_VECTOR_TRACE_H_
#define TIDE_TESTS_TESTUTIL_VECTOR_TRACE_H_

#include <vector>

#include "trace/reader.h"

namespace tide::testing {

class VectorTrace final : public trace::TraceReader {
 public:
  VectorTrace(std::vector<model::JobSpec> jobs, Timestamp start) : jobs_(std::move(jobs)), start_(start) {}
  Result<std::optional<model::JobSpec>> Next() override {
    if (next_ >= jobs_.size()) return std::optional<model::JobSpec>();
    return std::optional<model::JobSpec>(jobs_[next_++]);
  }
  Timestamp start() const override { return start_; }
  std::string Describe() const override { return "memory"; }

 private:
  std::vector<model::JobSpec> jobs_;
  size_t next_ = 0;
  Timestamp start_;
};

}  // namespace tide::testing

#endif  // TIDE_TESTS_TESTUTIL_VECTOR_TRACE_H_

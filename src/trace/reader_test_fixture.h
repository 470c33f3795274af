// The fixture the trace reader tests share: a one-pool spec, reader
// options, and traces written to the test's temporary directory.
#ifndef TIDE_TRACE_READER_TEST_FIXTURE_H_
#define TIDE_TRACE_READER_TEST_FIXTURE_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/strings.h"
#include "gtest/gtest.h"
#include "model/cluster.h"
#include "testutil/builders.h"
#include "trace/reader.h"

namespace tide::trace {

inline std::string Msg(const Status& s) { return std::string(Message(s)); }

// Writes `text` to a fresh file in the test temp dir and returns its path.
inline std::string WriteFile(const std::string& name, const std::string& text) {
  return tide::testing::WriteTextFile(StrCat(::testing::TempDir(), "/tide_reader_test_", name), text);
}

class TraceTest : public ::testing::Test {
 protected:
  TraceTest() : spec_(tide::testing::Spec({tide::testing::Pool("gpu", 8, model::Tier::kOnDemand, 100, 0, 50)})) {
    options_.start = tide::testing::kT0;
    options_.gpus_per_node = 8;
    options_.spec = &spec_;
  }

  Result<std::vector<model::JobSpec>> Read(const std::string& name, const std::string& text,
                                           std::string_view format = "auto") {
    TIDE_ASSIGN_OR_RETURN(auto reader, OpenTrace(WriteFile(name, text), format, options_));
    return ReadAll(*reader);
  }

  // The path a file named `name` is written to, for expected messages.
  static std::string PathOf(const std::string& name) { return StrCat(::testing::TempDir(), "/tide_reader_test_", name); }

  model::ClusterSpec spec_;
  TraceOptions options_;
};

}  // namespace tide::trace

#endif  // TIDE_TRACE_READER_TEST_FIXTURE_H_

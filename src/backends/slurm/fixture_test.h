// The Slurm replies captured from the 22.05.8 lab, for the backend's tests
// (testdata/: squeue_lab.json adds edited pending and multi-node jobs to the
// real running one).
#ifndef TIDE_BACKENDS_SLURM_FIXTURE_TEST_H_
#define TIDE_BACKENDS_SLURM_FIXTURE_TEST_H_

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "core/strings.h"
#include "gtest/gtest.h"

namespace tide::testing {

inline std::string Fixture(std::string_view name) {
  const std::string path = StrCat(TIDE_SOURCE_DIR, "/src/backends/slurm/testdata/", name);
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace tide::testing

#endif  // TIDE_BACKENDS_SLURM_FIXTURE_TEST_H_

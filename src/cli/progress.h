// Progress of long simulations on a terminal: simulated time, jobs done,
// events per second and an estimate of the time left, redrawn in place on
// standard error about twice a second. The CLI owns the clock; the
// simulators only store counters (sim::SimProgress).
#ifndef TIDE_CLI_PROGRESS_H_
#define TIDE_CLI_PROGRESS_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "core/time.h"
#include "sim/simulator.h"

namespace tide::cli {

// What one redraw says, from the counters of `n` simulators: e.g.
// "simulating 4 policies: 2026-01-08 13:20 UTC, jobs 2,108/4,216 (50%), 1.2M events/s, about 3s left".
// `elapsed_s` is wall time so far; `jobs_total` the workload's jobs.
std::string ProgressLine(const sim::SimProgress* progress, size_t n, int64_t jobs_total, double elapsed_s);

// auto: only when standard error is a terminal; always; never.
enum class ProgressMode { kAuto, kAlways, kNever };
bool ProgressWanted(ProgressMode mode);

class ProgressDisplay {
 public:
  // Starts redrawing `progress` (n of them) on `out` every `period_ms`.
  ProgressDisplay(std::ostream* out, const sim::SimProgress* progress, size_t n, int64_t jobs_total,
                  int period_ms = 500);
  ~ProgressDisplay();  // stops and clears the line
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

 private:
  void Loop();
  std::ostream* out_;
  const sim::SimProgress* progress_;
  size_t n_;
  int64_t jobs_total_;
  int period_ms_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool drawn_ = false;
  std::thread thread_;
};

}  // namespace tide::cli

#endif  // TIDE_CLI_PROGRESS_H_

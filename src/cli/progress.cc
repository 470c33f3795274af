#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/strings.h"
#include "report/report.h"

namespace tide::cli {

namespace {

std::string Rate(double per_s) {
  if (per_s >= 1e6) return fmt::format("{:.1f}M", per_s / 1e6);
  if (per_s >= 1e3) return fmt::format("{:.1f}k", per_s / 1e3);
  return fmt::format("{:.0f}", per_s);
}

}  // namespace

std::string ProgressLine(const sim::SimProgress* progress, size_t n, int64_t jobs_total, double elapsed_s) {
  int64_t now = INT64_MAX, done = 0, events = 0;
  size_t running = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto& p = progress[i];
    events += p.events.load(std::memory_order_relaxed);
    const int64_t d = p.jobs_done.load(std::memory_order_relaxed);
    if (p.finished.load(std::memory_order_relaxed)) {
      done += jobs_total;
      continue;
    }
    ++running;
    done += std::min(d, jobs_total);
    if (const int64_t t = p.now.load(std::memory_order_relaxed); t > 0) now = std::min(now, t);
  }
  const int64_t all = jobs_total * static_cast<int64_t>(n);
  const double share = all > 0 ? static_cast<double>(done) / static_cast<double>(all) : 0;
  std::string line = fmt::format("simulating {} polic{}: ", n, n == 1 ? "y" : "ies");
  if (now != INT64_MAX) {
    std::string t = FormatTimestamp(FromUnixSeconds(now));  // 2026-01-05T13:20:00Z
    if (t.size() >= 16) t = t.substr(0, 10) + " " + t.substr(11, 5) + " UTC";
    StrAppend(&line, t, ", ");
  }
  StrAppend(&line, "jobs ", report::Money(static_cast<double>(done) / std::max<size_t>(1, n)), "/",
            report::Money(static_cast<double>(jobs_total)), fmt::format(" ({:.0f}%)", share * 100));
  if (elapsed_s > 0) StrAppend(&line, ", ", Rate(static_cast<double>(events) / elapsed_s), " events/s");
  if (share > 0.005 && share < 1 && elapsed_s >= 1) {
    const double left = elapsed_s * (1 - share) / share;
    StrAppend(&line, ", about ", report::HumanDuration(static_cast<int64_t>(left + 0.5)), " left");
  } else if (running > 0 && share < 1) {
    StrAppend(&line, ", estimating time left");
  }
  return line;
}

bool ProgressWanted(ProgressMode mode) {
  if (mode == ProgressMode::kAlways) return true;
  if (mode == ProgressMode::kNever) return false;
  return isatty(fileno(stderr)) == 1;
}

ProgressDisplay::ProgressDisplay(std::ostream* out, const sim::SimProgress* progress, size_t n, int64_t jobs_total,
                                 int period_ms)
    : out_(out), progress_(progress), n_(n), jobs_total_(jobs_total), period_ms_(period_ms) {
  thread_ = std::thread([this] { Loop(); });
}

ProgressDisplay::~ProgressDisplay() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (drawn_) {
    *out_ << "\r\033[K" << std::flush;
  }
}

void ProgressDisplay::Loop() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  do {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    *out_ << "\r\033[K" << ProgressLine(progress_, n_, jobs_total_, elapsed) << std::flush;
    drawn_ = true;
  } while (!cv_.wait_for(lock, std::chrono::milliseconds(period_ms_), [this] { return stop_; }));
}

}  // namespace tide::cli

// The live status page (docs/live.md, "Live status page"): what `tide run`
// serves at GET / and GET /api/v1/report. After every successful loop the
// controller stores a sample of the snapshot it decided on and the jobs'
// first starts (SampleOf, JobStartsOf, Store::RecordSample); the report
// replays the stored samples into the timeline the simulator records, so the
// page is the simulation report's (src/report/html.h), drawn from live data.
#ifndef TIDE_CONTROLLER_LIVE_REPORT_H_
#define TIDE_CONTROLLER_LIVE_REPORT_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "controller/snapshot.h"
#include "controller/store.h"
#include "core/status.h"
#include "core/time.h"
#include "providers/provider.h"

namespace tide::controller {

// How long the store keeps samples and job starts (by start time).
inline constexpr Duration kHistoryKept = Hours(7 * 24);

// The page's data source, relative to the server.
inline constexpr char kReportPath[] = "/api/v1/report";

// What the snapshot `built` shows at `now`: GPUs asked for and held, jobs
// pending (by class) and running, utilization-weighted GPUs if the snapshot
// has a metrics view, and the GPUs and price per hour of `instances` (every
// instance tide pays for, booting included; one whose pool is unknown is
// left out). The running totals (spot interruptions, lost work) are left 0:
// they are the store's to give. Pure.
SampleRecord SampleOf(const config::Config& config, const Built& built,
                      const std::vector<providers::Instance>& instances, Timestamp now);

// The start of every job in `built` that has started (starting, running or
// stopping), with its submit time and class. Pure.
std::vector<JobStartRecord> JobStartsOf(const config::Config& config, const Built& built);

struct LiveReportOptions {
  Duration history = kHistoryKept;  // how far back the page looks
  bool dry_run = false;             // nothing is recorded: say so on the page
};

// The report data (report::ReportDataJson's format, mode "live") from
// `store` at `now`: one policy "live" whose timeline replays the samples,
// the wait distribution of the job starts, and headline figures (cost,
// nodes, interruptions and lost work since the store began; waits and
// utilization over the history kept; jobs pending and running at the last
// sample). A store error is returned as it is (it names the state file).
Result<std::string> LiveReportJson(const config::Config& config, Store* store, Timestamp now,
                                   const LiveReportOptions& options = {});

// The page: report::RenderLiveHtml(kReportPath, the loop interval in
// seconds, at least 1).
std::string LiveReportPage(const config::Config& config);

// LiveReportJson for the HTTP server's threads, over a read-only connection
// of its own to the state file (the loop's Store is not shared across
// threads). The connection is opened at the first call and again after an
// error. The report is built again only when a new sample was stored or
// one loop interval has passed, so any number of open pages costs one build
// per loop. Thread-safe: calls are serialised.
class LiveReportSource {
 public:
  // `config` is borrowed and must outlive this. With options.dry_run the
  // state file is not read (a dry run writes none): the report is empty.
  LiveReportSource(const config::Config& config, std::string state, LiveReportOptions options = {});
  Result<std::string> Json(Timestamp now);

 private:
  const config::Config& config_;
  std::string state_;
  LiveReportOptions options_;
  std::mutex mu_;
  // Guarded by mu_:
  std::unique_ptr<Store> reader_;
  std::string cached_;  // "" for none
  std::optional<Timestamp> cached_latest_;
  Timestamp cached_at_{};
};

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_LIVE_REPORT_H_

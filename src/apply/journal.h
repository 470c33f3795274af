// Journal: what the applier writes down before and after it acts, so that a
// driver killed at any instant can restart without buying twice, leaking a
// machine or forgetting a job it told to stop. The live controller's
// journal is its SQLite state store (controller/apply_journal.h); the
// simulator needs none (nothing outlives its process), and passes none.
#ifndef TIDE_APPLY_JOURNAL_H_
#define TIDE_APPLY_JOURNAL_H_

#include <string>
#include <string_view>
#include <vector>

#include "backends/workload.h"
#include "core/status.h"
#include "core/time.h"
#include "model/cluster.h"
#include "providers/provider.h"

namespace tide::apply {

// A stop begun with a checkpoint signal, to be finished (requeue or cancel)
// once its grace is over.
struct PendingStop {
  std::string record;  // the journal's key for it
  std::string job;     // the workload manager's job key
  backends::Cause cause = backends::Cause::kNone;
  bool cancel = false;
  Timestamp signalled{};
  Timestamp deadline{};
  int gpus = 0;
};

// Contract: every method is one durable step (written before it returns).
// Errors are the store's (Unavailable: retry later; FailedPrecondition: an
// operator must look). Not thread-safe.
class Journal {
 public:
  virtual ~Journal() = default;

  // Records the create of `node` in `pool` before the provider is asked, and
  // returns the idempotency key to hand the provider.
  virtual Result<std::string> BeginCreate(const std::string& node, int pool, std::string_view reason,
                                          Timestamp now) = 0;
  // The provider created `instance`: the create and the instance are
  // recorded together, or neither is.
  virtual Status CommitCreate(const std::string& key, const providers::Instance& instance, int pool,
                              Timestamp now) = 0;
  // The provider refused or failed the create recorded under `key`. A
  // DeadlineExceeded `why` (the call ran out of time) leaves the outcome
  // unknown: a journal that outlives the process keeps the create pending
  // for the provider's list to settle, as after a crash.
  virtual void FailCreate(const std::string& key, const Status& why, Timestamp now) = 0;

  // The instance behind `node` is being given back: it goes once the node
  // is empty.
  virtual void MarkReleasing(const std::string& node) = 0;
  // Records the delete of `instance` (node `node`) before the provider is
  // asked, and returns its key; a delete recorded already is resumed.
  virtual Result<std::string> BeginDelete(const std::string& node, const std::string& instance, int pool,
                                          Timestamp now) = 0;
  // The provider deleted it: its billing ends at `now`.
  virtual Status FinishDelete(const std::string& key, const std::string& instance, Timestamp now) = 0;

  // Records a stop about to be begun with a checkpoint signal (the job ran
  // its `restarts`th run) and sets stop->record. False when this run's stop
  // is recorded already: it is under way, and nothing is to be sent again.
  virtual Result<bool> BeginStop(PendingStop* stop, int restarts, Timestamp now) = 0;
  // The checkpoint signal went out (`reason`: the plan's).
  virtual void StopSignalled(const PendingStop& stop, std::string_view reason, Timestamp now) = 0;
  // The checkpoint signal could not be sent: the stop did not begin.
  virtual void FailStop(const PendingStop& stop, const Status& why, Timestamp now) = 0;
  // The stops begun and not yet finished, oldest first.
  virtual Result<std::vector<PendingStop>> PendingStops() = 0;
  // The stop ended: `outcome` is "requeued", "cancelled", "gone" (the job
  // left its nodes by itself) or "refused" (a protected job); `lost` is the
  // work it threw away, in GPU-seconds.
  virtual void FinishStop(const PendingStop& stop, std::string_view outcome, double lost_gpu_seconds,
                          std::string_view detail, Timestamp now) = 0;
};

}  // namespace tide::apply

#endif  // TIDE_APPLY_JOURNAL_H_

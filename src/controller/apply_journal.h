// StoreJournal: the applier's journal (apply/journal.h) over the live
// controller's SQLite store. Every step is an action with an idempotency
// key, written before tide acts and finished after (store.h says why that
// survives kill -9 at any instant). A create whose outcome is unknown (the
// provider's call ran out of time) stays pending: the next loop's Reconcile
// adopts it if the provider lists its key and abandons it if not, as after
// a crash. The journal also remembers the first write the store refused, so
// that the controller can say the state file cannot be written.
#ifndef TIDE_CONTROLLER_APPLY_JOURNAL_H_
#define TIDE_CONTROLLER_APPLY_JOURNAL_H_

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "apply/journal.h"
#include "config/config.h"
#include "controller/store.h"

namespace tide::controller {

class StoreJournal final : public apply::Journal {
 public:
  // Borrowed: `config` and `store` outlive the journal.
  StoreJournal(const config::Config* config, Store* store) : config_(config), store_(store) {}

  Result<std::string> BeginCreate(const std::string& node, int pool, std::string_view reason, Timestamp now) override;
  Status CommitCreate(const std::string& key, const providers::Instance& instance, int pool, Timestamp now) override;
  void FailCreate(const std::string& key, const Status& why, Timestamp now) override;
  void MarkReleasing(const std::string& node) override;
  Result<std::string> BeginDelete(const std::string& node, const std::string& instance, int pool,
                                  Timestamp now) override;
  Status FinishDelete(const std::string& key, const std::string& instance, Timestamp now) override;
  Result<bool> BeginStop(apply::PendingStop* stop, int restarts, Timestamp now) override;
  void StopSignalled(const apply::PendingStop& stop, std::string_view reason, Timestamp now) override;
  void FailStop(const apply::PendingStop& stop, const Status& why, Timestamp now) override;
  Result<std::vector<apply::PendingStop>> PendingStops() override;
  void FinishStop(const apply::PendingStop& stop, std::string_view outcome, double lost_gpu_seconds,
                  std::string_view detail, Timestamp now) override;

  // A fence: asked before each create, delete and stop is recorded (and so
  // before it is done). False refuses the step (Aborted, "this replica no
  // longer leads"), so that a replica whose leader Lease lapsed in the
  // middle of a long loop does nothing more in it. Unset: always true.
  void set_may_act(std::function<bool()> may_act) { may_act_ = std::move(may_act); }

  // The first write the store failed since the last call (OK if none): a
  // state file that is full, read-only or broken. A refusal that is part of
  // the protocol (AlreadyExists: the step is recorded already) is not one.
  Status TakeWriteError() { return std::exchange(write_error_, OkStatus()); }

 private:
  std::string PoolName(int pool) const;
  // Remembers `s` if it is the store failing to write; returns it.
  Status Noted(Status s);
  // OK, or Aborted when the fence says this replica may not act.
  Status Fence(std::string_view what) const;

  const config::Config* config_;
  Store* store_;
  int64_t seq_ = 0;  // makes create keys unique within a second
  Status write_error_;
  std::function<bool()> may_act_;
};

// True when `s` is the store failing (the file is busy, full, read-only,
// corrupt or unreadable: store.h's Unavailable, FailedPrecondition, NotFound
// and Internal), not a refusal of a record.
bool IsStoreFailure(const Status& s);

// A stop's record in the store's action detail: "<requeue|cancel>
// <deadline> <signalled> <gpus> [<cause>]" (unix seconds; the cause was
// added later and is optional).
std::string EncodeStop(const apply::PendingStop& stop);
apply::PendingStop DecodeStop(const ActionRecord& record);

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_APPLY_JOURNAL_H_

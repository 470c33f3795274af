// StoreJournal: the applier's journal (apply/journal.h) over the live
// controller's SQLite store. Every step is an action with an idempotency
// key, written before tide acts and finished after (store.h says why that
// survives kill -9 at any instant).
#ifndef TIDE_CONTROLLER_APPLY_JOURNAL_H_
#define TIDE_CONTROLLER_APPLY_JOURNAL_H_

#include <string>
#include <string_view>
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

 private:
  std::string PoolName(int pool) const;

  const config::Config* config_;
  Store* store_;
  int64_t seq_ = 0;  // makes create keys unique within a second
};

// A stop's record in the store's action detail: "<requeue|cancel>
// <deadline> <signalled> <gpus> [<cause>]" (unix seconds; the cause was
// added later and is optional).
std::string EncodeStop(const apply::PendingStop& stop);
apply::PendingStop DecodeStop(const ActionRecord& record);

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_APPLY_JOURNAL_H_

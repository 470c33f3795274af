#include "controller/apply_journal.h"

#include <cstdlib>

#include "core/strings.h"

namespace tide::controller {

std::string EncodeStop(const apply::PendingStop& stop) {
  return StrCat(stop.cancel ? "cancel" : "requeue", " ", ToUnixSeconds(stop.deadline), " ",
                ToUnixSeconds(stop.signalled), " ", stop.gpus, " ", backends::CauseName(stop.cause));
}

apply::PendingStop DecodeStop(const ActionRecord& record) {
  apply::PendingStop p;
  p.record = record.key;
  p.job = record.job;
  const auto parts = Split(record.detail, ' ', /*skip_empty=*/true);
  if (parts.size() >= 4) {
    p.cancel = parts[0] == "cancel";
    p.deadline = FromUnixSeconds(std::atoll(std::string(parts[1]).c_str()));
    p.signalled = FromUnixSeconds(std::atoll(std::string(parts[2]).c_str()));
    p.gpus = std::atoi(std::string(parts[3]).c_str());
  }
  if (parts.size() >= 5) {
    for (int c = 0; c <= static_cast<int>(backends::Cause::kOther); ++c) {
      if (backends::CauseName(static_cast<backends::Cause>(c)) == parts[4]) p.cause = static_cast<backends::Cause>(c);
    }
  }
  return p;
}

bool IsStoreFailure(const Status& s) {
  return absl::IsUnavailable(s) || absl::IsFailedPrecondition(s) || absl::IsNotFound(s) || absl::IsInternal(s) ||
         absl::IsDataLoss(s);
}

Status StoreJournal::Noted(Status s) {
  if (write_error_.ok() && IsStoreFailure(s)) write_error_ = s;
  return s;
}

std::string StoreJournal::PoolName(int pool) const {
  return pool >= 0 && pool < static_cast<int>(config_->cluster.pools.size())
             ? config_->cluster.pools[static_cast<size_t>(pool)].name
             : std::string();
}

Status StoreJournal::Fence(std::string_view what) const {
  if (!may_act_ || may_act_()) return OkStatus();
  return absl::AbortedError(StrCat("not done: ", what, ": this replica no longer leads (its leader Lease lapsed)"));
}

Result<std::string> StoreJournal::BeginCreate(const std::string& node, int pool, std::string_view reason,
                                              Timestamp now) {
  TIDE_RETURN_IF_ERROR(Fence(StrCat("create node ", node)));
  std::string key = StrCat("create-", node, "-", ToUnixSeconds(now), "-", ++seq_);
  TIDE_RETURN_IF_ERROR(Noted(
      store_->BeginAction({key, "create", node, "", PoolName(pool), "pending", now, now, std::string(reason)})));
  return key;
}

Status StoreJournal::CommitCreate(const std::string& key, const providers::Instance& instance, int pool,
                                  Timestamp now) {
  InstanceRecord r;
  r.id = instance.id;
  r.node = instance.node;
  r.pool = PoolName(pool);
  if (pool >= 0 && pool < static_cast<int>(config_->cluster.pools.size())) {
    const auto& p = config_->cluster.pools[static_cast<size_t>(pool)];
    r.tier = p.tier;
    r.price_per_hour = p.price_per_hour;
  }
  r.idempotency_key = key;
  r.created = now;
  r.state = "booting";
  return Noted(store_->CommitCreate(key, r, now));
}

void StoreJournal::FailCreate(const std::string& key, const Status& why, Timestamp now) {
  // Cut by its deadline, the create may have bought the instance: it stays
  // pending, for the provider's list to settle (Reconcile).
  if (absl::IsDeadlineExceeded(why)) return;
  (void)Noted(store_->FinishAction(key, "failed", std::string(Message(why)), now));
}

void StoreJournal::MarkReleasing(const std::string& node) {
  auto rec = store_->InstanceByNode(node);
  if (!rec.ok() || !rec->has_value()) return;
  InstanceRecord r = **rec;
  r.state = "releasing";
  (void)Noted(store_->PutInstance(r));
}

Result<std::string> StoreJournal::BeginDelete(const std::string& node, const std::string& instance, int pool,
                                              Timestamp now) {
  TIDE_RETURN_IF_ERROR(Fence(StrCat("delete node ", node)));
  std::string key = StrCat("delete-", instance);
  Status begun = Noted(store_->BeginAction({key, "delete", node, "", PoolName(pool), "pending", now, now, instance}));
  if (!begun.ok() && !absl::IsAlreadyExists(begun)) return begun;
  return key;
}

Status StoreJournal::FinishDelete(const std::string& key, const std::string& instance, Timestamp now) {
  TIDE_RETURN_IF_ERROR(Noted(store_->MarkInstanceDeleted(instance, now, "deleted")));
  return Noted(store_->FinishAction(key, "done", instance, now));
}

Result<bool> StoreJournal::BeginStop(apply::PendingStop* stop, int restarts, Timestamp now) {
  TIDE_RETURN_IF_ERROR(Fence(StrCat("stop job ", stop->job)));
  stop->record = StrCat("stop-", stop->job, "-", restarts);
  Status begun =
      Noted(store_->BeginAction({stop->record, "signal", "", stop->job, "", "pending", now, now, EncodeStop(*stop)}));
  if (absl::IsAlreadyExists(begun)) return false;
  TIDE_RETURN_IF_ERROR(begun);
  return true;
}

void StoreJournal::StopSignalled(const apply::PendingStop& stop, std::string_view reason, Timestamp now) {
  (void)Noted(store_->AddJobEvent({stop.job, "signalled", now, 0, std::string(reason)}));
}

void StoreJournal::FailStop(const apply::PendingStop& stop, const Status& why, Timestamp now) {
  (void)Noted(store_->FinishAction(stop.record, "failed", std::string(Message(why)), now));
}

Result<std::vector<apply::PendingStop>> StoreJournal::PendingStops() {
  TIDE_ASSIGN_OR_RETURN(auto pending, store_->PendingActions());
  std::vector<apply::PendingStop> out;
  for (const auto& a : pending) {
    if (a.kind == "signal") out.push_back(DecodeStop(a));
  }
  return out;
}

void StoreJournal::FinishStop(const apply::PendingStop& stop, std::string_view outcome, double lost_gpu_seconds,
                              std::string_view detail, Timestamp now) {
  if (outcome == "requeued" || outcome == "cancelled") {
    (void)Noted(store_->AddJobEvent({stop.job, std::string(outcome), now, lost_gpu_seconds, std::string(detail)}));
  }
  (void)Noted(store_->FinishAction(stop.record, outcome == "refused" ? "abandoned" : "done",
                                   outcome == "refused" ? std::string(detail) : EncodeStop(stop), now));
}

}  // namespace tide::controller

#include "controller/watched_provider.h"

#include "core/strings.h"

namespace tide::controller {

void WatchedProvider::Note(const std::string& what, const Status& s, bool any) {
  called_ = true;
  if (s.ok() || !fault_.ok()) return;
  if (any || absl::IsDeadlineExceeded(s) || absl::IsUnavailable(s)) {
    fault_ = Status(s.code(), StrCat(what, ": ", Message(s)));
  }
}

Result<providers::Instance> WatchedProvider::Create(const providers::CreateRequest& request, Timestamp now) {
  Result<providers::Instance> r = inner_->Create(request, now);
  Note(StrCat("create of node ", request.node), r.status(), false);
  return r;
}

Status WatchedProvider::Delete(const std::string& instance_id, const std::string& idempotency_key, Timestamp now) {
  Status s = inner_->Delete(instance_id, idempotency_key, now);
  Note(StrCat("delete of instance ", instance_id), s, false);
  return s;
}

Result<std::vector<providers::Instance>> WatchedProvider::List(Timestamp now) {
  Result<std::vector<providers::Instance>> r = inner_->List(now);
  Note("list", r.status(), true);
  return r;
}

Result<std::vector<providers::Interruption>> WatchedProvider::Interruptions(Timestamp now) {
  Result<std::vector<providers::Interruption>> r = inner_->Interruptions(now);
  Note("interruptions", r.status(), true);
  return r;
}

}  // namespace tide::controller

// WatchedProvider: the controller's cloud provider, watched for /healthz.
// Every call goes to the real provider unchanged; what the watch keeps is
// the first call since the loop began that shows the provider itself in
// trouble (docs/live.md, "Faults"):
//   - any failed List or Interruptions (the loop then decides nothing);
//   - a Create or Delete that ran out of time (DeadlineExceeded) or did not
//     reach the provider (Unavailable).
// A create refused for a reason of the provider's own (InvalidArgument, a
// stock-out as ResourceExhausted) is the applier's to report, not a fault.
// Not thread-safe (the CloudProvider contract).
#ifndef TIDE_CONTROLLER_WATCHED_PROVIDER_H_
#define TIDE_CONTROLLER_WATCHED_PROVIDER_H_

#include <string>
#include <vector>

#include "providers/provider.h"

namespace tide::controller {

class WatchedProvider final : public providers::CloudProvider {
 public:
  // `inner` is borrowed and outlives the watch.
  explicit WatchedProvider(providers::CloudProvider* inner) : inner_(inner) {}

  // Forgets the calls so far: the loop calls it as it begins.
  void Reset() {
    called_ = false;
    fault_ = OkStatus();
  }
  // True once any call was made since Reset: whether the watch knows
  // anything about the provider this loop.
  bool called() const { return called_; }
  // The first call since Reset that showed the provider in trouble, with
  // the call named ("create of node gpu3: ..."); OK if none did.
  const Status& fault() const { return fault_; }

  std::string Name() const override { return inner_->Name(); }
  Result<providers::Instance> Create(const providers::CreateRequest& request, Timestamp now) override;
  Status Delete(const std::string& instance_id, const std::string& idempotency_key, Timestamp now) override;
  Result<std::vector<providers::Instance>> List(Timestamp now) override;
  Result<std::vector<providers::Interruption>> Interruptions(Timestamp now) override;

 private:
  // Notes `s` of the call `what`; `any` counts every failure as a fault.
  void Note(const std::string& what, const Status& s, bool any);

  providers::CloudProvider* inner_;
  bool called_ = false;
  Status fault_;
};

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_WATCHED_PROVIDER_H_

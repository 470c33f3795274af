// BrokenProvider: a CloudProvider that breaks the contract on purpose, to
// show that the contract suite catches it (built into the suite only with
// -DTIDE_CONTRACT_SELFTEST=ON, where its tests are expected to fail).
// Its Create ignores the idempotency key and buys on every call; its Delete
// of an id it does not hold fails with NotFound. Everything else keeps the
// contract.
#ifndef TIDE_TESTS_CONTRACT_BROKEN_PROVIDER_H_
#define TIDE_TESTS_CONTRACT_BROKEN_PROVIDER_H_

#include <string>
#include <vector>

#include "core/strings.h"
#include "providers/provider.h"

namespace tide::contract {

class BrokenProvider final : public providers::CloudProvider {
 public:
  std::string Name() const override { return "broken"; }

  Result<providers::Instance> Create(const providers::CreateRequest& request, Timestamp now) override {
    // Wrong on purpose: no look-up of request.idempotency_key.
    instances_.push_back({StrCat("broken-", ++made_), request.node, request.pool, request.idempotency_key,
                          "pending", now});
    return instances_.back();
  }

  Status Delete(const std::string& instance_id, const std::string& idempotency_key, Timestamp now) override {
    for (auto it = instances_.begin(); it != instances_.end(); ++it) {
      if (it->id == instance_id) {
        instances_.erase(it);
        return OkStatus();
      }
    }
    // Wrong on purpose: deleting what is gone must be OK.
    return absl::NotFoundError(StrCat("broken provider: no instance ", instance_id));
  }

  Result<std::vector<providers::Instance>> List(Timestamp now) override { return instances_; }

  Result<std::vector<providers::Interruption>> Interruptions(Timestamp now) override {
    std::vector<providers::Interruption> out;
    for (const auto& n : notices_) {
      if (n.at >= now) out.push_back(n);
    }
    return out;
  }

  void Announce(const providers::Instance& instance, Timestamp at) {
    notices_.push_back({instance.id, instance.node, at});
  }

 private:
  std::vector<providers::Instance> instances_;
  std::vector<providers::Interruption> notices_;
  int made_ = 0;
};

}  // namespace tide::contract

#endif  // TIDE_TESTS_CONTRACT_BROKEN_PROVIDER_H_

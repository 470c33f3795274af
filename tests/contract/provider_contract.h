// The contract of providers::CloudProvider (providers/provider.h), as a typed
// test suite that every implementation runs (DESIGN.md section 4, rule 7).
//
// An implementation enters the suite through one traits type; adding it to
// the type list in provider_contract_test.cc is all it takes. The fixture
// makes a fresh traits object for each test and destroys it after, so the
// traits own the provider and whatever it needs (a temporary directory, a
// fake cloud, a simulator) and clean up in their destructor:
//
//   struct MyTraits {
//     static constexpr const char* kName = "Mine";  // the tests' name suffix
//     MyTraits();                                    // makes the provider
//     providers::CloudProvider& provider();
//     std::string pool();      // a pool the provider can create in
//     std::string NextNode();  // a node name Create accepts next in pool();
//                              // each call may hand out a new one
//     Timestamp now();         // a time at which to call the provider
//     // Makes the provider announce that `instance` is taken away at `at`
//     // (the provider's own way of injecting a spot notice).
//     Status Interrupt(const providers::Instance& instance, Timestamp at);
//   };
//
// What the suite checks (the contract in provider.h):
//   - Name is not empty;
//   - Create returns an instance with a non-empty id on the requested node
//     and pool, pending or running;
//   - a second Create with the same idempotency key returns the same
//     instance and buys nothing (List grows by one); another key buys
//     another instance;
//   - List includes instances still being created, each with its key;
//   - Delete removes the instance from List; deleting it again, or deleting
//     an id the provider never had, is OK;
//   - Interruptions returns the notices not yet past, and drops them once
//     they are.
//
// Include this header in exactly one test source: it defines and registers
// the tests.
#ifndef TIDE_TESTS_CONTRACT_PROVIDER_CONTRACT_H_
#define TIDE_TESTS_CONTRACT_PROVIDER_CONTRACT_H_

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "providers/provider.h"

namespace tide::contract {

template <typename Traits>
class ProviderContract : public ::testing::Test {
 protected:
  providers::CloudProvider& provider() { return traits_.provider(); }
  Timestamp now() { return traits_.now(); }

  // A request for the next node; each call names a new node.
  providers::CreateRequest Request(std::string key) {
    providers::CreateRequest r;
    r.pool = traits_.pool();
    r.node = traits_.NextNode();
    r.instance_type = "contract-gpu-type";
    r.tier = model::Tier::kSpot;
    r.region = "contract-region";
    r.idempotency_key = std::move(key);
    return r;
  }

  static const providers::Instance* Find(const std::vector<providers::Instance>& list, const std::string& id) {
    auto it = std::find_if(list.begin(), list.end(), [&](const providers::Instance& i) { return i.id == id; });
    return it == list.end() ? nullptr : &*it;
  }

  static bool ValidState(const std::string& state) { return state == "pending" || state == "running"; }

  Traits traits_;
};

TYPED_TEST_SUITE_P(ProviderContract);

TYPED_TEST_P(ProviderContract, NameIsNotEmpty) { EXPECT_FALSE(this->provider().Name().empty()); }

TYPED_TEST_P(ProviderContract, CreateReturnsAnInstanceOnTheRequestedNodeAndPool) {
  const providers::CreateRequest req = this->Request("contract-create-1");
  Result<providers::Instance> made = this->provider().Create(req, this->now());
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_FALSE(made->id.empty());
  EXPECT_EQ(made->node, req.node);
  EXPECT_EQ(made->pool, req.pool);
  EXPECT_EQ(made->idempotency_key, req.idempotency_key);
  EXPECT_TRUE(this->ValidState(made->state)) << made->state;
}

TYPED_TEST_P(ProviderContract, CreateWithTheSameKeyReturnsTheSameInstanceAndBuysNothing) {
  Result<std::vector<providers::Instance>> before = this->provider().List(this->now());
  ASSERT_TRUE(before.ok()) << before.status();
  const providers::CreateRequest req = this->Request("contract-retry-1");
  Result<providers::Instance> first = this->provider().Create(req, this->now());
  ASSERT_TRUE(first.ok()) << first.status();
  // The retry of the same decision (after a timeout, say), a little later.
  Result<providers::Instance> again = this->provider().Create(req, this->now() + Seconds(5));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->id, first->id);
  EXPECT_EQ(again->node, req.node);

  Result<std::vector<providers::Instance>> after = this->provider().List(this->now() + Seconds(5));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->size(), before->size() + 1);
  EXPECT_NE(this->Find(*after, first->id), nullptr);
}

TYPED_TEST_P(ProviderContract, CreateWithAnotherKeyBuysAnotherInstance) {
  Result<std::vector<providers::Instance>> before = this->provider().List(this->now());
  ASSERT_TRUE(before.ok()) << before.status();
  Result<providers::Instance> a = this->provider().Create(this->Request("contract-a"), this->now());
  ASSERT_TRUE(a.ok()) << a.status();
  Result<providers::Instance> b = this->provider().Create(this->Request("contract-b"), this->now());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE(a->id, b->id);
  EXPECT_NE(a->node, b->node);

  Result<std::vector<providers::Instance>> after = this->provider().List(this->now());
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->size(), before->size() + 2);
  EXPECT_NE(this->Find(*after, a->id), nullptr);
  EXPECT_NE(this->Find(*after, b->id), nullptr);
}

TYPED_TEST_P(ProviderContract, ListIncludesInstancesBeingCreated) {
  providers::CreateRequest req = this->Request("contract-booting");
  req.boot_delay = Seconds(600);  // the local provider's "boot"; the others boot on their own
  Result<providers::Instance> made = this->provider().Create(req, this->now());
  ASSERT_TRUE(made.ok()) << made.status();

  Result<std::vector<providers::Instance>> list = this->provider().List(this->now());
  ASSERT_TRUE(list.ok()) << list.status();
  const providers::Instance* listed = this->Find(*list, made->id);
  ASSERT_NE(listed, nullptr) << "a booting instance is missing from List";
  EXPECT_EQ(listed->node, req.node);
  EXPECT_EQ(listed->pool, req.pool);
  EXPECT_TRUE(this->ValidState(listed->state)) << listed->state;
}

// After a crash, tide matches what it meant to buy with what the provider
// has by the key (controller/reconcile.cc).
TYPED_TEST_P(ProviderContract, ListCarriesEachInstancesKey) {
  Result<providers::Instance> a = this->provider().Create(this->Request("contract-key-a"), this->now());
  ASSERT_TRUE(a.ok()) << a.status();
  Result<providers::Instance> b = this->provider().Create(this->Request("contract-key-b"), this->now());
  ASSERT_TRUE(b.ok()) << b.status();
  Result<std::vector<providers::Instance>> list = this->provider().List(this->now());
  ASSERT_TRUE(list.ok()) << list.status();
  const providers::Instance* la = this->Find(*list, a->id);
  const providers::Instance* lb = this->Find(*list, b->id);
  ASSERT_NE(la, nullptr);
  ASSERT_NE(lb, nullptr);
  EXPECT_EQ(la->idempotency_key, "contract-key-a");
  EXPECT_EQ(lb->idempotency_key, "contract-key-b");
}

TYPED_TEST_P(ProviderContract, DeleteRemovesTheInstanceFromList) {
  Result<providers::Instance> keep = this->provider().Create(this->Request("contract-keep"), this->now());
  ASSERT_TRUE(keep.ok()) << keep.status();
  Result<providers::Instance> gone = this->provider().Create(this->Request("contract-gone"), this->now());
  ASSERT_TRUE(gone.ok()) << gone.status();
  ASSERT_TRUE(this->provider().Delete(gone->id, "contract-delete-gone", this->now() + Seconds(1)).ok());

  Result<std::vector<providers::Instance>> list = this->provider().List(this->now() + Seconds(1));
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(this->Find(*list, gone->id), nullptr);
  EXPECT_NE(this->Find(*list, keep->id), nullptr);
}

TYPED_TEST_P(ProviderContract, DeleteIsIdempotent) {
  Result<providers::Instance> made = this->provider().Create(this->Request("contract-twice"), this->now());
  ASSERT_TRUE(made.ok()) << made.status();
  Status first = this->provider().Delete(made->id, "contract-delete-1", this->now());
  ASSERT_TRUE(first.ok()) << first;
  Status again = this->provider().Delete(made->id, "contract-delete-1", this->now() + Seconds(1));
  EXPECT_TRUE(again.ok()) << "deleting an instance already gone: " << again;
  Status unknown = this->provider().Delete("contract-no-such-instance", "contract-delete-2", this->now());
  EXPECT_TRUE(unknown.ok()) << "deleting an id the provider never had: " << unknown;
}

TYPED_TEST_P(ProviderContract, InterruptionsReturnNoticesNotYetPast) {
  Result<providers::Instance> spot = this->provider().Create(this->Request("contract-spot"), this->now());
  ASSERT_TRUE(spot.ok()) << spot.status();
  const Timestamp at = this->now() + Seconds(120);
  ASSERT_TRUE(this->traits_.Interrupt(*spot, at).ok());

  Result<std::vector<providers::Interruption>> ahead = this->provider().Interruptions(this->now() + Seconds(60));
  ASSERT_TRUE(ahead.ok()) << ahead.status();
  int found = 0;
  for (const auto& n : *ahead) {
    EXPECT_GE(n.at, this->now() + Seconds(60)) << "a notice already past: " << n.instance_id;
    if (n.instance_id != spot->id) continue;
    ++found;
    EXPECT_EQ(n.node, spot->node);
    EXPECT_EQ(n.at, at);
  }
  EXPECT_EQ(found, 1);

  Result<std::vector<providers::Interruption>> past = this->provider().Interruptions(at + Seconds(1));
  ASSERT_TRUE(past.ok()) << past.status();
  for (const auto& n : *past) {
    EXPECT_NE(n.instance_id, spot->id) << "the notice is past";
    EXPECT_GE(n.at, at + Seconds(1)) << "a notice already past: " << n.instance_id;
  }
}

REGISTER_TYPED_TEST_SUITE_P(ProviderContract, NameIsNotEmpty, CreateReturnsAnInstanceOnTheRequestedNodeAndPool,
                            CreateWithTheSameKeyReturnsTheSameInstanceAndBuysNothing,
                            CreateWithAnotherKeyBuysAnotherInstance, ListIncludesInstancesBeingCreated,
                            ListCarriesEachInstancesKey, DeleteRemovesTheInstanceFromList, DeleteIsIdempotent,
                            InterruptionsReturnNoticesNotYetPast);

// Names each instantiation by its traits' kName.
struct TraitsName {
  template <typename Traits>
  static std::string GetName(int) {
    return Traits::kName;
  }
};

}  // namespace tide::contract

#endif  // TIDE_TESTS_CONTRACT_PROVIDER_CONTRACT_H_

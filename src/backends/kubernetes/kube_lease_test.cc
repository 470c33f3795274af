// Leader election through a Lease, on recorded replies and a manual clock.
#include "backends/kubernetes/kube_lease.h"

#include "backends/kubernetes/kube_fake_transport_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tide::backends::kube {
namespace {

using ::testing::HasSubstr;
using testing::FakeTransport;
using json = nlohmann::json;

constexpr char kPath[] = "/apis/coordination.k8s.io/v1/namespaces/tide-system/leases/tide";

std::string LeaseJson(const std::string& holder, const std::string& renew, const std::string& version,
                      int transitions = 0, int seconds = 15) {
  return json{{"apiVersion", "coordination.k8s.io/v1"},
              {"kind", "Lease"},
              {"metadata", {{"name", "tide"}, {"namespace", "tide-system"}, {"resourceVersion", version}}},
              {"spec",
               {{"holderIdentity", holder},
                {"leaseDurationSeconds", seconds},
                {"renewTime", renew},
                {"leaseTransitions", transitions}}}}
      .dump();
}

class NoSleep final : public Sleeper {
 public:
  bool Sleep(Duration, std::stop_token stop) override { return !stop.stop_requested(); }
};

class LeaseTest : public ::testing::Test {
 protected:
  LeaseElector Elector(std::string identity = "a") {
    LeaseOptions o;
    o.identity = std::move(identity);
    return LeaseElector(o, &t_, &clock_, &sleeper_);
  }
  json Body(size_t call) { return json::parse(t_.calls.at(call).body); }

  FakeTransport t_;
  ManualClock clock_{FromUnixSeconds(1'800'000'000)};
  NoSleep sleeper_;
};

TEST_F(LeaseTest, NoLeaseYetIsCreatedHeld) {
  LeaseElector e = Elector();
  t_.replies.push_back(Reply{404, R"({"kind":"Status","code":404})"});
  t_.replies.push_back(Reply{201, LeaseJson("a", "x", "7")});
  ASSERT_TRUE(e.TryOnce().ok());
  EXPECT_TRUE(e.Leading());
  ASSERT_EQ(t_.calls.size(), 2u);
  EXPECT_EQ(t_.calls[0].method, "GET");
  EXPECT_EQ(t_.calls[0].path, kPath);
  EXPECT_EQ(t_.calls[1].method, "POST");
  EXPECT_EQ(t_.calls[1].path, "/apis/coordination.k8s.io/v1/namespaces/tide-system/leases");
  EXPECT_EQ(Body(1)["spec"]["holderIdentity"], "a");
  EXPECT_EQ(Body(1)["spec"]["leaseDurationSeconds"], 15);
  EXPECT_EQ(Body(1)["spec"]["renewTime"], "2027-01-15T08:00:00.000000Z");
  EXPECT_EQ(e.View().holder, "a");
}

TEST_F(LeaseTest, AnotherHoldersLeaseIsTakenOnlyAfterItWentUnrenewedForItsLength) {
  LeaseElector e = Elector();
  const std::string held = LeaseJson("b", "2027-01-15T08:00:00.000000Z", "10", 3);
  t_.Reply200(held);
  ASSERT_TRUE(e.TryOnce().ok());
  EXPECT_FALSE(e.Leading());
  EXPECT_EQ(e.View().holder, "b");
  // 14 s later the record has not changed: still b's.
  clock_.Advance(Seconds(14));
  t_.Reply200(held);
  ASSERT_TRUE(e.TryOnce().ok());
  EXPECT_FALSE(e.Leading());
  EXPECT_EQ(t_.calls.size(), 2u);  // two reads, no write
  // At 15 s, unchanged for the Lease's length: taken, with the version read.
  clock_.Advance(Seconds(1));
  t_.Reply200(held);
  t_.Reply200(LeaseJson("a", "y", "11", 4));
  ASSERT_TRUE(e.TryOnce().ok());
  EXPECT_TRUE(e.Leading());
  ASSERT_EQ(t_.calls.size(), 4u);
  EXPECT_EQ(t_.calls[3].method, "PUT");
  EXPECT_EQ(Body(3)["metadata"]["resourceVersion"], "10");
  EXPECT_EQ(Body(3)["spec"]["holderIdentity"], "a");
  EXPECT_EQ(Body(3)["spec"]["leaseTransitions"], 4);
}

TEST_F(LeaseTest, AHolderThatKeepsRenewingIsNeverReplaced) {
  LeaseElector e = Elector();
  for (int i = 0; i < 20; ++i) {
    t_.Reply200(LeaseJson("b", "renew-" + std::to_string(i), std::to_string(100 + i)));
    ASSERT_TRUE(e.TryOnce().ok());
    EXPECT_FALSE(e.Leading());
    clock_.Advance(Seconds(2));
  }
  for (const auto& c : t_.calls) EXPECT_EQ(c.method, "GET");
}

TEST_F(LeaseTest, ALostRaceIsNotLeadership) {
  LeaseElector e = Elector();
  t_.Reply200(LeaseJson("", "x", "5"));  // released: free to take at once
  t_.replies.push_back(Reply{409, R"({"kind":"Status","code":409,"reason":"Conflict"})"});
  ASSERT_TRUE(e.TryOnce().ok());
  EXPECT_FALSE(e.Leading());
}

TEST_F(LeaseTest, AHolderThatCannotRenewStopsLeadingBeforeTheLeaseCanBeTaken) {
  LeaseElector e = Elector();
  t_.Reply200(LeaseJson("a", "x", "5"));
  t_.Reply200(LeaseJson("a", "y", "6"));
  ASSERT_TRUE(e.TryOnce().ok());  // renewed
  EXPECT_TRUE(e.Leading());
  // The API server stops answering: Leading lapses at the renew deadline
  // (10 s), before another replica may take the Lease (15 s).
  for (int s = 2; s <= 10; s += 2) {
    clock_.Advance(Seconds(2));
    Status st = e.TryOnce();
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(e.Leading(), s < 10) << "at " << s << " s";
  }
  EXPECT_THAT(e.View().last_error, HasSubstr("no reply queued"));
}

TEST_F(LeaseTest, ARenewalKeepsTheAcquireTimeAndAReleaseEmptiesTheHolder) {
  LeaseElector e = Elector();
  t_.replies.push_back(Reply{404, "{}"});
  t_.replies.push_back(Reply{201, LeaseJson("a", "x", "1")});
  ASSERT_TRUE(e.TryOnce().ok());
  clock_.Advance(Seconds(2));
  t_.Reply200(LeaseJson("a", "x", "1"));
  t_.Reply200(LeaseJson("a", "y", "2"));
  ASSERT_TRUE(e.TryOnce().ok());
  EXPECT_EQ(Body(3)["spec"]["acquireTime"], "2027-01-15T08:00:00.000000Z");
  EXPECT_EQ(Body(3)["spec"]["renewTime"], "2027-01-15T08:00:02.000000Z");
  EXPECT_EQ(Body(3)["metadata"]["resourceVersion"], "1");
  t_.Reply200(LeaseJson("", "z", "3"));
  e.Release();
  EXPECT_FALSE(e.Leading());
  EXPECT_EQ(Body(4)["spec"]["holderIdentity"], "");
  EXPECT_EQ(Body(4)["metadata"]["resourceVersion"], "2");
}

TEST_F(LeaseTest, AReplyThatIsNotALeaseIsAnErrorAndNotLeadership) {
  LeaseElector e = Elector();
  t_.Reply200("[1,2]");
  Status s = e.TryOnce();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("Lease tide-system/tide: the reply is not a Lease"));
  EXPECT_FALSE(e.Leading());
}

}  // namespace
}  // namespace tide::backends::kube

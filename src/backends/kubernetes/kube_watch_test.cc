#include "backends/kubernetes/kube_watch.h"

#include "backends/kubernetes/kube_fake_transport_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tide::backends::kube {
namespace {

using json = nlohmann::json;
using testing::FakeTransport;
using testing::Fixture;
using testing::FixtureLines;
using testing::WatchScript;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using Kind = StepResult::Kind;

// Records the waits; asks the run to stop after `stop_after` of them.
class FakeSleeper final : public Sleeper {
 public:
  explicit FakeSleeper(ManualClock* clock, std::stop_source* stop = nullptr, size_t stop_after = 0)
      : clock_(clock), stop_(stop), stop_after_(stop_after) {}
  bool Sleep(Duration d, std::stop_token) override {
    waits.push_back(d.count());
    clock_->Advance(d);
    if (stop_ != nullptr && waits.size() >= stop_after_) stop_->request_stop();
    return true;
  }
  std::vector<int64_t> waits;

 private:
  ManualClock* clock_;
  std::stop_source* stop_;
  size_t stop_after_;
};

std::vector<std::string> Keys(const PodInformer::View& v) {
  std::vector<std::string> out;
  for (const auto& [k, p] : v.objects) out.push_back(k);
  return out;
}

// A pod list of just these names, at resourceVersion `rv`.
std::string PodList(const std::vector<std::string>& names, const std::string& rv) {
  json list = {{"kind", "PodList"}, {"metadata", {{"resourceVersion", rv}}}, {"items", json::array()}};
  for (const auto& n : names) list["items"].push_back({{"metadata", {{"name", n}, {"namespace", "default"}}}});
  return list.dump();
}

class InformerTest : public ::testing::Test {
 protected:
  InformerTest() : clock_(FromUnixSeconds(1796000000)), sleeper_(&clock_) {}

  PodInformer Make(InformerOptions o = {}) {
    o.namespace_name = "default";
    o.page_size = 2;
    return PodInformer(&t_, &clock_, &sleeper_, o);
  }
  // The recorded two-page list: infer-mig, kueue-w0, protected, train-0 at rv 235.
  void QueueList() {
    t_.Reply200(Fixture("pods_page1.json"));
    t_.Reply200(Fixture("pods_page2.json"));
  }

  FakeTransport t_;
  ManualClock clock_;
  FakeSleeper sleeper_;
};

TEST_F(InformerTest, ListsPagedThenWatchesFromTheListsVersion) {
  PodInformer inf = Make();
  EXPECT_FALSE(inf.Synced());
  QueueList();
  StepResult r = inf.Step();
  EXPECT_EQ(r.kind, Kind::kListed);
  ASSERT_EQ(t_.calls.size(), 2u);
  EXPECT_EQ(t_.calls[0].path, "/api/v1/namespaces/default/pods?limit=2");
  EXPECT_THAT(t_.calls[1].path, HasSubstr("continue="));
  auto v = inf.Snapshot();
  EXPECT_THAT(Keys(v), ElementsAre("default/infer-mig", "default/kueue-w0", "default/protected", "default/train-0"));
  EXPECT_EQ(v.state.resource_version, "235");
  EXPECT_TRUE(inf.Synced());

  t_.watches.push_back(WatchScript{FixtureLines("watch_pods.jsonl")});
  r = inf.Step();
  EXPECT_EQ(r.kind, Kind::kWatched);
  EXPECT_EQ(r.events, 3);
  ASSERT_EQ(t_.watch_paths.size(), 1u);
  EXPECT_EQ(t_.watch_paths[0],
            "/api/v1/namespaces/default/pods?watch=1&allowWatchBookmarks=true&resourceVersion=235&timeoutSeconds=300");
  v = inf.Snapshot();
  EXPECT_THAT(Keys(v), ElementsAre("default/infer-mig", "default/late", "default/protected", "default/train-0"));
  EXPECT_EQ(v.state.resource_version, "238");  // the BOOKMARK's
  EXPECT_EQ(t_.calls.size(), 2u);  // no list after the first
}

TEST_F(InformerTest, BookmarkAdvancesVersionOnly) {
  PodInformer inf = Make();
  QueueList();
  inf.Step();
  const uint64_t before = inf.version();
  t_.watches.push_back(WatchScript{{R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"900"}}})"}});
  StepResult r = inf.Step();
  EXPECT_EQ(r.events, 0);
  EXPECT_EQ(inf.State().resource_version, "900");
  EXPECT_EQ(inf.version(), before);  // the map did not change
  t_.watches.push_back(WatchScript{});
  inf.Step();
  EXPECT_THAT(t_.watch_paths.back(), HasSubstr("resourceVersion=900"));
}

TEST_F(InformerTest, ResumesFromLastVersionAfterAFailure) {
  PodInformer inf = Make();
  QueueList();
  inf.Step();
  auto lines = FixtureLines("watch_pods.jsonl");
  t_.watches.push_back(WatchScript{{lines[0]}, absl::UnavailableError("connection reset")});
  StepResult r = inf.Step();
  EXPECT_EQ(r.kind, Kind::kFailed);
  EXPECT_EQ(r.wait, Seconds(1));
  EXPECT_FALSE(inf.Synced());
  EXPECT_THAT(inf.State().last_error, HasSubstr("connection reset"));
  EXPECT_EQ(inf.State().last_error_time, clock_.Now());
  t_.watches.push_back(WatchScript{});
  r = inf.Step();
  EXPECT_EQ(r.kind, Kind::kWatched);
  EXPECT_THAT(t_.watch_paths.back(), HasSubstr("resourceVersion=236"));  // the ADDED event's
  EXPECT_TRUE(inf.Synced());
  EXPECT_EQ(t_.calls.size(), 2u);  // resumed, not relisted
}

TEST_F(InformerTest, GoneAsErrorEventRelistsAndReportsVanished) {
  PodInformer inf = Make();
  QueueList();
  inf.Step();
  t_.watches.push_back(WatchScript{FixtureLines("watch_error_410.jsonl")});
  t_.Reply200(PodList({"train-0", "new"}, "300"));
  StepResult r = inf.Step();
  EXPECT_EQ(r.kind, Kind::kRelisted);
  EXPECT_THAT(r.vanished, UnorderedElementsAre("default/infer-mig", "default/kueue-w0", "default/protected"));
  auto v = inf.Snapshot();
  EXPECT_THAT(Keys(v), ElementsAre("default/new", "default/train-0"));
  EXPECT_EQ(v.state.resource_version, "300");
  EXPECT_EQ(v.state.lists, 2);
  EXPECT_TRUE(inf.Synced());
}

TEST_F(InformerTest, GoneAsHttpStatusRelists) {
  PodInformer inf = Make();
  QueueList();
  inf.Step();
  t_.watches.push_back(WatchScript::Http(410, Fixture("error_410_gone.json")));
  t_.Reply200(PodList({"train-0"}, "301"));
  StepResult r = inf.Step();
  EXPECT_EQ(r.kind, Kind::kRelisted);
  EXPECT_EQ(r.vanished.size(), 3u);
  EXPECT_EQ(inf.State().resource_version, "301");
}

TEST_F(InformerTest, BackoffDoublesToTheCapAndResetsOnSuccess) {
  PodInformer inf = Make();
  QueueList();
  inf.Step();
  std::vector<int64_t> waits;
  for (int i = 0; i < 7; ++i) {
    t_.watches.push_back(WatchScript::Http(500, Fixture("error_500.json")));
    StepResult r = inf.Step();
    ASSERT_EQ(r.kind, Kind::kFailed);
    EXPECT_TRUE(absl::IsUnavailable(r.error));
    waits.push_back(r.wait.count());
  }
  EXPECT_THAT(waits, ElementsAre(1, 2, 4, 8, 16, 30, 30));
  EXPECT_EQ(inf.State().consecutive_failures, 7);
  EXPECT_THAT(inf.State().last_error, HasSubstr("HTTP 500"));
  t_.watches.push_back(WatchScript{});  // the server ends a healthy watch
  EXPECT_EQ(inf.Step().kind, Kind::kWatched);
  EXPECT_EQ(inf.State().consecutive_failures, 0);
  t_.watches.push_back(WatchScript{{}, absl::UnavailableError("reset")});
  EXPECT_EQ(inf.Step().wait, Seconds(1));
}

TEST_F(InformerTest, FailedFirstListBacksOffAndRetriesTheList) {
  PodInformer inf = Make();
  t_.replies.push_back(Reply{403, R"({"kind":"Status","message":"pods is forbidden","reason":"Forbidden"})"});
  StepResult r = inf.Step();
  EXPECT_EQ(r.kind, Kind::kFailed);
  EXPECT_TRUE(absl::IsPermissionDenied(r.error));
  EXPECT_FALSE(inf.State().listed);
  QueueList();
  EXPECT_EQ(inf.Step().kind, Kind::kListed);
}

// A list reply cut short (a proxy or an API server that closed early): the
// list fails and the cache is not listed (Observe then says the view is not
// current); the next whole reply lists.
TEST_F(InformerTest, ATruncatedListReplyFailsTheListAndTheNextWholeOneRecovers) {
  PodInformer inf = Make();
  const std::string page = Fixture("pods_page1.json");
  t_.Reply200(page.substr(0, page.size() / 2));
  StepResult r = inf.Step();
  EXPECT_EQ(r.kind, Kind::kFailed);
  EXPECT_THAT(std::string(Message(r.error)), HasSubstr("the reply is not a JSON object"));
  EXPECT_FALSE(inf.State().listed);
  EXPECT_FALSE(inf.Synced());
  QueueList();
  EXPECT_EQ(inf.Step().kind, Kind::kListed);
  EXPECT_TRUE(inf.Synced());
  EXPECT_EQ(Keys(inf.Snapshot()).size(), 4u);
}

// A relist whose second page is cut short: nothing is taken as vanished,
// the cache keeps what it had, and the next relist settles it.
TEST_F(InformerTest, ATruncatedRelistPageVanishesNothing) {
  PodInformer inf = Make();
  QueueList();
  inf.Step();
  t_.watches.push_back(WatchScript::Http(410, Fixture("error_410_gone.json")));
  t_.Reply200(Fixture("pods_page1.json"));
  const std::string page2 = Fixture("pods_page2.json");
  t_.Reply200(page2.substr(0, page2.size() - 5));
  StepResult r = inf.Step();
  EXPECT_EQ(r.kind, Kind::kFailed);
  EXPECT_THAT(r.vanished, IsEmpty());
  EXPECT_EQ(Keys(inf.Snapshot()).size(), 4u);
  t_.Reply200(PodList({"train-0"}, "301"));
  r = inf.Step();
  EXPECT_EQ(r.kind, Kind::kRelisted);
  EXPECT_EQ(r.vanished.size(), 3u);
}

TEST_F(InformerTest, StaleWhenNoContactWithinTheBound) {
  InformerOptions o;
  o.max_staleness = Seconds(60);
  PodInformer inf = Make(o);
  QueueList();
  inf.Step();
  EXPECT_TRUE(inf.Synced());
  clock_.Advance(Seconds(60));
  EXPECT_TRUE(inf.Synced());
  clock_.Advance(Seconds(1));
  EXPECT_FALSE(inf.Synced());
  t_.watches.push_back(WatchScript{});
  inf.Step();
  EXPECT_TRUE(inf.Synced());
}

TEST_F(InformerTest, UnreadableObjectsAreNamedAndKeptOut) {
  PodInformer inf = Make();
  QueueList();
  inf.Step();
  t_.watches.push_back(WatchScript{
      {R"({"type":"MODIFIED","object":{"metadata":{"name":"train-0","namespace":"default","resourceVersion":"240"},"spec":{"priority":"high"}}})"}});
  inf.Step();
  auto v = inf.Snapshot();
  EXPECT_FALSE(v.objects.contains("default/train-0"));
  ASSERT_TRUE(v.unreadable.contains("default/train-0"));
  EXPECT_THAT(v.unreadable.at("default/train-0"), HasSubstr("pod default/train-0: spec.priority"));
  t_.watches.push_back(WatchScript{
      {R"({"type":"DELETED","object":{"metadata":{"name":"train-0","namespace":"default","resourceVersion":"241"}}})"}});
  inf.Step();
  EXPECT_THAT(inf.Snapshot().unreadable, IsEmpty());
}

TEST_F(InformerTest, GarbageEventBacksOffAndResumes) {
  PodInformer inf = Make();
  QueueList();
  inf.Step();
  t_.watches.push_back(WatchScript{{"{not json"}});
  StepResult r = inf.Step();
  EXPECT_EQ(r.kind, Kind::kFailed);
  EXPECT_THAT(std::string(Message(r.error)), HasSubstr("watch pods: an event is not a JSON object"));
  t_.watches.push_back(WatchScript{});
  inf.Step();
  EXPECT_THAT(t_.watch_paths.back(), HasSubstr("resourceVersion=235"));
}

TEST_F(InformerTest, RunSleepsTheBackoffWithoutRealTime) {
  std::stop_source stop;
  FakeSleeper sleeper(&clock_, &stop, 3);
  InformerOptions o;
  o.namespace_name = "default";
  o.page_size = 2;
  PodInformer inf(&t_, &clock_, &sleeper, o);
  QueueList();  // then every watch fails: no watch queued
  inf.Run(stop.get_token());
  EXPECT_THAT(sleeper.waits, ElementsAre(1, 2, 4));
  EXPECT_TRUE(inf.State().listed);
  EXPECT_EQ(t_.watch_paths.size(), 3u);
}

TEST(InformerPathsTest, EachTypeWatchesItsCollection) {
  FakeTransport t;
  ManualClock clock(FromUnixSeconds(0));
  FakeSleeper sleeper(&clock);
  t.Reply200(R"({"metadata":{"resourceVersion":"1"},"items":[]})");
  t.Reply200(R"({"metadata":{"resourceVersion":"1"},"items":[]})");
  t.Reply200(R"({"metadata":{"resourceVersion":"1"},"items":[]})");
  t.Reply200(R"({"metadata":{"resourceVersion":"1"},"items":[]})");
  NodeInformer(&t, &clock, &sleeper).Step();
  PodDisruptionBudgetInformer(&t, &clock, &sleeper).Step();
  PriorityClassInformer(&t, &clock, &sleeper).Step();
  InformerOptions team;
  team.namespace_name = "team-a";
  PodGroupInformer(&t, &clock, &sleeper, team).Step();
  ASSERT_EQ(t.calls.size(), 4u);
  EXPECT_EQ(t.calls[0].path, "/api/v1/nodes?limit=500");
  EXPECT_EQ(t.calls[1].path, "/apis/policy/v1/poddisruptionbudgets?limit=500");
  EXPECT_EQ(t.calls[2].path, "/apis/scheduling.k8s.io/v1/priorityclasses?limit=500");
  EXPECT_EQ(t.calls[3].path, "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/team-a/podgroups?limit=500");
}

}  // namespace
}  // namespace tide::backends::kube

// The translation of Kubernetes objects into tide's jobs and nodes: rules on
// objects built here, and a golden test on objects recorded from the test bed.
#include "backends/kubernetes/kube_translate.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "backends/kubernetes/kube_fake_transport_test.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::backends::kube {
namespace {

using ::testing::ElementsAre;
using testing::Fixture;

const TideNames kNames("tide.dev");

TranslateOptions Options() {
  TranslateOptions o;
  o.pools = {ShapeOfPool(kNames, "a100-spot", "spot"), ShapeOfPool(kNames, "a100-od", "on-demand")};
  o.class_values = {100, 50, 10};  // high, normal, low
  o.notice_taints = {"aws-node-termination-handler/spot-itn"};
  return o;
}

Pod MakePod(std::string name, int gpus, std::string node = "", std::string phase = "Pending") {
  Pod p;
  p.meta.namespace_name = "ml";
  p.meta.name = std::move(name);
  p.meta.created = FromUnixSeconds(1000);
  p.scheduler_name = "tide";
  p.requests.gpus = gpus;
  p.node_name = std::move(node);
  p.phase = std::move(phase);
  p.meta.owners.push_back({"Job", "train", "uid-1", true});
  return p;
}

Pod InKueueGroup(Pod p, std::string group, int total) {
  p.meta.labels[std::string(kKueueGroupLabel)] = std::move(group);
  p.meta.annotations[std::string(kKueueCountAnnotation)] = std::to_string(total);
  return p;
}

Node MakeNode(std::string name, std::string pool, int gpus, bool ready = true) {
  Node n;
  n.meta.name = std::move(name);
  if (!pool.empty()) n.meta.labels[kNames.pool] = std::move(pool);
  n.capacity.gpus = gpus;
  n.allocatable.gpus = gpus;
  n.ready.status = ready ? "True" : "False";
  return n;
}

const ObservedJob* JobKeyed(const Observation& o, std::string_view key) {
  for (const auto& j : o.jobs) {
    if (j.key == key) return &j;
  }
  return nullptr;
}

// ---- Autoscale-only mode: another scheduler places the pods.

TranslateOptions AutoscaleOptions() {
  TranslateOptions o = Options();
  o.autoscale_only = true;
  return o;
}

Pod Unschedulable(Pod p) {
  p.scheduler_name = "default-scheduler";
  p.conditions.push_back({"PodScheduled", "False", "Unschedulable", "0/3 nodes are available"});
  return p;
}

TEST(KubeTranslateTest, AutoscaleOnlyAGangWaitsOnceItsSchedulerFoundEveryPodUnschedulable) {
  ClusterObjects objects;
  objects.pods = {Unschedulable(InKueueGroup(MakePod("g-0", 8), "g", 2)),
                  Unschedulable(InKueueGroup(MakePod("g-1", 8), "g", 2))};
  Observation o = Translate(objects, AutoscaleOptions());
  const ObservedJob* j = JobKeyed(o, "ml/g");
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->phase, JobPhase::kWaiting);
  EXPECT_EQ(j->workers, 2);
  EXPECT_EQ(j->gpus_per_worker, 8);
  // The same pods are not tide's in schedule mode: another scheduler's.
  EXPECT_EQ(JobKeyed(Translate(objects, Options()), "ml/g"), nullptr);
}

TEST(KubeTranslateTest, AutoscaleOnlyAGangWithAPodNotTriedYetIsHeld) {
  ClusterObjects objects;
  Pod untried = InKueueGroup(MakePod("g-1", 8), "g", 2);
  untried.scheduler_name = "default-scheduler";
  objects.pods = {Unschedulable(InKueueGroup(MakePod("g-0", 8), "g", 2)), untried};
  Observation o1 = Translate(objects, AutoscaleOptions());
  const ObservedJob* j = JobKeyed(o1, "ml/g");
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->phase, JobPhase::kHeld);
  EXPECT_EQ(j->waits_for, "its scheduler (default-scheduler) to try 1 of its 2 unbound pods");
  // Nor is a pod whose condition says something else.
  objects.pods[1] = Unschedulable(objects.pods[1]);
  objects.pods[1].conditions.back().reason = "SchedulerError";
  Observation again = Translate(objects, AutoscaleOptions());
  EXPECT_EQ(JobKeyed(again, "ml/g")->phase, JobPhase::kHeld);
}

TEST(KubeTranslateTest, AutoscaleOnlyAHalfPlacedGangAsksOnlyForItsUnplacedPods) {
  // kube-scheduler placed one pod of three on the one free node: the gang
  // needs capacity for the other two, all of it or none.
  ClusterObjects objects;
  Pod placed = InKueueGroup(MakePod("g-0", 8, "n1", "Running"), "g", 3);
  placed.scheduler_name = "default-scheduler";
  objects.pods = {placed, Unschedulable(InKueueGroup(MakePod("g-1", 8), "g", 3)),
                  Unschedulable(InKueueGroup(MakePod("g-2", 8), "g", 3))};
  objects.nodes = {MakeNode("n1", "a100-od", 8)};
  Observation o = Translate(objects, AutoscaleOptions());
  const ObservedJob* j = JobKeyed(o, "ml/g");
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->phase, JobPhase::kWaiting);
  EXPECT_EQ(j->workers, 2);
  EXPECT_TRUE(j->nodes.empty());
  ASSERT_EQ(o.nodes.size(), 1u);
  EXPECT_TRUE(o.nodes[0].busy);  // the placed pod keeps its node
  EXPECT_EQ(o.nodes[0].gpus_used, 8);
  // Once every pod is placed, it is a running gang like any other.
  for (Pod& p : objects.pods) {
    p.node_name = "n1";
    p.phase = "Running";
  }
  Observation o2 = Translate(objects, AutoscaleOptions());
  j = JobKeyed(o2, "ml/g");
  EXPECT_EQ(j->phase, JobPhase::kRunning);
  EXPECT_EQ(j->workers, 3);
}

TEST(KubeTranslateTest, AutoscaleOnlyVolcanoGroupsTakeTheirSizeFromThePodGroup) {
  ClusterObjects objects;
  for (const char* name : {"v-0", "v-1"}) {
    Pod p = Unschedulable(MakePod(name, 4));
    p.scheduler_name = "volcano";
    p.meta.annotations[std::string(kVolcanoGroupAnnotation)] = "llm";
    objects.pods.push_back(p);
  }
  Observation o3 = Translate(objects, AutoscaleOptions());
  const ObservedJob* j = JobKeyed(o3, "ml/llm");
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->phase, JobPhase::kHeld);
  EXPECT_EQ(j->waits_for, "its Volcano PodGroup ml/llm does not exist");
  VolcanoPodGroup g;
  g.meta.namespace_name = "ml";
  g.meta.name = "llm";
  g.min_member = 3;
  objects.volcano_groups = {g};
  Observation o4 = Translate(objects, AutoscaleOptions());
  j = JobKeyed(o4, "ml/llm");
  EXPECT_EQ(j->phase, JobPhase::kHeld);
  EXPECT_EQ(j->waits_for, "its pods: 2 of 3 created");
  objects.volcano_groups[0].min_member = 2;
  Observation o5 = Translate(objects, AutoscaleOptions());
  j = JobKeyed(o5, "ml/llm");
  EXPECT_EQ(j->phase, JobPhase::kWaiting);
  EXPECT_EQ(j->workers, 2);
  // A scheduler-plugins PodGroup of the same name is another object.
  PodGroup other;
  other.meta = g.meta;
  other.min_member = 9;
  objects.pod_groups = {other};
  Observation last = Translate(objects, AutoscaleOptions());
  EXPECT_EQ(JobKeyed(last, "ml/llm")->workers, 2);
}

TEST(KubeTranslateTest, AutoscaleOnlyPodsWithoutGpusAndDaemonsAreNotJobs) {
  ClusterObjects objects;
  Pod web = Unschedulable(MakePod("web", 0));
  Pod daemon = Unschedulable(MakePod("dcgm", 1));
  daemon.meta.owners = {{"DaemonSet", "dcgm", "uid-2", true}};
  Pod other_ns = Unschedulable(MakePod("x", 8));
  other_ns.meta.namespace_name = "prod";
  objects.pods = {web, daemon, other_ns};
  TranslateOptions o = AutoscaleOptions();
  EXPECT_EQ(Translate(objects, o).jobs.size(), 3u - 2u);
  o.namespaces = {"ml"};
  EXPECT_TRUE(Translate(objects, o).jobs.empty());
}

TEST(KubeTranslateTest, GangsComeFromPodGroupsKueueGroupsOrOnePod) {
  Pod a = MakePod("a", 8);
  a.meta.labels[std::string(kPodGroupLabel)] = "llm";
  GangOf g = GangOfPod(a);
  EXPECT_EQ(g.key, "ml/llm");
  EXPECT_TRUE(g.from_pod_group);
  g = GangOfPod(InKueueGroup(MakePod("b", 8), "sweep", 3));
  EXPECT_EQ(g.key, "ml/sweep");
  EXPECT_EQ(g.size, 3);
  g = GangOfPod(MakePod("c", 8));
  EXPECT_EQ(g.key, "ml/c");
  EXPECT_EQ(g.size, 1);
}

TEST(KubeTranslateTest, AWholeGangWaitsAsOneJob) {
  ClusterObjects objs;
  objs.pods = {InKueueGroup(MakePod("w1", 8), "llm", 2), InKueueGroup(MakePod("w0", 8), "llm", 2)};
  objs.pods[1].meta.created = FromUnixSeconds(900);
  Observation o = Translate(objs, Options());
  ASSERT_EQ(o.jobs.size(), 1u);
  const ObservedJob& j = o.jobs[0];
  EXPECT_EQ(j.key, "ml/llm");
  EXPECT_EQ(j.name, "llm");
  EXPECT_EQ(j.phase, JobPhase::kWaiting);
  EXPECT_EQ(j.workers, 2);
  EXPECT_EQ(j.gpus_per_worker, 8);
  EXPECT_EQ(j.submit, FromUnixSeconds(900));  // its first pod's
  EXPECT_EQ(j.pools, PoolSet{0b11});
  EXPECT_EQ(j.team, "ml");
  EXPECT_TRUE(j.requeueable);  // a Job's pods come back when evicted
}

TEST(KubeTranslateTest, AGangMissingPodsOrItsPodGroupIsHeldSayingWhy) {
  ClusterObjects objs;
  objs.pods = {InKueueGroup(MakePod("w0", 8), "llm", 4)};
  Pod g = MakePod("g0", 8);
  g.meta.labels[std::string(kPodGroupLabel)] = "pg";
  objs.pods.push_back(g);
  Observation o = Translate(objs, Options());
  ASSERT_EQ(o.jobs.size(), 2u);
  EXPECT_EQ(JobKeyed(o, "ml/llm")->phase, JobPhase::kHeld);
  EXPECT_EQ(JobKeyed(o, "ml/llm")->waits_for, "its pods: 1 of 4 created");
  EXPECT_EQ(JobKeyed(o, "ml/pg")->phase, JobPhase::kHeld);
  EXPECT_EQ(JobKeyed(o, "ml/pg")->waits_for, "its PodGroup ml/pg does not exist");

  PodGroup pg;
  pg.meta.namespace_name = "ml";
  pg.meta.name = "pg";
  pg.min_member = 1;
  objs.pod_groups.push_back(pg);
  o = Translate(objs, Options());
  EXPECT_EQ(JobKeyed(o, "ml/pg")->phase, JobPhase::kWaiting);
  EXPECT_EQ(JobKeyed(o, "ml/pg")->workers, 1);
}

TEST(KubeTranslateTest, GangsTideCannotPlaceAreHeldNotErrors) {
  ClusterObjects objs;
  objs.pods = {InKueueGroup(MakePod("a0", 8), "mixed", 2), InKueueGroup(MakePod("a1", 4), "mixed", 2)};
  Pod two_slices = MakePod("m", 0);
  two_slices.requests.mig["1g.5gb"] = 2;
  Pod one_slice = MakePod("s", 0);
  one_slice.requests.mig["3g.20gb"] = 1;
  objs.pods.push_back(two_slices);
  objs.pods.push_back(one_slice);
  Observation o = Translate(objs, Options());
  EXPECT_EQ(JobKeyed(o, "ml/mixed")->phase, JobPhase::kHeld);
  EXPECT_THAT(JobKeyed(o, "ml/mixed")->waits_for, ::testing::HasSubstr("ask for different GPUs (a0 and a1)"));
  EXPECT_EQ(JobKeyed(o, "ml/m")->phase, JobPhase::kHeld);
  EXPECT_THAT(JobKeyed(o, "ml/m")->waits_for, ::testing::HasSubstr("more than one MIG slice"));
  const ObservedJob* s = JobKeyed(o, "ml/s");
  EXPECT_EQ(s->phase, JobPhase::kWaiting);
  EXPECT_EQ(s->slice, "3g.20gb");
}

TEST(KubeTranslateTest, PhasesFollowThePods) {
  ClusterObjects objs;
  objs.pods = {InKueueGroup(MakePod("r0", 8, "n2", "Running"), "run", 2),
               InKueueGroup(MakePod("r1", 8, "n1", "Running"), "run", 2),
               InKueueGroup(MakePod("s0", 8, "n1", "Running"), "start", 2),
               InKueueGroup(MakePod("s1", 8, "n2", "Pending"), "start", 2),
               MakePod("done", 8, "n1", "Succeeded")};
  Pod stopping = MakePod("stop", 8, "n1", "Running");
  stopping.meta.deleted = FromUnixSeconds(2000);
  objs.pods.push_back(stopping);
  Pod gated = MakePod("gated", 8);
  gated.scheduling_gates = {"example.com/quota"};
  objs.pods.push_back(gated);
  Observation o = Translate(objs, Options());
  const ObservedJob* run = JobKeyed(o, "ml/run");
  EXPECT_EQ(run->phase, JobPhase::kRunning);
  EXPECT_THAT(run->nodes, ElementsAre("n1", "n2"));  // sorted
  EXPECT_EQ(run->workers, 2);
  EXPECT_EQ(JobKeyed(o, "ml/start")->phase, JobPhase::kStarting);
  EXPECT_EQ(JobKeyed(o, "ml/done")->phase, JobPhase::kDone);
  EXPECT_EQ(JobKeyed(o, "ml/stop")->phase, JobPhase::kStopping);
  EXPECT_EQ(JobKeyed(o, "ml/gated")->phase, JobPhase::kHeld);
  EXPECT_EQ(JobKeyed(o, "ml/gated")->waits_for, "scheduling gates: example.com/quota");
}

TEST(KubeTranslateTest, MarkersAndOwnership) {
  ClusterObjects objs;
  Pod safe = MakePod("safe", 1);
  safe.meta.annotations[std::string(kSafeToEvict)] = "false";
  Pod karpenter = MakePod("karpenter", 1);
  karpenter.meta.annotations[std::string(kDoNotDisrupt)] = "true";
  Pod own = MakePod("own", 1);
  own.meta.annotations[kNames.protect] = "true";
  own.meta.annotations[kNames.preemptible] = "false";
  own.meta.annotations[kNames.checkpoints] = "true";
  Pod evictable = MakePod("evictable", 1);
  evictable.meta.annotations[std::string(kSafeToEvict)] = "true";
  Pod bare = MakePod("bare", 1);
  bare.meta.owners.clear();
  objs.pods = {safe, karpenter, own, evictable, bare};
  Observation o = Translate(objs, Options());
  EXPECT_TRUE(JobKeyed(o, "ml/safe")->is_protected);
  EXPECT_TRUE(JobKeyed(o, "ml/karpenter")->is_protected);
  EXPECT_TRUE(JobKeyed(o, "ml/own")->is_protected);
  EXPECT_EQ(JobKeyed(o, "ml/own")->preemptible, std::optional<bool>(false));
  EXPECT_EQ(JobKeyed(o, "ml/own")->checkpoints, std::optional<bool>(true));
  EXPECT_FALSE(JobKeyed(o, "ml/evictable")->is_protected);
  EXPECT_FALSE(JobKeyed(o, "ml/evictable")->preemptible.has_value());  // the class decides
  EXPECT_FALSE(JobKeyed(o, "ml/bare")->requeueable);  // evicted, nothing would recreate it
}

TEST(KubeTranslateTest, PriorityPicksTheClassAtOrBelowIt) {
  ClusterObjects objs;
  for (auto [name, prio] : {std::pair{"p1000", 1000}, {"p60", 60}, {"p10", 10}, {"p0", 0}}) {
    Pod p = MakePod(name, 1);
    p.priority = prio;
    p.priority_class_name = name;
    objs.pods.push_back(p);
  }
  Observation o = Translate(objs, Options());
  EXPECT_EQ(JobKeyed(o, "ml/p1000")->priority_class, 0);
  EXPECT_EQ(JobKeyed(o, "ml/p60")->priority_class, 1);
  EXPECT_EQ(JobKeyed(o, "ml/p10")->priority_class, 2);
  EXPECT_EQ(JobKeyed(o, "ml/p0")->priority_class, -1);  // the configured default
  EXPECT_THAT(JobKeyed(o, "ml/p60")->attributes,
              ElementsAre(std::pair<std::string, std::string>{"namespace", "ml"},
                          std::pair<std::string, std::string>{"priorityClassName", "p60"}));
}

TEST(KubeTranslateTest, SelectorsAffinityAndTaintsChooseThePools) {
  PoolShape spot = ShapeOfPool(kNames, "a100-spot", "spot");
  spot.taints.push_back({"example.com/spot", "true", "NoSchedule"});
  const PoolShape od = ShapeOfPool(kNames, "a100-od", "on-demand");
  Pod p = MakePod("p", 8);
  EXPECT_FALSE(PodFitsPool(p, spot));  // does not tolerate the spot taint
  EXPECT_TRUE(PodFitsPool(p, od));
  p.tolerations.push_back({"example.com/spot", "Exists", "", "", std::nullopt});
  EXPECT_TRUE(PodFitsPool(p, spot));
  p.node_selector["karpenter.sh/capacity-type"] = "on-demand";
  EXPECT_FALSE(PodFitsPool(p, spot));
  EXPECT_TRUE(PodFitsPool(p, od));
  p.node_selector.clear();
  p.required_affinity = {{{kNames.pool, "In", {"a100-spot"}, false}}, {{"zone", "Exists", {}, false}}};
  EXPECT_TRUE(PodFitsPool(p, spot));
  EXPECT_FALSE(PodFitsPool(p, od));
  p.required_affinity = {{{kNames.pool, "NotIn", {"a100-spot"}, false}}};
  EXPECT_FALSE(PodFitsPool(p, spot));
  EXPECT_TRUE(PodFitsPool(p, od));
  // Pinned to a node by name: no node tide buys will do.
  p.required_affinity = {{{"metadata.name", "In", {"n1"}, true}}};
  EXPECT_FALSE(PodFitsPool(p, od));

  ClusterObjects objs;
  Pod sel = MakePod("sel", 8);
  sel.node_selector[kNames.pool] = "a100-od";
  objs.pods = {sel};
  EXPECT_EQ(Translate(objs, Options()).jobs[0].pools, PoolSet{0b10});
}

TEST(KubeTranslateTest, OnlyPodsNamingTideInItsNamespacesAreJobsButEveryPodUsesItsNode) {
  ClusterObjects objs;
  Pod other = MakePod("other", 2, "n1", "Running");
  other.scheduler_name = "default-scheduler";
  Pod elsewhere = MakePod("elsewhere", 8);
  elsewhere.meta.namespace_name = "web";
  Pod daemon = MakePod("dcgm", 0, "n2", "Running");
  daemon.meta.owners = {{"DaemonSet", "dcgm-exporter", "uid-2", true}};
  daemon.scheduler_name = "default-scheduler";
  objs.pods = {other, elsewhere, daemon, MakePod("mine", 8)};
  objs.nodes = {MakeNode("n1", "a100-od", 8), MakeNode("n2", "a100-od", 8)};
  TranslateOptions opts = Options();
  opts.namespaces = {"ml"};
  Observation o = Translate(objs, opts);
  ASSERT_EQ(o.jobs.size(), 1u);
  EXPECT_EQ(o.jobs[0].key, "ml/mine");
  EXPECT_EQ(o.nodes[0].gpus_used, 2);
  EXPECT_TRUE(o.nodes[0].busy);
  EXPECT_FALSE(o.nodes[1].busy);  // a DaemonSet's pod does not keep a node
}

TEST(KubeTranslateTest, NodesBootUntilReadyWithGpusAndReportWhoCordonedThem) {
  ClusterObjects objs;
  Node not_ready = MakeNode("booting", "a100-spot", 8, false);
  Node no_gpus = MakeNode("plugin-starting", "a100-spot", 8);
  no_gpus.allocatable.gpus = 0;
  Node released = MakeNode("released", "a100-od", 8);
  released.unschedulable = true;
  released.meta.annotations[kNames.cordon] = "release";
  Node draining = MakeNode("draining", "a100-od", 8);
  draining.unschedulable = true;
  draining.meta.annotations[kNames.cordon] = "drain";
  Node admin = MakeNode("admin", "a100-od", 8);
  admin.unschedulable = true;
  Node gone = MakeNode("gone", "a100-od", 8);
  gone.meta.deleted = FromUnixSeconds(5);
  Node foreign = MakeNode("cpu", "", 0);
  foreign.meta.labels[kNames.pool] = "no-such-pool";
  objs.nodes = {not_ready, no_gpus, released, draining, admin, gone, foreign, MakeNode("ok", "a100-spot", 8)};
  objs.pods = {MakePod("busy", 8, "draining", "Running")};
  Observation o = Translate(objs, Options());
  ASSERT_EQ(o.nodes.size(), 8u);
  EXPECT_EQ(o.nodes[0].condition, NodeCondition::kBooting);
  EXPECT_EQ(o.nodes[0].pool, 0);
  EXPECT_EQ(o.nodes[1].condition, NodeCondition::kBooting);  // Ready, but no GPU allocatable yet
  EXPECT_EQ(o.nodes[2].condition, NodeCondition::kCordoned);
  EXPECT_EQ(o.nodes[2].cordon, Cause::kRelease);
  EXPECT_EQ(o.nodes[3].condition, NodeCondition::kDraining);
  EXPECT_EQ(o.nodes[3].cordon, Cause::kDrain);
  EXPECT_EQ(o.nodes[4].cordon, Cause::kOther);  // not tide's: left alone
  EXPECT_EQ(o.nodes[5].condition, NodeCondition::kGone);
  EXPECT_EQ(o.nodes[6].pool, -1);
  EXPECT_EQ(o.nodes[6].condition, NodeCondition::kReady);  // not tide's: no GPU needed
  EXPECT_EQ(o.nodes[7].condition, NodeCondition::kReady);
}

TEST(KubeTranslateTest, NoticeTaintsMarkNodes) {
  Node aws = MakeNode("aws", "a100-spot", 8);
  aws.taints.push_back({"aws-node-termination-handler/spot-itn", "", "NoSchedule"});
  Node own = MakeNode("own", "a100-spot", 8);
  own.taints.push_back({kNames.interruption, "", "NoSchedule"});
  Node gke = MakeNode("gke", "a100-spot", 8);
  gke.taints.push_back({"cloud.google.com/impending-node-termination", "", "NoSchedule"});  // not configured here
  EXPECT_THAT(NoticedNodes({aws, own, gke, MakeNode("calm", "a100-spot", 8)}, Options()), ElementsAre("aws", "own"));
}

// The golden test: objects recorded from the test bed, translated, written
// out one line per node and job. TIDE_UPDATE_GOLDEN=1 rewrites the file.
std::string Describe(const Observation& o) {
  std::string out;
  for (const auto& n : o.nodes) {
    StrAppend(&out, "node ", n.name, " pool=", n.pool, " ", NodeConditionName(n.condition), " gpus=", n.gpus,
              " used=", n.gpus_used, " busy=", n.busy, " cordon=", CauseName(n.cordon), " provider_id=", n.provider_id,
              "\n");
  }
  for (const auto& j : o.jobs) {
    StrAppend(&out, "job ", j.key, " ", JobPhaseName(j.phase), " workers=", j.workers, " gpus_per_worker=",
              j.gpus_per_worker, " slice=", j.slice, " class=", j.priority_class, " protected=", j.is_protected,
              " requeueable=", j.requeueable, " pools=", j.pools == kAnyPool ? std::string("any") : std::to_string(j.pools),
              " nodes=", StrJoin(j.nodes, ","),
              " members=", StrJoin(j.members, ","), " waits_for=", j.waits_for, "\n");
  }
  return out;
}

TEST(KubeTranslateTest, RecordedObjectsGolden) {
  ClusterObjects objs;
  for (const char* f : {"pod_train_0.json", "pod_protected.json", "pod_kueue_w0.json", "pod_infer_mig.json"}) {
    auto p = ParsePodText(Fixture(f));
    ASSERT_TRUE(p.ok()) << f << ": " << p.status();
    objs.pods.push_back(*p);
  }
  auto n = ParseNodeText(Fixture("node_kwok.json"));
  ASSERT_TRUE(n.ok()) << n.status();
  objs.nodes.push_back(*n);
  TranslateOptions opts = Options();
  opts.pools = {ShapeOfPool(kNames, "a100x8-spot", "spot"), ShapeOfPool(kNames, "a100x8-ondemand", "on-demand")};
  const std::string got = Describe(Translate(objs, opts));
  const std::string path = StrCat(TIDE_SOURCE_DIR, "/src/backends/kubernetes/testdata/observation.golden");
  if (std::getenv("TIDE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << got;
  }
  EXPECT_EQ(got, Fixture("observation.golden")) << "TIDE_UPDATE_GOLDEN=1 rewrites " << path;
}

}  // namespace
}  // namespace tide::backends::kube

// The `live:` section: live.jobs, the keys that moved there from
// live.slurm (with their notes), live.backend and provider.slurm_conf.
#include <string>

#include "config/config.h"
#include "core/status.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::StartsWith;

std::string Msg(const Status& s) { return std::string(Message(s)); }

constexpr char kMinimal[] = R"(pools:
  - name: gpu
    instance_type: {gpus: 8}
    price_per_hour: 100
)";

// One pool and a live section with every backend-neutral job setting.
constexpr char kLiveJobs[] = R"(pools:
  - {name: gpu, instance_type: {gpus: 8}, price_per_hour: 100}
live:
  backend: slurm
  jobs:
    classes:
      - {partition: prod, class: high}
      - {qos: scavenger, account: ml, class: low}
    protect_marker: "keep:me"
    checkpoint_signal: USR2
    checkpoint_grace: 90s
  slurm: {conf: etc/slurm.conf, pools: {gpu: "n[1-50]"}}
)";

TEST(LiveConfigTest, KubernetesSection) {
  auto c = ParseConfig(R"(pools:
  - {name: gpu, instance_type: {gpus: 8}, price_per_hour: 100}
live:
  kubernetes:
    kubeconfig: kube/admin.conf
    context: lab
    namespaces: [training, research]
    scheduler_name: tide-gpu
    label_prefix: tide.example.com
    notice_taints: [example.com/spot-notice]
    timeout: 5s
    mode: autoscale
    leader_election: {lease: tide, namespace: ops, identity: a, duration: 20s, renew_deadline: 12s, retry: 3s}
  provider: {kind: kwok}
  metrics: {prometheus: "http://127.0.0.1:9090", pod_label: exported_pod, namespace_label: exported_namespace}
)", "lab/cluster.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  const LiveSettings& l = c->live;
  EXPECT_EQ(l.backend, "kubernetes");  // the section present chooses it
  const KubernetesSettings& k = l.kubernetes;
  EXPECT_EQ(k.kubeconfig, "lab/kube/admin.conf");  // relative to the configuration
  EXPECT_EQ(k.context, "lab");
  EXPECT_THAT(k.namespaces, ElementsAre("training", "research"));
  EXPECT_EQ(k.scheduler_name, "tide-gpu");
  EXPECT_EQ(k.label_prefix, "tide.example.com");
  EXPECT_THAT(k.notice_taints, ElementsAre("example.com/spot-notice"));
  EXPECT_EQ(k.timeout, Seconds(5));
  EXPECT_EQ(k.mode, "autoscale");
  EXPECT_EQ(k.leader_election.lease, "tide");
  EXPECT_EQ(k.leader_election.namespace_name, "ops");
  EXPECT_EQ(k.leader_election.identity, "a");
  EXPECT_EQ(k.leader_election.duration, Seconds(20));
  EXPECT_EQ(k.leader_election.renew_deadline, Seconds(12));
  EXPECT_EQ(k.leader_election.retry, Seconds(3));
  EXPECT_EQ(l.provider.kind, "kwok");
  EXPECT_EQ(l.metrics.pod_label, "exported_pod");
  EXPECT_EQ(l.metrics.namespace_label, "exported_namespace");
}

TEST(LiveConfigTest, KubernetesDefaults) {
  auto c = ParseConfig(std::string(kMinimal) + "live:\n  backend: kubernetes\n", "cluster.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  const KubernetesSettings& k = c->live.kubernetes;
  EXPECT_EQ(c->live.backend, "kubernetes");
  EXPECT_EQ(k.kubeconfig, "");  // in-cluster
  EXPECT_THAT(k.namespaces, IsEmpty());  // every namespace
  EXPECT_EQ(k.scheduler_name, "tide");
  EXPECT_EQ(k.label_prefix, "tide.dev");
  EXPECT_THAT(k.notice_taints,
              ElementsAre("aws-node-termination-handler/spot-itn", "cloud.google.com/impending-node-termination"));
  EXPECT_EQ(k.timeout, Seconds(10));
  EXPECT_EQ(k.mode, "schedule");
  EXPECT_EQ(k.leader_election.lease, "");  // no election: one replica
  EXPECT_EQ(k.leader_election.namespace_name, "tide-system");
  EXPECT_EQ(k.leader_election.duration, Seconds(15));  // client-go's defaults
  EXPECT_EQ(k.leader_election.renew_deadline, Seconds(10));
  EXPECT_EQ(k.leader_election.retry, Seconds(2));
  EXPECT_EQ(c->live.metrics.pod_label, "pod");  // the DCGM exporter's
  EXPECT_EQ(c->live.metrics.namespace_label, "namespace");
}

TEST(LiveConfigTest, LiveJobsSection) {
  auto c = ParseConfig(kLiveJobs, "lab/cluster.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  const LiveSettings& l = c->live;
  EXPECT_EQ(l.backend, "slurm");
  ASSERT_EQ(l.jobs.classes.size(), 2u);
  EXPECT_THAT(l.jobs.classes[0].match, ElementsAre(Pair("partition", "prod")));
  EXPECT_EQ(l.jobs.classes[0].priority_class, "high");
  EXPECT_EQ(l.jobs.classes[0].where, "lab/cluster.yaml:7:9: live.jobs.classes[0]");
  // Attribute names are the backend's to check, not the configuration's.
  EXPECT_THAT(l.jobs.classes[1].match, ElementsAre(Pair("qos", "scavenger"), Pair("account", "ml")));
  EXPECT_EQ(l.jobs.classes[1].priority_class, "low");
  EXPECT_EQ(l.jobs.classes[1].where, "lab/cluster.yaml:8:9: live.jobs.classes[1]");
  EXPECT_EQ(l.jobs.protect_marker, "keep:me");
  EXPECT_EQ(l.jobs.checkpoint_signal, "USR2");
  EXPECT_EQ(l.jobs.checkpoint_grace, Seconds(90));
  EXPECT_THAT(c->notes, IsEmpty());
  // The local provider's slurmd reads the cluster's slurm.conf unless told otherwise.
  EXPECT_EQ(l.slurm.conf, "lab/etc/slurm.conf");
  EXPECT_EQ(l.provider.slurm_conf, "lab/etc/slurm.conf");
}

TEST(LiveConfigTest, LiveDefaults) {
  auto c = ParseConfig(std::string(kMinimal) + "live:\n  slurm: {pools: {gpu: \"n[1-50]\"}}\n", "d.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  const LiveSettings& l = c->live;
  EXPECT_EQ(l.backend, "slurm");
  EXPECT_THAT(l.jobs.classes, IsEmpty());
  EXPECT_EQ(l.jobs.protect_marker, "tide:protected");
  EXPECT_EQ(l.jobs.checkpoint_signal, "USR1");
  EXPECT_EQ(l.jobs.checkpoint_grace, Seconds(60));
  EXPECT_EQ(l.slurm.conf, "");
  EXPECT_EQ(l.provider.slurm_conf, "");
  EXPECT_THAT(c->notes, IsEmpty());
}

TEST(LiveConfigTest, ProviderSlurmConfOverridesSlurmConf) {
  auto c = ParseConfig(std::string(kMinimal) +
                           "live:\n  slurm: {conf: /etc/slurm/slurm.conf, pools: {gpu: \"n[1-50]\"}}\n"
                           "  provider: {kind: local, slurm_conf: nodes/slurm.conf}\n",
                       "lab/p.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->live.slurm.conf, "/etc/slurm/slurm.conf");
  EXPECT_EQ(c->live.provider.slurm_conf, "lab/nodes/slurm.conf");
  // Without provider.slurm_conf, the provider takes live.slurm.conf.
  c = ParseConfig(std::string(kMinimal) +
                    "live:\n  slurm: {conf: /etc/slurm/slurm.conf, pools: {gpu: \"n[1-50]\"}}\n"
                    "  provider: {kind: local}\n",
                  "lab/p.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->live.provider.slurm_conf, "/etc/slurm/slurm.conf");
}

TEST(LiveConfigTest, OldSlurmJobKeysMoveToLiveJobsWithNotes) {
  auto c = ParseConfig(R"(pools:
  - {name: gpu, instance_type: {gpus: 8}, price_per_hour: 100}
live:
  slurm:
    pools: {gpu: "n[1-50]"}
    classes: [{partition: prod, class: high}, {qos: scavenger, class: low}, {partition: a, qos: b, class: low}]
    protect_comment: "keep:me"
    checkpoint_signal: TERM
    checkpoint_grace: 30s
)",
                       "cluster.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  const JobSettings& j = c->live.jobs;
  ASSERT_EQ(j.classes.size(), 3u);
  EXPECT_THAT(j.classes[0].match, ElementsAre(Pair("partition", "prod")));
  EXPECT_EQ(j.classes[0].priority_class, "high");
  EXPECT_EQ(j.classes[0].where, "cluster.yaml:6:15: live.slurm.classes[0]");
  EXPECT_THAT(j.classes[1].match, ElementsAre(Pair("qos", "scavenger")));
  EXPECT_EQ(j.classes[1].priority_class, "low");
  EXPECT_THAT(j.classes[2].match, ElementsAre(Pair("partition", "a"), Pair("qos", "b")));
  EXPECT_EQ(j.protect_marker, "keep:me");
  EXPECT_EQ(j.checkpoint_signal, "TERM");
  EXPECT_EQ(j.checkpoint_grace, Seconds(30));
  // One note per moved key, in the file's order.
  EXPECT_THAT(c->notes,
              ElementsAre("cluster.yaml:6:5: live.slurm.classes is now live.jobs.classes; read as such (move it to "
                          "silence this note)",
                          "cluster.yaml:7:5: live.slurm.protect_comment is now live.jobs.protect_marker; read as such "
                          "(move it to silence this note)",
                          "cluster.yaml:8:5: live.slurm.checkpoint_signal is now live.jobs.checkpoint_signal; read as "
                          "such (move it to silence this note)",
                          "cluster.yaml:9:5: live.slurm.checkpoint_grace is now live.jobs.checkpoint_grace; read as "
                          "such (move it to silence this note)"));
}

TEST(LiveConfigTest, OldAndNewKeysForDifferentSettingsCombine) {
  auto c = ParseConfig(R"(pools:
  - {name: gpu, instance_type: {gpus: 8}, price_per_hour: 100}
live:
  jobs: {classes: [{partition: prod, class: high}]}
  slurm: {pools: {gpu: "n[1-50]"}, checkpoint_grace: 10s}
)",
                       "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->live.jobs.classes.size(), 1u);
  EXPECT_EQ(c->live.jobs.checkpoint_grace, Seconds(10));
  EXPECT_THAT(c->notes, ElementsAre(StartsWith("c.yaml:5:36: live.slurm.checkpoint_grace is now live.jobs.checkpoint_grace")));
}

TEST(LiveConfigTest, BundledLiveExampleUsesLiveJobs) {
  auto c = LoadConfig(StrCat(TIDE_SOURCE_DIR, "/examples/live/cluster.yaml"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->notes, IsEmpty());
  EXPECT_FALSE(c->live.jobs.classes.empty());
}

struct BadLiveCase {
  std::string name;
  std::string text;
  std::string prefix;  // "bad.yaml:LINE:COL: "
  std::string part;    // the field path and the complaint
};

class BadLiveConfigTest : public ::testing::TestWithParam<BadLiveCase> {};

TEST_P(BadLiveConfigTest, ErrorNamesFileLineColumnAndField) {
  const auto& c = GetParam();
  auto r = ParseConfig(c.text, "bad.yaml");
  ASSERT_FALSE(r.ok()) << "parsed:\n" << c.text;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(r.status()), StartsWith(c.prefix));
  EXPECT_THAT(Msg(r.status()), HasSubstr(c.part));
}

// One good pool, to use as pools[0].
#define GOOD_POOL "  - {name: gpu, instance_type: {gpus: 8}, price_per_hour: 100}\n"

INSTANTIATE_TEST_SUITE_P(
    Cases, BadLiveConfigTest,
    ::testing::Values(
        BadLiveCase{"LiveUnknownBackend",
                    "pools:\n" GOOD_POOL "live:\n  backend: pbs\n  slurm: {pools: {gpu: n1}}\n",
                    "bad.yaml:4:12: ", "live.backend: unknown backend 'pbs'; expected one of: slurm, kubernetes"},
        BadLiveCase{"LiveBothBackendsWithoutChoosing",
                    "pools:\n" GOOD_POOL "live:\n  slurm: {pools: {gpu: n1}}\n  kubernetes: {}\n",
                    "bad.yaml:4:3: ", "live: gives both `slurm:` and `kubernetes:`; say which"},
        BadLiveCase{"LiveSlurmSectionUnderKubernetes",
                    "pools:\n" GOOD_POOL "live:\n  backend: kubernetes\n  slurm: {pools: {gpu: n1}}\n",
                    "bad.yaml:5:3: ", "live.slurm: is for `backend: slurm`"},
        BadLiveCase{"LiveKubernetesSectionUnderSlurm",
                    "pools:\n" GOOD_POOL "live:\n  backend: slurm\n  slurm: {pools: {gpu: n1}}\n  kubernetes: {}\n",
                    "bad.yaml:6:3: ", "live.kubernetes: is for `backend: kubernetes`"},
        BadLiveCase{"KubernetesUnknownKey", "pools:\n" GOOD_POOL "live:\n  kubernetes: {namespace: a}\n",
                    "bad.yaml:4:16: ", "live.kubernetes.namespace: unknown field (did you mean 'namespaces'?)"},
        BadLiveCase{"KubernetesBadNamespace", "pools:\n" GOOD_POOL "live:\n  kubernetes: {namespaces: [ok, Bad_Name]}\n",
                    "bad.yaml:4:33: ", "live.kubernetes.namespaces[1]: 'Bad_Name' is not a namespace name"},
        BadLiveCase{"KubernetesNamespacesNotAList", "pools:\n" GOOD_POOL "live:\n  kubernetes: {namespaces: ml}\n",
                    "bad.yaml:4:28: ", "live.kubernetes.namespaces: expected a list of namespaces"},
        BadLiveCase{"KubernetesBadLabelPrefix", "pools:\n" GOOD_POOL "live:\n  kubernetes: {label_prefix: Tide/x}\n",
                    "bad.yaml:4:30: ", "live.kubernetes.label_prefix: 'Tide/x' is not a label prefix"},
        BadLiveCase{"KubernetesBadTaint", "pools:\n" GOOD_POOL "live:\n  kubernetes: {notice_taints: [\"a b\"]}\n",
                    "bad.yaml:4:32: ", "live.kubernetes.notice_taints[0]: 'a b' is not a taint key"},
        BadLiveCase{"PrometheusUrlWithPassword",
                    "pools:\n" GOOD_POOL "live:\n  slurm: {pools: {gpu: n1}}\n  metrics: {prometheus: 'http://u:hunter2@p:9090/'}\n",
                    "bad.yaml:5:25: ", "live.metrics.prometheus: holds credentials (user:password@)"},
        BadLiveCase{"KubernetesUnknownMode", "pools:\n" GOOD_POOL "live:\n  kubernetes: {mode: passive}\n",
                    "bad.yaml:4:22: ", "live.kubernetes.mode: unknown mode 'passive'; expected schedule"},
        BadLiveCase{"KubernetesLeaseRenewTooLong",
                    "pools:\n" GOOD_POOL "live:\n  kubernetes: {leader_election: {lease: t, renew_deadline: 20s}}\n",
                    "bad.yaml:4:60: ", "live.kubernetes.leader_election.renew_deadline: must be shorter than duration (15s)"},
        BadLiveCase{"KubernetesLeaseBadName",
                    "pools:\n" GOOD_POOL "live:\n  kubernetes: {leader_election: {lease: Tide}}\n",
                    "bad.yaml:4:41: ", "live.kubernetes.leader_election.lease: 'Tide' is not a Lease name"},
        BadLiveCase{"KubernetesShortTimeout", "pools:\n" GOOD_POOL "live:\n  kubernetes: {timeout: 0s}\n",
                    "bad.yaml:4:25: ", "live.kubernetes.timeout: must be at least 1s"},
        BadLiveCase{"KubernetesUnknownProvider", "pools:\n" GOOD_POOL "live:\n  kubernetes: {}\n  provider: {kind: aws}\n",
                    "bad.yaml:5:20: ", "live.provider.kind: unknown provider 'aws'; expected local, exec or kwok"},
        BadLiveCase{"LiveJobsUnknownClass",
                    "pools:\n" GOOD_POOL "live:\n  jobs: {classes: [{partition: p, class: vip}]}\n  slurm: {pools: {gpu: n1}}\n",
                    "bad.yaml:4:42: ", "live.jobs.classes[0].class: no priority class named 'vip'"},
        BadLiveCase{"LiveJobsRuleWithoutAttribute",
                    "pools:\n" GOOD_POOL "live:\n  jobs: {classes: [{class: low}]}\n  slurm: {pools: {gpu: n1}}\n",
                    "bad.yaml:4:20: ", "live.jobs.classes[0]: a rule needs at least one attribute to match besides `class`"},
        BadLiveCase{"LiveJobsRuleWithoutClass",
                    "pools:\n" GOOD_POOL "live:\n  jobs: {classes: [{qos: q}]}\n  slurm: {pools: {gpu: n1}}\n",
                    "bad.yaml:4:20: ", "live.jobs.classes[0]: a rule needs a `class` (a priority class name)"},
        BadLiveCase{"LiveJobsRuleKeyTwice",
                    "pools:\n" GOOD_POOL "live:\n  jobs: {classes: [{qos: q, qos: r, class: low}]}\n  slurm: {pools: {gpu: n1}}\n",
                    "bad.yaml:4:29: ", "live.jobs.classes[0].qos: given twice"},
        BadLiveCase{"LiveJobsRuleNotAMapping",
                    "pools:\n" GOOD_POOL "live:\n  jobs: {classes: [low]}\n  slurm: {pools: {gpu: n1}}\n",
                    "bad.yaml:4:20: ", "live.jobs.classes[0]: expected a mapping of attributes to match and a `class`"},
        BadLiveCase{"LiveJobsClassesNotAList",
                    "pools:\n" GOOD_POOL "live:\n  jobs: {classes: low}\n  slurm: {pools: {gpu: n1}}\n",
                    "bad.yaml:4:19: ", "live.jobs.classes: expected a list of rules"},
        BadLiveCase{"LiveJobsBadSignal",
                    "pools:\n" GOOD_POOL "live:\n  jobs: {checkpoint_signal: KILL}\n  slurm: {pools: {gpu: n1}}\n",
                    "bad.yaml:4:29: ", "live.jobs.checkpoint_signal: 'KILL' is not a signal tide sends"},
        BadLiveCase{"LiveJobsUnknownKey",
                    "pools:\n" GOOD_POOL "live:\n  jobs: {protect_comment: x}\n  slurm: {pools: {gpu: n1}}\n",
                    "bad.yaml:4:10: ", "live.jobs.protect_comment: unknown field; expected one of: classes, protect_marker"},
        BadLiveCase{"LiveClassesUnderBothNames",
                    "pools:\n" GOOD_POOL "live:\n  jobs:\n    classes: [{partition: p, class: low}]\n"
                    "  slurm:\n    pools: {gpu: n1}\n    classes: [{partition: q, class: low}]\n",
                    "bad.yaml:8:5: ",
                    "live.slurm.classes: the old name of live.jobs.classes, which is given too (line 5); give only live.jobs.classes"},
        BadLiveCase{"LiveProtectUnderBothNames",
                    "pools:\n" GOOD_POOL "live:\n  jobs: {protect_marker: a}\n  slurm: {pools: {gpu: n1}, protect_comment: b}\n",
                    "bad.yaml:5:29: ",
                    "live.slurm.protect_comment: the old name of live.jobs.protect_marker, which is given too (line 4); "
                    "give only live.jobs.protect_marker"},
        BadLiveCase{"LiveGraceUnderBothNames",
                    "pools:\n" GOOD_POOL "live:\n  jobs: {checkpoint_grace: 1m}\n  slurm: {pools: {gpu: n1}, checkpoint_grace: 2m}\n",
                    "bad.yaml:5:29: ", "live.slurm.checkpoint_grace: the old name of live.jobs.checkpoint_grace"},
        BadLiveCase{"LiveSignalUnderBothNames",
                    "pools:\n" GOOD_POOL "live:\n  jobs: {checkpoint_signal: USR1}\n  slurm: {pools: {gpu: n1}, checkpoint_signal: USR2}\n",
                    "bad.yaml:5:29: ", "live.slurm.checkpoint_signal: the old name of live.jobs.checkpoint_signal"},
        BadLiveCase{"LiveOldRuleWithoutPartitionOrQos",
                    "pools:\n" GOOD_POOL "live:\n  slurm: {pools: {gpu: n1}, classes: [{class: low}]}\n",
                    "bad.yaml:4:", "live.slurm.classes[0]: a rule needs a partition, a qos or both"}),
    [](const auto& info) { return info.param.name; });

#undef GOOD_POOL

}  // namespace
}  // namespace tide::config

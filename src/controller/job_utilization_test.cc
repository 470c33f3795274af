#include "controller/job_utilization.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::controller {
namespace {

using ::testing::DoubleNear;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

backends::ObservedJob Running(std::string key, std::vector<std::string> nodes, int gpus_per_worker = 8,
                              std::vector<std::string> members = {}) {
  backends::ObservedJob j;
  j.key = std::move(key);
  j.phase = backends::JobPhase::kRunning;
  j.workers = static_cast<int>(nodes.size());
  j.gpus_per_worker = gpus_per_worker;
  j.nodes = std::move(nodes);
  j.members = std::move(members);
  return j;
}

backends::ObservedNode Node(std::string name, int used) {
  backends::ObservedNode n;
  n.name = std::move(name);
  n.gpus = 8;
  n.gpus_used = used;
  return n;
}

metrics::UtilSample OnNode(std::string node, double util, std::string job = "") {
  return {std::move(node), std::move(job), -1, util, ""};
}
metrics::UtilSample OfPod(std::string pod, double util, std::string node = "") {
  return {std::move(node), "", -1, util, std::move(pod)};
}

TEST(JobUtilization, SlurmJobLabelFirstThenItsNodes) {
  backends::Observation obs;
  obs.jobs = {Running("7", {"gpu1"}), Running("8", {"gpu2", "gpu3"}), Running("9", {"gpu4", "gpu5"})};
  obs.jobs.push_back(Running("10", {"gpu1"}));
  obs.jobs.back().phase = backends::JobPhase::kStarting;  // only running jobs
  const auto got = JobUtilization(obs, {OnNode("gpu1", 0.9, "7"), OnNode("gpu1", 0.5, "7"), OnNode("gpu2", 0.2),
                                        OnNode("gpu2", 0.4), OnNode("gpu3", 0.0), OnNode("gpu4", 0.1)});
  // 7: its own series; 8: the mean of its nodes' means (0.3 and 0); 9: gpu5
  // reported nothing, so unknown.
  EXPECT_THAT(got, UnorderedElementsAre(Pair("7", DoubleNear(0.7, 1e-12)), Pair("8", DoubleNear(0.15, 1e-12))));
}

TEST(JobUtilization, KubernetesPodsWhenEveryPodReported) {
  backends::Observation obs;
  obs.nodes = {Node("n1", 8), Node("n2", 8), Node("n3", 2)};
  obs.jobs = {Running("ml/llm", {"n1", "n2"}, 8, {"ml/llm-0", "ml/llm-1"}),
              Running("ml/half", {"n3"}, 1, {"ml/half-0"}), Running("ml/other", {"n3"}, 1, {"ml/other-0"})};
  const auto got = JobUtilization(
      obs, {OfPod("ml/llm-0", 1.0, "n1"), OfPod("ml/llm-0", 0.5, "n1"), OfPod("ml/llm-1", 0.0, "n2"),
            OfPod("ml/half-0", 0.25, "n3"), OnNode("n3", 0.0), OnNode("n3", 0.0)});
  // llm: the mean over its three series; other: no series of its own, and
  // n3's free GPUs must not stand for it.
  EXPECT_THAT(got, UnorderedElementsAre(Pair("ml/llm", 0.5), Pair("ml/half", 0.25)));
}

TEST(JobUtilization, APodWithoutASeriesIsUnknownNeverIdle) {
  backends::Observation obs;
  obs.nodes = {Node("n1", 8), Node("n2", 8)};
  obs.jobs = {Running("ml/llm", {"n1", "n2"}, 8, {"ml/llm-0", "ml/llm-1"})};
  EXPECT_THAT(JobUtilization(obs, {OfPod("ml/llm-0", 0.0, "n1"), OnNode("n2", 0.0)}), IsEmpty());
}

TEST(JobUtilization, NodesStandForPodsOnlyWithoutPodSeriesAndOnNodesOfTheirOwn) {
  backends::Observation obs;
  obs.nodes = {Node("n1", 8), Node("n2", 3)};
  obs.jobs = {Running("ml/whole", {"n1"}, 8, {"ml/whole-0"}), Running("ml/shared", {"n2"}, 1, {"ml/shared-0"})};
  // An exporter without the pod mapping: the node's mean is the job's only
  // where the job has the node to itself.
  const std::vector<metrics::UtilSample> nodes_only = {OnNode("n1", 0.6), OnNode("n2", 0.0)};
  EXPECT_THAT(JobUtilization(obs, nodes_only), UnorderedElementsAre(Pair("ml/whole", 0.6)));
  // With the mapping on (some series name a pod), nodes never stand in.
  std::vector<metrics::UtilSample> mapped = nodes_only;
  mapped.push_back(OfPod("ml/elsewhere-0", 1.0, "n9"));
  EXPECT_THAT(JobUtilization(obs, mapped), IsEmpty());
}

}  // namespace
}  // namespace tide::controller

#include "place/packer.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::place {
namespace {

PodRequest Frac(int milli, ModelMask models = 0) { return {1000, 1024, 1, milli, models}; }
PodRequest Whole(int gpus, ModelMask models = 0) { return {1000, 1024, gpus, kMilliPerGpu, models}; }

// Nodes of `gpus` GPUs each, plenty of CPU and memory, model 0 unless given.
Cluster Nodes(std::vector<int> gpus, std::vector<int> models = {}) {
  Cluster c;
  c.models = {"T4", "V100M32"};
  for (size_t i = 0; i < gpus.size(); ++i) {
    c.nodes.push_back({"n" + std::to_string(i), 64000, 262144, gpus[i], models.empty() ? 0 : models[i]});
  }
  return c;
}

Packer Make(const Cluster& c, Policy p, Workload w = {}) {
  auto packer = Packer::Create(c, std::move(w), p);
  EXPECT_TRUE(packer.ok()) << packer.status();
  return std::move(*packer);
}

TEST(NodeFragmentTest, FollowsFgdDefinition) {
  NodeFree n;
  n.cpu_milli = 8000;
  n.memory_mib = 8192;
  n.gpus = 4;
  n.gpu_milli = {1000, 1000, 300, 0};
  struct Case {
    std::string name;
    PodRequest pod;
    int64_t want;
  };
  const std::vector<Case> cases = {
      {"fractional 500: the 300 GPU is a fragment", {1000, 1024, 1, 500, 0}, 300},
      {"fractional 200: nothing is a fragment", {1000, 1024, 1, 200, 0}, 0},
      {"one whole GPU: the partly used GPU is a fragment", {1000, 1024, 1, 1000, 0}, 300},
      {"two whole GPUs fit: the partly used GPU is a fragment", {1000, 1024, 2, 1000, 0}, 300},
      {"three whole GPUs do not fit: all free milli", {1000, 1024, 3, 1000, 0}, 2300},
      {"too much CPU: all free milli", {9000, 1024, 1, 100, 0}, 2300},
      {"too much memory: all free milli", {1000, 9000, 1, 100, 0}, 2300},
      {"wrong model: all free milli", {1000, 1024, 1, 100, ModelMask{1} << 1}, 2300},
      {"allowed model", {1000, 1024, 1, 100, ModelMask{1}}, 0},
  };
  for (const Case& c : cases) EXPECT_EQ(NodeFragment(n, c.pod), c.want) << c.name;
}

TEST(PackerTest, FirstFitTakesTheLowestNodeAndGpu) {
  Packer p = Make(Nodes({2, 2}), Policy::kFirstFit);
  p.Add(Frac(600));
  EXPECT_EQ(p.last().node, 0);
  EXPECT_EQ(p.last().taken[0], 600);
  p.Add(Frac(300));  // fits beside the first on GPU 0
  EXPECT_EQ(p.last().node, 0);
  EXPECT_EQ(p.last().taken[0], 300);
  p.Add(Frac(500));  // GPU 0 has 100 left: GPU 1
  EXPECT_EQ(p.last().taken[1], 500);
}

TEST(PackerTest, BestFitTakesTheTightestNodeAndGpu) {
  Packer p = Make(Nodes({4, 2}), Policy::kBestFit);
  p.Add(Frac(500));  // the 2-GPU node leaves less free
  EXPECT_EQ(p.last().node, 1);
  p.Add(Whole(1));
  EXPECT_EQ(p.last().node, 1);
  p.Add(Frac(400));  // GPU 0 of node 1 has 500 free: the tightest that fits
  EXPECT_EQ(p.last().node, 1);
  EXPECT_EQ(p.last().taken[0], 400);
}

TEST(PackerTest, WorstFitSpreads) {
  Packer p = Make(Nodes({2, 4, 4}), Policy::kWorstFit);
  p.Add(Frac(500));
  EXPECT_EQ(p.last().node, 1);
  p.Add(Frac(500));
  EXPECT_EQ(p.last().node, 2);
  p.Add(Frac(500));  // node 1 now has 3500 free, node 2 too: the lower index
  EXPECT_EQ(p.last().node, 1);
  EXPECT_EQ(p.last().taken[1], 500);  // the GPU with most free
}

TEST(PackerTest, MultiGpuPodsTakeWholeFreeGpus) {
  Packer p = Make(Nodes({4}), Policy::kBestFit);
  p.Add(Frac(100));
  const Step s = p.Add(Whole(3));
  EXPECT_TRUE(s.placed);
  EXPECT_EQ(p.node(0).gpu_milli[0], 900);
  EXPECT_EQ(p.node(0).gpu_milli[1] + p.node(0).gpu_milli[2] + p.node(0).gpu_milli[3], 0);
  EXPECT_FALSE(p.Add(Whole(1)).placed);  // only a 900 GPU is left
  EXPECT_TRUE(p.Add(Frac(900)).placed);
}

TEST(PackerTest, GpuSpecRestrictsNodeModels) {
  const Cluster c = Nodes({1, 1}, {0, 1});
  for (Policy policy : AllPolicies()) {
    Packer p = Make(c, policy, WorkloadOf({Whole(1)}));
    p.Add(Whole(1, MaskOf(c, {"V100M32"})));
    EXPECT_EQ(p.last().node, 1) << PolicyName(policy);
    EXPECT_FALSE(p.Add(Whole(1, MaskOf(c, {"V100M32"}))).placed) << PolicyName(policy);
    EXPECT_FALSE(p.Add(Whole(1, MaskOf(c, {"A10"}))).placed) << PolicyName(policy);  // no such node
    EXPECT_TRUE(p.Add(Whole(1, MaskOf(c, {"A10", "T4"}))).placed) << PolicyName(policy);
  }
}

TEST(PackerTest, FiguresFollowTheDefinitions) {
  Packer p = Make(Nodes({2, 2}), Policy::kFirstFit, WorkloadOf({Whole(1)}));
  Step s = p.Add(Frac(500));
  EXPECT_DOUBLE_EQ(s.gpu_alloc, 1.0 / 4);       // one GPU of four touched
  EXPECT_DOUBLE_EQ(s.milli_alloc, 500.0 / 4000);
  EXPECT_DOUBLE_EQ(s.frag, 500.0 / 4000);        // its free half serves no whole-GPU pod
  EXPECT_DOUBLE_EQ(s.arrived, 500.0 / 4000);
  s = p.Add(Whole(4));  // fits nowhere
  EXPECT_FALSE(s.placed);
  EXPECT_EQ(s.failed, 1);
  EXPECT_DOUBLE_EQ(s.arrived, 4500.0 / 4000);
  EXPECT_DOUBLE_EQ(s.milli_alloc, 500.0 / 4000);
}

TEST(PackerTest, FgdAvoidsFragmentingForTheWorkload) {
  // The workload is mostly 600-milli pods. After a 600 on GPU 0, a 400 pod
  // completes GPU 0 under fgd (no fragment left) where worst-fit would
  // open GPU 1 and leave a 400 that no 600 pod can use.
  const Workload w = WorkloadOf({Frac(600), Frac(600), Frac(600), Frac(400)});
  Packer fgd = Make(Nodes({2}), Policy::kFgd, w);
  fgd.Add(Frac(600));
  fgd.Add(Frac(400));
  EXPECT_EQ(fgd.node(0).gpu_milli[0] + fgd.node(0).gpu_milli[1], 1000);
  EXPECT_TRUE(fgd.node(0).gpu_milli[0] == 1000 || fgd.node(0).gpu_milli[1] == 1000);
  EXPECT_NEAR(fgd.Add(Frac(600)).frag, 0.75 * 400 / 2000, 1e-9);  // the 400 left is a fragment for 600-pods only
  Packer worst = Make(Nodes({2}), Policy::kWorstFit, w);
  worst.Add(Frac(600));
  worst.Add(Frac(400));
  EXPECT_EQ(worst.node(0).gpu_milli[0], 400);
  EXPECT_EQ(worst.node(0).gpu_milli[1], 600);
}

TEST(PackerTest, FgdPrefersTheNodeThatKeepsWholeGpus) {
  // A whole-GPU-heavy workload: the second small pod joins the first on its
  // partly used GPU rather than breaking a whole GPU here or on the empty node.
  const Workload w = WorkloadOf({Whole(1), Whole(1), Whole(1), Frac(200)});
  Packer p = Make(Nodes({2, 2}), Policy::kFgd, w);
  p.Add(Frac(200));
  EXPECT_EQ(p.last().node, 0);
  p.Add(Frac(200));
  EXPECT_EQ(p.last().node, 0);
  EXPECT_EQ(p.node(0).gpu_milli[0], 600);
  EXPECT_EQ(p.node(0).gpu_milli[1], 1000);
  EXPECT_EQ(p.node(1).gpu_milli[0] + p.node(1).gpu_milli[1], 2000);
}

TEST(PackerTest, RejectsBadNodes) {
  Cluster c = Nodes({2});
  c.nodes[0].gpus = kMaxGpusPerNode + 1;
  EXPECT_FALSE(Packer::Create(c, {}, Policy::kBestFit).ok());
  c = Nodes({2});
  c.nodes[0].model = 5;
  EXPECT_FALSE(Packer::Create(c, {}, Policy::kBestFit).ok());
}

TEST(InflateTest, DeterministicForASeedAndReachesTheTarget) {
  const std::vector<PodRequest> pods = {Frac(500), Whole(1), {1000, 1024, 0, 0, 0}, Whole(2)};
  const auto a = InflateArrivals(pods, 10000, 1.3, 7);
  const auto b = InflateArrivals(pods, 10000, 1.3, 7);
  const auto c = InflateArrivals(pods, 10000, 1.3, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_THAT(std::vector<int>(a.begin(), a.begin() + 4), ::testing::ElementsAre(0, 1, 2, 3));
  int64_t requested = 0, before_last = 0;
  for (int i : a) {
    before_last = requested;
    requested += pods[i].TotalMilli();
  }
  EXPECT_GE(requested, 13000);
  EXPECT_LT(before_last, 13000);  // it stops at the pod that reaches the target
  // A trace that already exceeds the target is cut where it reaches it.
  EXPECT_THAT(InflateArrivals(pods, 1000, 1.0, 1), ::testing::ElementsAre(0, 1));
}

TEST(ReplayTest, SkipsCpuOnlyPodsAndCountsThem) {
  const std::vector<PodRequest> pods = {Frac(500), {1000, 1024, 0, 0, 0}, Whole(1)};
  auto run = Replay(Nodes({2}), pods, {0, 1, 2}, WorkloadOf(pods), Policy::kBestFit);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->cpu_only, 1);
  ASSERT_EQ(run->steps.size(), 2u);
  EXPECT_EQ(StepAtShare(*run, 0.2).arrival, 1);
  EXPECT_EQ(StepAtShare(*run, 0.7).arrival, 2);
  EXPECT_EQ(StepAtShare(*run, 5.0).arrival, 2);  // never reached: the last step
}

}  // namespace
}  // namespace tide::place

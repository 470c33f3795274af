#include "trace/openb.h"

#include <sstream>
#include <string>
#include <vector>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/builders.h"
#include "trace/reader.h"

namespace tide::trace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
    "scheduled_time\n";

std::string Msg(const Status& s) { return std::string(Message(s)); }

std::string PathOf(const std::string& name) { return StrCat(::testing::TempDir(), "/tide_openb_test_", name); }

std::string WriteFile(const std::string& name, std::string_view text) {
  return tide::testing::WriteTextFile(PathOf(name), text);
}

class OpenbTest : public ::testing::Test {
 protected:
  OpenbTest() : spec_(tide::testing::Spec({tide::testing::Pool("gpu", 8, model::Tier::kOnDemand, 100, 0, 50)})) {
    options_.start = tide::testing::kT0;
    options_.gpus_per_node = 8;
    options_.spec = &spec_;
  }

  Result<std::vector<model::JobSpec>> Simulated(const std::string& name, std::string_view rows,
                                                std::string_view header = kHeader) {
    TIDE_ASSIGN_OR_RETURN(auto reader, OpenTrace(WriteFile(name, StrCat(header, rows)), "auto", options_));
    TIDE_ASSIGN_OR_RETURN(auto jobs, ReadAll(*reader));
    notes_ = reader->Notes();
    return jobs;
  }

  Result<std::vector<OpenbPod>> Pods(const std::string& name, std::string_view rows) {
    return ReadOpenbPods(WriteFile(name, StrCat(kHeader, rows)));
  }

  model::ClusterSpec spec_;
  TraceOptions options_;
  std::string notes_;
};

TEST_F(OpenbTest, ReadsGoodRows) {
  auto pods = Pods("good.csv",
                   "p0,12000,16384,1,1000,,LS,Running,0,100,10\n"
                   "p1,6000,12288,1,460,T4|V100M16|T4,BE,Running,5,50,5\n"
                   "p2,8000,30517,0,0,,Burstable,Succeeded,6,60,7\n"
                   "p3,32000,65536,8,1000,G2,Guaranteed,Pending,7,70,\n");
  ASSERT_TRUE(pods.ok()) << pods.status();
  ASSERT_EQ(pods->size(), 4u);
  const OpenbPod& p1 = (*pods)[1];
  EXPECT_EQ(p1.name, "p1");
  EXPECT_EQ(p1.cpu_milli, 6000);
  EXPECT_EQ(p1.memory_mib, 12288);
  EXPECT_EQ(p1.num_gpu, 1);
  EXPECT_EQ(p1.gpu_milli, 460);
  EXPECT_THAT(p1.gpu_models, ElementsAre("T4", "V100M16"));  // duplicates dropped
  EXPECT_EQ(p1.qos, OpenbQos::kBestEffort);
  EXPECT_EQ(p1.creation, 5);
  EXPECT_EQ(p1.deletion, 50);
  EXPECT_EQ(p1.scheduled, 5);
  EXPECT_EQ((*pods)[3].TotalGpuMilli(), 8000);
  EXPECT_FALSE((*pods)[3].scheduled.has_value());
  EXPECT_TRUE((*pods)[0].gpu_models.empty());
}

TEST_F(OpenbTest, MalformedFieldsNameFileLineAndField) {
  struct Case {
    std::string name;
    std::string row;
    std::string field;
    std::string what;
  };
  const std::vector<Case> cases = {
      {"cpu not a number", "p,x,1,1,1000,,LS,Running,0,1,0", "cpu_milli", "expected an integer"},
      {"cpu negative", "p,-1,1,1,1000,,LS,Running,0,1,0", "cpu_milli", "between 0"},
      {"memory not a number", "p,1,m,1,1000,,LS,Running,0,1,0", "memory_mib", "expected an integer"},
      {"num_gpu negative", "p,1,1,-2,1000,,LS,Running,0,1,0", "num_gpu", "between 0 and 1024"},
      {"gpu_milli zero on a GPU pod", "p,1,1,1,0,,LS,Running,0,1,0", "gpu_milli", "1 to 1000"},
      {"gpu_milli above a GPU", "p,1,1,1,1500,,LS,Running,0,1,0", "gpu_milli", "1 to 1000"},
      {"fractional multi-GPU", "p,1,1,2,500,,LS,Running,0,1,0", "gpu_milli", "takes them whole"},
      {"gpu_milli on a CPU pod", "p,1,1,0,300,,LS,Running,0,1,0", "gpu_milli", "without GPUs"},
      {"unknown qos", "p,1,1,1,1000,,Gold,Running,0,1,0", "qos", "expected LS, Guaranteed"},
      {"creation not a number", "p,1,1,1,1000,,LS,Running,t,1,0", "creation_time", "expected an integer"},
      {"deletion before creation", "p,1,1,1,1000,,LS,Running,10,5,10", "deletion_time", "before creation_time"},
      // Found by fuzzing: a run of decades passed, and could not be written back.
      {"a run of decades", "p,1,1,1,1000,,LS,Running,10,900000000,10", "deletion_time",
       "more than 315360000 seconds after scheduled_time"},
      {"scheduled before creation", "p,1,1,1,1000,,LS,Running,10,20,5", "scheduled_time", "before creation_time"},
      {"scheduled negative", "p,1,1,1,1000,,LS,Running,0,20,-5", "scheduled_time", "between 0"},
  };
  for (const Case& c : cases) {
    const std::string file = "bad.csv";
    auto pods = Pods(file, StrCat("ok,1,1,1,1000,,LS,Running,0,1,0\n", c.row, "\n"));
    ASSERT_FALSE(pods.ok()) << c.name;
    EXPECT_THAT(Msg(pods.status()), HasSubstr(StrCat(PathOf(file), ":3: field '", c.field, "'"))) << c.name;
    EXPECT_THAT(Msg(pods.status()), HasSubstr(c.what)) << c.name;
  }
}

TEST_F(OpenbTest, MissingRequiredColumn) {
  auto pods = ReadOpenbPods(WriteFile("nocol.csv", "name,cpu_milli,memory_mib,num_gpu\np,1,1,1\n"));
  ASSERT_FALSE(pods.ok());
  EXPECT_THAT(Msg(pods.status()), HasSubstr("lacks column 'gpu_milli'"));
}

TEST_F(OpenbTest, QosMapsByClassValue) {
  struct Case {
    std::string qos;
    std::string want_class;
    bool preemptible;
  };
  for (const Case& c : std::vector<Case>{{"LS", "high", false},
                                         {"Guaranteed", "high", false},
                                         {"Burstable", "normal", false},
                                         {"", "normal", false},
                                         {"BE", "low", true}}) {
    auto qos = ParseOpenbQos(c.qos);
    ASSERT_TRUE(qos.ok()) << c.qos;
    const QosClass cls = MapOpenbQos(*qos, spec_);
    EXPECT_EQ(spec_.priority_classes[cls.priority_class].name, c.want_class) << c.qos;
    EXPECT_EQ(cls.preemptible, c.preemptible) << c.qos;
  }
  // One class only: every QoS falls back to it; BE is still preemptible.
  model::ClusterSpec one = spec_;
  one.priority_classes = {{"only", 0, false, false}};
  one.default_priority_class = 0;
  EXPECT_EQ(MapOpenbQos(OpenbQos::kLatencySensitive, one).priority_class, 0);
  EXPECT_TRUE(MapOpenbQos(OpenbQos::kBestEffort, one).preemptible);
}

TEST_F(OpenbTest, GpuMilliRoundsUpToSliceUnits) {
  model::MigConfig plain;  // no profiles: 7 units, any count
  model::MigConfig a100;
  a100.profiles = {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"};
  model::MigConfig quarters;
  quarters.units_per_gpu = 4;
  struct Case {
    std::string name;
    int milli;
    const model::MigConfig* mig;
    int want;
    std::string profile;
  };
  const std::vector<Case> cases = {
      {"whole GPU", 1000, &plain, 0, ""},
      {"tiny", 50, &plain, 1, "1g"},
      {"exactly one unit", 142, &plain, 1, "1g"},
      {"just over one unit", 143, &plain, 2, "2g"},
      {"460", 460, &plain, 4, "4g"},
      {"810", 810, &plain, 6, "6g"},
      {"999", 999, &plain, 7, "7g"},
      {"quarter", 250, &quarters, 1, "1g"},
      {"over a quarter", 251, &quarters, 2, "2g"},
      {"460 to a 7g profile past the missing 4g", 460, &a100, 7, "7g.80gb"},
      {"300 to 3g", 300, &a100, 3, "3g.40gb"},
      {"100 to 1g", 100, &a100, 1, "1g.10gb"},
  };
  for (const Case& c : cases) {
    std::string profile;
    EXPECT_EQ(OpenbSliceUnits(c.milli, *c.mig, &profile), c.want) << c.name;
    if (c.want > 0) { EXPECT_EQ(profile, c.profile) << c.name; }
  }
}

TEST_F(OpenbTest, PodsBecomeJobs) {
  auto jobs = Simulated("jobs.csv",
                        "p0,12000,16384,1,1000,,LS,Running,0,100,10\n"
                        "p1,6000,12288,1,460,T4|V100M16,BE,Running,5,50,5\n"
                        "cpu,8000,30517,0,0,,Burstable,Succeeded,6,60,7\n"
                        "pend,1,1,1,1000,,BE,Pending,7,70,\n"
                        "p3,32000,65536,12,1000,G2,Guaranteed,Running,8,1008,8\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 3u);
  const auto& j0 = (*jobs)[0];
  EXPECT_EQ(j0.submit, tide::testing::At(0));
  EXPECT_EQ(j0.runtime, Seconds(90));  // deletion - scheduled
  EXPECT_EQ(j0.gpus(), 1);
  EXPECT_EQ(j0.slice_units, 0);
  EXPECT_EQ(spec_.priority_classes[j0.priority_class].name, "high");
  const auto& j1 = (*jobs)[1];
  EXPECT_EQ(j1.slice_units, 4);  // 460 milli on 7-unit GPUs
  EXPECT_EQ(j1.slice, "4g");
  EXPECT_THAT(j1.gpu_models, ElementsAre("T4", "V100M16"));
  EXPECT_TRUE(j1.preemptible);
  const auto& j3 = (*jobs)[2];
  EXPECT_EQ(j3.workers, 2);
  EXPECT_EQ(j3.gpus_per_worker, 6);
  EXPECT_EQ(j3.runtime, Seconds(1000));
  EXPECT_THAT(notes_, HasSubstr("skipped 1 CPU-only pods"));
  EXPECT_THAT(notes_, HasSubstr("1 pods never scheduled"));
}

TEST_F(OpenbTest, SimulatorRejectsWhatItCannotReplay) {
  struct Case {
    std::string name;
    std::string header;
    std::string rows;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"no time columns", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n", "p,1,1,1,1000\n",
       "cannot be simulated over time"},
      {"empty creation", std::string(kHeader), "p,1,1,1,1000,,LS,Running,,10,0\n",
       ":2: field 'creation_time': is empty"},
      {"empty deletion", std::string(kHeader), "p,1,1,1,1000,,LS,Running,0,,0\n",
       ":2: field 'deletion_time': is empty"},
      {"out of order", std::string(kHeader), "p,1,1,1,1000,,LS,Running,50,60,50\nq,1,1,1,1000,,LS,Running,40,60,40\n",
       ":3: field 'creation_time': rows must be in creation order"},
  };
  for (const Case& c : cases) {
    auto jobs = Simulated("reject.csv", c.rows, c.header);
    ASSERT_FALSE(jobs.ok()) << c.name;
    EXPECT_THAT(Msg(jobs.status()), HasSubstr(c.want)) << c.name;
  }
}

TEST_F(OpenbTest, NodeListGroupsByShape) {
  std::istringstream in(
      "sn,cpu_milli,memory_mib,gpu,model\n"
      "n0,32000,262144,0,\n"
      "n1,96000,393216,8,G2\n"
      "n2,96000,393216,8,G2\n"
      "n3,16000,122880,2,P100\n"
      "n4,64000,262144,2,P100\n"
      "n5,96000,393216,4,T4\n");
  CsvReader csv(&in, "nodes.csv");
  ASSERT_TRUE(csv.ReadHeader().ok());
  auto nodes = ReadOpenbNodes(&csv);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  int cpu_only = 0;
  const auto groups = GroupOpenbNodes(*nodes, &cpu_only);
  EXPECT_EQ(cpu_only, 1);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].pool, "g2x8");
  EXPECT_EQ(groups[0].count, 2);
  EXPECT_EQ(groups[1].pool, "p100x2-16c120g");  // two P100 x2 shapes
  EXPECT_EQ(groups[2].pool, "p100x2-64c256g");
  EXPECT_EQ(groups[3].pool, "t4x4");
  const std::string yaml = OpenbClusterYaml(groups, "nodes.csv");
  EXPECT_THAT(yaml, HasSubstr("- {name: g2x8, instance_type: g2x8, tier: reserved, price_per_hour: 80.00, nodes: 2}"));
  EXPECT_THAT(yaml, HasSubstr("- {name: t4x4, gpus: 4, gpu_model: T4, cpus: 96, memory_gib: 384}"));
}

TEST_F(OpenbTest, MalformedNodeRows) {
  struct Case {
    std::string row;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{{"n,x,1,1,T4", ":2: field 'cpu_milli'"},
                                         {"n,1,0,1,T4", ":2: field 'memory_mib': must be between 1 and"},
                                         {"n,1,1,99,T4", ":2: field 'gpu': must be between 0 and 64"},
                                         {"n,1,1,2,", ":2: field 'model': is empty"}}) {
    std::istringstream in(StrCat("sn,cpu_milli,memory_mib,gpu,model\n", c.row, "\n"));
    CsvReader csv(&in, "nodes.csv");
    ASSERT_TRUE(csv.ReadHeader().ok());
    auto nodes = ReadOpenbNodes(&csv);
    ASSERT_FALSE(nodes.ok()) << c.row;
    EXPECT_THAT(Msg(nodes.status()), HasSubstr(StrCat("nodes.csv", c.want))) << c.row;
  }
}

}  // namespace
}  // namespace tide::trace

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "backends/slurm/slurm.h"
#include "backends/slurm/slurm.h"
#include "core/status.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "backends/slurm/fixture_test.h"

namespace tide::backends {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Msg(const Status& s) { return std::string(Message(s)); }

using testing::Fixture;

// ---- ExpandHostlist

struct HostlistCase {
  std::string name;
  std::string list;
  std::vector<std::string> want;
};

class ExpandHostlistTest : public ::testing::TestWithParam<HostlistCase> {};

TEST_P(ExpandHostlistTest, Expands) {
  const auto& c = GetParam();
  auto got = ExpandHostlist(c.list);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(*got, ElementsAreArray(c.want));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ExpandHostlistTest,
    ::testing::Values(HostlistCase{"Empty", "", {}}, HostlistCase{"Blank", "  ", {}},
                      HostlistCase{"OneName", "gpu1", {"gpu1"}},
                      HostlistCase{"Range", "gpu[1-3]", {"gpu1", "gpu2", "gpu3"}},
                      HostlistCase{
                          "RangesAndSingles", "gpu[1-3,7],cpu01", {"gpu1", "gpu2", "gpu3", "gpu7", "cpu01"}},
                      HostlistCase{"ZeroPaddingKept", "n[08-10]", {"n08", "n09", "n10"}},
                      HostlistCase{"NoPaddingWidens", "n[8-10]", {"n8", "n9", "n10"}},
                      HostlistCase{"SingleInBrackets", "gpu[4]", {"gpu4"}},
                      HostlistCase{"SuffixAfterBracket", "r[1-2]-ib", {"r1-ib", "r2-ib"}},
                      HostlistCase{"TwoBracketGroups", "r[1-2]n[1-2]", {"r1n1", "r1n2", "r2n1", "r2n2"}},
                      HostlistCase{"SeveralLists", "a[1-2],b[3-4]", {"a1", "a2", "b3", "b4"}},
                      HostlistCase{"BlanksSeparate", "gpu1 gpu2", {"gpu1", "gpu2"}},
                      HostlistCase{"EmptyItemsSkipped", "gpu1,,gpu2,", {"gpu1", "gpu2"}}),
    [](const auto& info) { return info.param.name; });

struct HostlistErrorCase {
  std::string name;
  std::string list;
  std::string want;  // in the message
};

class ExpandHostlistErrorTest : public ::testing::TestWithParam<HostlistErrorCase> {};

TEST_P(ExpandHostlistErrorTest, IsInvalidArgument) {
  const auto& c = GetParam();
  auto got = ExpandHostlist(c.list);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(got.status()), HasSubstr(c.want));
  EXPECT_THAT(Msg(got.status()), HasSubstr(c.list));
}

INSTANTIATE_TEST_SUITE_P(Cases, ExpandHostlistErrorTest,
                         ::testing::Values(HostlistErrorCase{"Unclosed", "gpu[1-3", "'[' without ']'"},
                                           HostlistErrorCase{"Unopened", "gpu1-3]", "']' without '['"},
                                           HostlistErrorCase{"Nested", "gpu[1-[2]]", "nested"},
                                           HostlistErrorCase{"Backwards", "gpu[3-1]", "backwards"},
                                           HostlistErrorCase{"NotANumber", "gpu[a-c]", "bad range"},
                                           HostlistErrorCase{"OpenRange", "gpu[1-]", "bad range"},
                                           HostlistErrorCase{"EmptyBrackets", "gpu[]", "empty brackets"},
                                           HostlistErrorCase{"TooMany", "n[1-99999999]", "more than"}),
                         [](const auto& info) { return info.param.name; });

// ---- GpusInGres

struct GresCase {
  std::string name;
  std::string text;
  int want;
};

class GpusInGresTest : public ::testing::TestWithParam<GresCase> {};

TEST_P(GpusInGresTest, Counts) { EXPECT_EQ(GpusInGres(GetParam().text), GetParam().want); }

INSTANTIATE_TEST_SUITE_P(
    Cases, GpusInGresTest,
    ::testing::Values(GresCase{"Empty", "", 0}, GresCase{"TresPerNode", "gres:gpu:8", 8},
                      GresCase{"TresPerNodeTyped", "gres:gpu:a100:8", 8},
                      GresCase{"TresSlash", "gres/gpu=4", 4}, GresCase{"NodeGres", "gpu:a100:8", 8},
                      GresCase{"WithIndexes", "gpu:a100:8(IDX:0-7)", 8},
                      GresCase{"IndexesWithCommas", "gpu:a100:3(IDX:0,2-3)", 3},
                      GresCase{"NoneUsed", "gpu:a100:0(IDX:N/A)", 0},
                      GresCase{"Sockets", "gpu:a100:8(S:0-1)", 8},
                      GresCase{"OtherGresIgnored", "gres:gpu:a100:2,gres:foo:1", 2},
                      GresCase{"TwoTypesSummed", "gpu:a100:4,gpu:v100:2", 6},
                      GresCase{"TresTotalNotDoubled", "cpu=2,gres/gpu=8,gres/gpu:a100=8", 8},
                      GresCase{"TresTypedOnly", "gres/gpu:a100=2,gres/gpu:v100=1", 3},
                      GresCase{"NoCountMeansOne", "gres:gpu", 1}, GresCase{"TypeWithoutCount", "gpu:a100", 1},
                      GresCase{"NotAGpu", "gres:gpumem:8", 0}, GresCase{"Null", "(null)", 0},
                      GresCase{"CpuTres", "cpu=1,mem=4000M,node=1,billing=1", 0}),
    [](const auto& info) { return info.param.name; });

// ---- ParseSqueueJson

TEST(ParseSqueueJsonTest, LabFixture) {
  auto jobs = ParseSqueueJson(Fixture("squeue_lab.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 4u);

  const SlurmJob& running = (*jobs)[0];  // the real record
  EXPECT_EQ(running.id, 1);
  EXPECT_EQ(running.name, "wrap");
  EXPECT_EQ(running.state, "RUNNING");
  EXPECT_EQ(running.partition, "low");
  EXPECT_EQ(running.qos, "");
  EXPECT_EQ(running.comment, "");
  EXPECT_EQ(running.user, "root");
  EXPECT_THAT(running.nodes, ElementsAre("gpu1"));
  EXPECT_EQ(running.node_count, 1);
  EXPECT_EQ(running.gpus_per_node, 8);
  EXPECT_EQ(running.gpus, 8);
  EXPECT_EQ(running.submit, FromUnixSeconds(1796121397));
  EXPECT_EQ(running.start, FromUnixSeconds(1796121430));
  EXPECT_EQ(running.time_limit, Duration{0});  // null: unlimited
  EXPECT_EQ(running.restarts, 0);
  EXPECT_EQ(running.state_reason, "None");
  EXPECT_TRUE(running.requeue);

  const SlurmJob& pending = (*jobs)[1];
  EXPECT_EQ(pending.id, 2);
  EXPECT_EQ(pending.state, "PENDING");
  EXPECT_EQ(pending.partition, "high");
  EXPECT_EQ(pending.qos, "normal");
  EXPECT_EQ(pending.comment, "tide:elastic");
  EXPECT_EQ(pending.user, "alice");
  EXPECT_THAT(pending.nodes, IsEmpty());
  EXPECT_EQ(pending.node_count, 2);
  EXPECT_EQ(pending.gpus_per_node, 8);
  EXPECT_EQ(pending.gpus, 16);
  EXPECT_EQ(pending.start, FromUnixSeconds(0));  // start_time is only an estimate
  EXPECT_EQ(pending.time_limit, Hours(4));
  EXPECT_EQ(pending.state_reason, "Resources");
  EXPECT_FALSE(pending.requeue);

  const SlurmJob& spread = (*jobs)[2];  // --gpus=12 over two nodes
  EXPECT_EQ(spread.id, 3);
  EXPECT_THAT(spread.nodes, ElementsAre("gpu3", "gpu4"));
  EXPECT_EQ(spread.node_count, 2);
  EXPECT_EQ(spread.gpus, 12);
  EXPECT_EQ(spread.gpus_per_node, 6);
  EXPECT_EQ(spread.start, FromUnixSeconds(1796121700));
  EXPECT_EQ(spread.time_limit, Hours(1));
  EXPECT_EQ(spread.restarts, 2);

  const SlurmJob& cpu_only = (*jobs)[3];
  EXPECT_EQ(cpu_only.id, 4);
  EXPECT_EQ(cpu_only.partition, "low,high");
  EXPECT_EQ(cpu_only.gpus, 0);
  EXPECT_EQ(cpu_only.gpus_per_node, 0);
  EXPECT_EQ(cpu_only.state_reason, "Priority");
  EXPECT_EQ(cpu_only.time_limit, Duration{0});
}

TEST(ParseSqueueJsonTest, EmptyQueue) {
  auto jobs = ParseSqueueJson(Fixture("squeue_empty.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_THAT(*jobs, IsEmpty());
}

// One job record, inline, for the shapes the fixture does not show.
std::string OneJob(std::string_view fields) { return StrCat(R"({"errors": [], "jobs": [{)", fields, "}]}"); }

TEST(ParseSqueueJsonTest, OnlyRequiredFieldsTakesDefaults) {
  auto jobs = ParseSqueueJson(OneJob(R"("job_id": 9, "job_state": "pending")"));
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  const SlurmJob& j = (*jobs)[0];
  EXPECT_EQ(j.id, 9);
  EXPECT_EQ(j.state, "PENDING");
  EXPECT_EQ(j.node_count, 1);
  EXPECT_EQ(j.gpus, 0);
  EXPECT_THAT(j.nodes, IsEmpty());
  EXPECT_EQ(j.submit, FromUnixSeconds(0));
  EXPECT_EQ(j.time_limit, Duration{0});
  EXPECT_TRUE(j.requeue);
}

TEST(ParseSqueueJsonTest, NullOptionalFieldsTakeDefaults) {
  auto jobs = ParseSqueueJson(OneJob(
      R"("job_id": 9, "job_state": "RUNNING", "name": null, "nodes": null, "node_count": null,
         "tres_per_node": null, "restart_cnt": null, "requeue": null, "submit_time": null)"));
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ((*jobs)[0].name, "");
  EXPECT_EQ((*jobs)[0].node_count, 1);
  EXPECT_TRUE((*jobs)[0].requeue);
}

TEST(ParseSqueueJsonTest, NewerSchemaShapes) {
  // Slurm 23.x: job_state is an array and numbers are {set, infinite, number}.
  auto jobs = ParseSqueueJson(OneJob(
      R"("job_id": 5, "job_state": ["RUNNING"], "nodes": "gpu[1-2]",
         "node_count": {"set": true, "infinite": false, "number": 2},
         "time_limit": {"set": true, "infinite": true, "number": 0},
         "start_time": {"set": true, "infinite": false, "number": 1700000000},
         "tres_per_node": "gres/gpu:4")"));
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  const SlurmJob& j = (*jobs)[0];
  EXPECT_EQ(j.state, "RUNNING");
  EXPECT_EQ(j.node_count, 2);
  EXPECT_EQ(j.gpus_per_node, 4);
  EXPECT_EQ(j.gpus, 8);
  EXPECT_EQ(j.time_limit, Duration{0});
  EXPECT_EQ(j.start, FromUnixSeconds(1700000000));
}

struct GpuRequestCase {
  std::string name;
  std::string fields;
  int want_per_node;
  int want_total;
};

class JobGpusTest : public ::testing::TestWithParam<GpuRequestCase> {};

TEST_P(JobGpusTest, FromTheRequest) {
  const auto& c = GetParam();
  auto jobs = ParseSqueueJson(OneJob(StrCat(R"("job_id": 1, "job_state": "PENDING", )", c.fields)));
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ((*jobs)[0].gpus_per_node, c.want_per_node);
  EXPECT_EQ((*jobs)[0].gpus, c.want_total);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JobGpusTest,
    ::testing::Values(
        GpuRequestCase{"PerNode", R"("node_count": 3, "tres_per_node": "gres:gpu:a100:4")", 4, 12},
        GpuRequestCase{"PerJobRoundsUp", R"("node_count": 2, "tres_per_job": "gres:gpu:5")", 3, 5},
        GpuRequestCase{"PerNodeWins",
                       R"("node_count": 2, "tres_per_node": "gres:gpu:2", "tres_per_job": "gres:gpu:9")", 2,
                       4},
        GpuRequestCase{"PerTask", R"("node_count": 2, "tasks": 4, "tres_per_task": "gres:gpu:1")", 2, 4},
        GpuRequestCase{"None", R"("node_count": 2, "tres_per_node": "", "tres_per_job": "")", 0, 0},
        GpuRequestCase{"OtherGresOnly", R"("tres_per_node": "gres:license:1")", 0, 0}),
    [](const auto& info) { return info.param.name; });

TEST(ParseSqueueJsonTest, NoValTimeLimitIsUnlimited) {
  auto jobs = ParseSqueueJson(OneJob(R"("job_id": 1, "job_state": "RUNNING", "time_limit": 4294967295)"));
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ((*jobs)[0].time_limit, Duration{0});
}

struct ReplyErrorCase {
  std::string name;
  std::string text;
  absl::StatusCode code;
  std::vector<std::string> want;  // each in the message
};

class ParseSqueueJsonErrorTest : public ::testing::TestWithParam<ReplyErrorCase> {};

TEST_P(ParseSqueueJsonErrorTest, Fails) {
  const auto& c = GetParam();
  auto got = ParseSqueueJson(c.text);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), c.code) << got.status();
  for (const auto& w : c.want) EXPECT_THAT(Msg(got.status()), HasSubstr(w));
}

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseSqueueJsonErrorTest,
    ::testing::Values(
        ReplyErrorCase{"Empty", "", kInvalid, {"not valid JSON"}},
        ReplyErrorCase{"Garbage", "squeue: error: invalid option", kInvalid, {"not valid JSON"}},
        ReplyErrorCase{"Truncated", R"({"jobs": [{"job_id": 1,)", kInvalid, {"not valid JSON"}},
        ReplyErrorCase{"NotAnObject", "[1, 2]", kInvalid, {"expected a JSON object"}},
        ReplyErrorCase{"NoJobs", R"({"errors": []})", kInvalid, {"field jobs", "missing"}},
        ReplyErrorCase{"JobsNotArray", R"({"jobs": {}})", kInvalid, {"field jobs", "an array"}},
        ReplyErrorCase{"JobNotObject", R"({"jobs": [3]})", kInvalid, {"jobs[0]", "an object"}},
        ReplyErrorCase{
            "NoJobId", OneJob(R"("job_state": "RUNNING")"), kInvalid, {"jobs[0]", "job_id", "missing"}},
        ReplyErrorCase{"JobIdString",
                       OneJob(R"("job_id": "7", "job_state": "RUNNING")"),
                       kInvalid,
                       {"jobs[0]", "job_id", "expected an integer, got string"}},
        ReplyErrorCase{"JobIdFraction",
                       OneJob(R"("job_id": 7.5, "job_state": "RUNNING")"),
                       kInvalid,
                       {"jobs[0]", "job_id", "7.5"}},
        ReplyErrorCase{"NoState", OneJob(R"("job_id": 7)"), kInvalid, {"job 7", "job_state", "missing"}},
        ReplyErrorCase{"StateNumber",
                       OneJob(R"("job_id": 7, "job_state": 1)"),
                       kInvalid,
                       {"job 7", "job_state", "expected a string"}},
        ReplyErrorCase{"NameNumber",
                       OneJob(R"("job_id": 7, "job_state": "RUNNING", "name": 3)"),
                       kInvalid,
                       {"job 7", "field name", "expected a string, got number"}},
        ReplyErrorCase{"BadHostlist",
                       OneJob(R"("job_id": 7, "job_state": "RUNNING", "nodes": "gpu[1-")"),
                       kInvalid,
                       {"job 7", "field nodes", "gpu[1-"}},
        ReplyErrorCase{"NodeCountString",
                       OneJob(R"("job_id": 7, "job_state": "RUNNING", "node_count": "2")"),
                       kInvalid,
                       {"job 7", "node_count", "expected an integer"}},
        ReplyErrorCase{"NodeCountNegative",
                       OneJob(R"("job_id": 7, "job_state": "RUNNING", "node_count": -1)"),
                       kInvalid,
                       {"job 7", "node_count", "out of range"}},
        ReplyErrorCase{"NodeCountObjectWithoutNumber",
                       OneJob(R"("job_id": 7, "job_state": "RUNNING", "node_count": {"set": true})"),
                       kInvalid,
                       {"job 7", "node_count"}},
        ReplyErrorCase{"TimeLimitNegative",
                       OneJob(R"("job_id": 7, "job_state": "RUNNING", "time_limit": -5)"),
                       kInvalid,
                       {"job 7", "time_limit"}},
        ReplyErrorCase{"RequeueString",
                       OneJob(R"("job_id": 7, "job_state": "RUNNING", "requeue": "yes")"),
                       kInvalid,
                       {"job 7", "requeue", "expected a boolean"}},
        ReplyErrorCase{"GresArray",
                       OneJob(R"("job_id": 7, "job_state": "RUNNING", "tres_per_node": ["gpu"])"),
                       kInvalid,
                       {"job 7", "tres_per_node"}},
        ReplyErrorCase{
            "SlurmErrors",
            R"({"errors": [{"error": "Unable to contact slurm controller", "errno": 1}], "jobs": []})",
            absl::StatusCode::kUnavailable,
            {"Unable to contact slurm controller"}}),
    [](const auto& info) { return info.param.name; });

// ---- ParseSinfoJson

TEST(ParseSinfoJsonTest, LabFixture) {
  auto nodes = ParseSinfoJson(Fixture("sinfo_lab.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 4u);
  const SlurmNode& up = (*nodes)[0];
  EXPECT_EQ(up.name, "gpu1");
  EXPECT_EQ(up.state, "mixed");
  EXPECT_THAT(up.flags, ElementsAre("CLOUD", "POWER_UP"));
  EXPECT_EQ(up.gpus, 8);
  EXPECT_EQ(up.gpus_used, 8);
  EXPECT_EQ(up.reason, "");
  EXPECT_THAT(up.partitions, ElementsAre("low", "high"));
  EXPECT_TRUE(up.Responding());
  EXPECT_FALSE(up.Drained());
  EXPECT_FALSE(up.PoweredDown());

  const SlurmNode& off = (*nodes)[1];
  EXPECT_EQ(off.name, "gpu2");
  EXPECT_EQ(off.state, "idle");
  EXPECT_THAT(off.flags, ElementsAre("CLOUD", "DRAIN", "POWERED_DOWN"));
  EXPECT_EQ(off.gpus, 8);
  EXPECT_EQ(off.gpus_used, 0);
  EXPECT_EQ(off.reason, "tide: not provisioned");
  EXPECT_TRUE(off.Drained());
  EXPECT_TRUE(off.PoweredDown());
  EXPECT_FALSE(off.Responding());
  EXPECT_EQ((*nodes)[2].name, "gpu3");
  EXPECT_EQ((*nodes)[3].name, "gpu4");
}

TEST(ParseSinfoJsonTest, NodeListedPerPartitionIsMerged) {
  auto nodes = ParseSinfoJson(Fixture("sinfo_per_partition.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 4u);
  EXPECT_EQ((*nodes)[0].name, "gpu1");
  EXPECT_THAT((*nodes)[0].partitions, ElementsAre("low", "high"));

  const SlurmNode& booting = (*nodes)[1];
  EXPECT_EQ(booting.name, "gpu2");
  EXPECT_TRUE(booting.Has("POWERING_UP"));
  EXPECT_FALSE(booting.PoweredDown());
  EXPECT_FALSE(booting.Responding());

  const SlurmNode& draining = (*nodes)[2];
  EXPECT_EQ(draining.name, "gpu3");
  EXPECT_EQ(draining.state, "mixed");
  EXPECT_EQ(draining.gpus_used, 3);  // IDX:0,2-3
  EXPECT_TRUE(draining.Drained());
  EXPECT_TRUE(draining.Responding());
  EXPECT_EQ(draining.reason, "tide: scale-down");

  const SlurmNode& down = (*nodes)[3];
  EXPECT_EQ(down.name, "gpu4");
  EXPECT_EQ(down.state, "down");
  EXPECT_TRUE(down.Has("NOT_RESPONDING"));
  EXPECT_FALSE(down.Responding());
  EXPECT_THAT(down.partitions, ElementsAre("high"));
}

std::string OneNode(std::string_view fields) {
  return StrCat(R"({"errors": [], "nodes": [{)", fields, "}]}");
}

// Found by fuzzing: the JSON parser's message quoted the bytes it read raw.
TEST(ParseSqueueJsonTest, AnUnreadableReplyIsShownEscaped) {
  auto jobs = ParseSqueueJson("-\x7f");
  ASSERT_FALSE(jobs.ok());
  const std::string m(Message(jobs.status()));
  EXPECT_THAT(m, HasSubstr("not valid JSON"));
  EXPECT_THAT(m, HasSubstr("\\x7f"));
  EXPECT_EQ(m.find('\x7f'), std::string::npos) << m;
}

TEST(ParseSinfoJsonTest, OnlyRequiredFieldsTakesDefaults) {
  auto nodes = ParseSinfoJson(OneNode(R"("name": "cpu1", "state": "IDLE", "gres": null, "tres_used": null)"));
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  const SlurmNode& n = (*nodes)[0];
  EXPECT_EQ(n.state, "idle");
  EXPECT_THAT(n.flags, IsEmpty());
  EXPECT_EQ(n.gpus, 0);
  EXPECT_THAT(n.partitions, IsEmpty());
}

TEST(ParseSinfoJsonTest, StateArrayCarriesFlags) {
  // Slurm 23.x: "state": ["IDLE", "DRAIN"] and no state_flags.
  auto nodes = ParseSinfoJson(OneNode(R"("name": "gpu1", "state": ["IDLE", "drain", "CLOUD"])"));
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ((*nodes)[0].state, "idle");
  EXPECT_THAT((*nodes)[0].flags, ElementsAre("DRAIN", "CLOUD"));
  EXPECT_TRUE((*nodes)[0].Drained());
}

class ParseSinfoJsonErrorTest : public ::testing::TestWithParam<ReplyErrorCase> {};

TEST_P(ParseSinfoJsonErrorTest, Fails) {
  const auto& c = GetParam();
  auto got = ParseSinfoJson(c.text);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), c.code) << got.status();
  for (const auto& w : c.want) EXPECT_THAT(Msg(got.status()), HasSubstr(w));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseSinfoJsonErrorTest,
    ::testing::Values(
        ReplyErrorCase{"Garbage", "sinfo: error: x", kInvalid, {"not valid JSON"}},
        ReplyErrorCase{"NoNodes", R"({"errors": []})", kInvalid, {"field nodes", "missing"}},
        ReplyErrorCase{"NodesNotArray", R"({"nodes": "gpu1"})", kInvalid, {"field nodes", "an array"}},
        ReplyErrorCase{
            "NoName", OneNode(R"("state": "idle")"), kInvalid, {"nodes[0]", "field name", "missing"}},
        ReplyErrorCase{"NameNumber",
                       OneNode(R"("name": 1, "state": "idle")"),
                       kInvalid,
                       {"nodes[0]", "field name", "expected a string"}},
        ReplyErrorCase{
            "NoState", OneNode(R"("name": "gpu1")"), kInvalid, {"node gpu1", "field state", "missing"}},
        ReplyErrorCase{"FlagsString",
                       OneNode(R"("name": "gpu1", "state": "idle", "state_flags": "DRAIN")"),
                       kInvalid,
                       {"node gpu1", "state_flags", "an array of strings"}},
        ReplyErrorCase{"FlagNumber",
                       OneNode(R"("name": "gpu1", "state": "idle", "state_flags": [1])"),
                       kInvalid,
                       {"node gpu1", "state_flags"}},
        ReplyErrorCase{"GresNumber",
                       OneNode(R"("name": "gpu1", "state": "idle", "gres": 8)"),
                       kInvalid,
                       {"node gpu1", "field gres", "expected a string, got number"}},
        ReplyErrorCase{"PartitionsString",
                       OneNode(R"("name": "gpu1", "state": "idle", "partitions": "low")"),
                       kInvalid,
                       {"node gpu1", "partitions"}},
        ReplyErrorCase{"ErrorsNotArray", R"({"errors": "boom", "nodes": []})", kInvalid, {"errors"}},
        ReplyErrorCase{"SlurmErrors",
                       R"({"errors": [{"description": "slurmctld down"}], "nodes": []})",
                       absl::StatusCode::kUnavailable,
                       {"slurmctld down"}}),
    [](const auto& info) { return info.param.name; });

// ---- SlurmNode predicates

struct NodeCase {
  std::string name;
  std::string state;
  std::vector<std::string> flags;
  bool drained, powered_down, responding;
};

class SlurmNodeTest : public ::testing::TestWithParam<NodeCase> {};

TEST_P(SlurmNodeTest, Predicates) {
  const auto& c = GetParam();
  SlurmNode n;
  n.name = "gpu1";
  n.state = c.state;
  n.flags = c.flags;
  EXPECT_EQ(n.Drained(), c.drained);
  EXPECT_EQ(n.PoweredDown(), c.powered_down);
  EXPECT_EQ(n.Responding(), c.responding);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SlurmNodeTest,
    ::testing::Values(NodeCase{"Idle", "idle", {}, false, false, true},
                      NodeCase{"Allocated", "allocated", {"CLOUD"}, false, false, true},
                      NodeCase{"DrainFlag", "mixed", {"DRAIN"}, true, false, true},
                      NodeCase{"DrainedState", "drained", {}, true, false, true},
                      NodeCase{"DrainingState", "draining", {}, true, false, true},
                      NodeCase{"PoweredDown", "idle", {"CLOUD", "DRAIN", "POWERED_DOWN"}, true, true, false},
                      NodeCase{"PoweringUp", "idle", {"POWERED_DOWN", "POWERING_UP"}, false, false, false},
                      NodeCase{"PoweringUpOnly", "idle", {"POWERING_UP"}, false, false, false},
                      NodeCase{"PowerUpRequestedButUp", "mixed", {"CLOUD", "POWER_UP"}, false, false, true},
                      NodeCase{"Down", "down", {}, false, false, false},
                      NodeCase{"NotResponding", "idle", {"NOT_RESPONDING"}, false, false, false},
                      NodeCase{"Future", "future", {}, false, false, false},
                      NodeCase{"Unknown", "unknown", {}, false, false, false}),
    [](const auto& info) { return info.param.name; });

TEST(SlurmNodeHasTest, MatchesWholeFlags) {
  SlurmNode n;
  n.flags = {"POWERED_DOWN"};
  EXPECT_TRUE(n.Has("POWERED_DOWN"));
  EXPECT_FALSE(n.Has("POWER_DOWN"));
  EXPECT_FALSE(n.Has("DOWN"));
}

}  // namespace
}  // namespace tide::backends

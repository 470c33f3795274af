#include "config/config.h"

#include <string>
#include <vector>

#include "core/status.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Msg(const Status& s) { return std::string(Message(s)); }

// The smallest configuration that parses: one pool, everything else default.
constexpr char kMinimal[] = R"(pools:
  - name: gpu
    instance_type: {gpus: 8}
    price_per_hour: 100
)";

TEST(ParseConfigTest, MinimalConfigGetsTheMissionDefaults) {
  auto c = ParseConfig(kMinimal, "min.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->source, "min.yaml");
  EXPECT_EQ(c->cluster.currency, "CNY");

  ASSERT_EQ(c->cluster.pools.size(), 1u);
  const model::NodePool& p = c->cluster.pools[0];
  EXPECT_EQ(p.name, "gpu");
  EXPECT_EQ(p.type.name, "gpu");  // an inline type is named after its pool
  EXPECT_EQ(p.type.gpus, 8);
  EXPECT_EQ(p.tier, model::Tier::kOnDemand);
  EXPECT_EQ(p.region, "default");
  EXPECT_DOUBLE_EQ(p.price_per_hour, 100);
  EXPECT_EQ(p.min_nodes, 0);
  EXPECT_EQ(p.max_nodes, 50);
  EXPECT_EQ(p.boot_delay.kind, model::BootDelay::Kind::kUniform);
  EXPECT_EQ(p.boot_delay.min, Minutes(2));
  EXPECT_EQ(p.boot_delay.max, Minutes(5));
  EXPECT_EQ(p.priority, 0);

  ASSERT_EQ(c->cluster.priority_classes.size(), 3u);
  EXPECT_EQ(c->cluster.priority_classes[0].name, "high");
  EXPECT_EQ(c->cluster.priority_classes[0].value, 100);
  EXPECT_FALSE(c->cluster.priority_classes[0].preemptible);
  EXPECT_EQ(c->cluster.priority_classes[1].name, "normal");
  EXPECT_EQ(c->cluster.priority_classes[1].value, 50);
  EXPECT_FALSE(c->cluster.priority_classes[1].preemptible);
  EXPECT_EQ(c->cluster.priority_classes[2].name, "low");
  EXPECT_EQ(c->cluster.priority_classes[2].value, 10);
  EXPECT_TRUE(c->cluster.priority_classes[2].preemptible);
  EXPECT_EQ(c->cluster.default_priority_class, 1);

  const autoscale::PolicyDefaults& d = c->policies;
  EXPECT_THAT(d.compare, ElementsAre("fixed:peak", "reactive", "slurm-powersave", "tide"));
  // tide's defaults (docs/design/defaults.md), and the seed's rule for tide-seed.
  EXPECT_EQ(d.tide.scale_up.trigger.pending_threshold, 0);
  EXPECT_EQ(d.tide.scale_up.trigger.pending_grace, Seconds(0));
  EXPECT_EQ(d.tide.scale_down.idle.idle_after, Minutes(2));
  EXPECT_EQ(d.tide.scale_up.hedge.nodes, 3);
  EXPECT_TRUE(d.tide.consolidation.enabled);
  EXPECT_TRUE(d.tide.consolidation.gangs);
  EXPECT_EQ(d.seed.scale_up.trigger.pending_threshold, 3);
  // The grace is the trigger's own default (MISSION section 2); the config adds none of its own.
  EXPECT_EQ(d.seed.scale_up.trigger.pending_grace, autoscale::TriggerOptions{}.pending_grace);
  EXPECT_EQ(d.seed.scale_down.idle.idle_after, Minutes(10));
  EXPECT_FALSE(d.seed.consolidation.enabled);
  EXPECT_EQ(d.tide.scan_interval, Seconds(10));
  EXPECT_TRUE(d.tide.scale_up.gang_aware);
  EXPECT_THAT(d.tide.scale_up.expanders, ElementsAre("priority", "tier-ratio", "least-cost", "least-waste"));
  EXPECT_TRUE(d.fixed_pool.empty());
  EXPECT_EQ(d.powersave_start_tick, Seconds(30));

  EXPECT_EQ(c->simulation.seed, 1u);
  EXPECT_EQ(c->simulation.start, FromUnixSeconds(1767571200));
  EXPECT_EQ(c->simulation.gpus_per_worker_max, 0);
  EXPECT_EQ(c->simulation.swf_procs_per_gpu, 1);
}

TEST(ParseConfigTest, FullConfig) {
  constexpr char kText[] = R"(
currency: USD
simulation:
  seed: 7
  start: 2026-02-02T00:00:00Z
  gpus_per_worker_max: 4
  swf_procs_per_gpu: 16
instance_types:
  - {name: a100x8, gpus: 8, gpu_model: A100-80GB, cpus: 96, memory_gib: 1152}
  - {name: a100x2, gpus: 2}
pools:
  - name: base
    instance_type: a100x8
    tier: reserved
    region: cn-north-1
    price_per_hour: 55
    nodes: 4
  - name: big
    instance_type: a100x8
    tier: on-demand
    price_per_hour: 100.5
    min_nodes: 1
    max_nodes: 20
    boot_delay: 3m
    priority: 10
  - name: small
    instance_type: a100x2
    tier: spot
    price_per_hour: 27
    max_nodes: 8
    boot_delay: {distribution: lognormal, median: 4m, sigma: 0.5, max: 15m}
priority_classes:
  - {name: urgent, value: 1000, protected: true}
  - {name: batch, value: 1, preemptible: true}
default_priority_class: batch
scheduler:
  backfill: false
policies:
  compare: tide, reactive, fixed:peak
  tide:
    pending_threshold: 0
    pending_grace: 2m
    gang_aware: false
    expanders: [least-waste, most-jobs]
    max_pools_per_pass: 2
    idle_release_after: 15m
    scale_down: false
    boot_hedge: 2
  reactive:
    unneeded_time: 20m
  slurm_powersave:
    suspend_time: 30m
    start_tick: 1m
  fixed:
    pool: big
)";
  auto c = ParseConfig(kText, "full.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->cluster.currency, "USD");
  EXPECT_EQ(c->simulation.seed, 7u);
  EXPECT_EQ(c->simulation.start, FromUnixSeconds(1767571200 + 28 * 86400));
  EXPECT_EQ(c->simulation.gpus_per_worker_max, 4);
  EXPECT_EQ(c->simulation.swf_procs_per_gpu, 16);

  ASSERT_EQ(c->cluster.pools.size(), 3u);
  const auto& base = c->cluster.pools[0];
  EXPECT_EQ(base.type.name, "a100x8");
  EXPECT_EQ(base.type.cpus, 96);
  EXPECT_EQ(base.tier, model::Tier::kReserved);
  EXPECT_EQ(base.region, "cn-north-1");
  EXPECT_EQ(base.min_nodes, 4);
  EXPECT_EQ(base.max_nodes, 4);

  const auto& big = c->cluster.pools[1];
  EXPECT_DOUBLE_EQ(big.price_per_hour, 100.5);
  EXPECT_EQ(big.min_nodes, 1);
  EXPECT_EQ(big.max_nodes, 20);
  EXPECT_EQ(big.boot_delay.kind, model::BootDelay::Kind::kFixed);
  EXPECT_EQ(big.boot_delay.min, Minutes(3));
  EXPECT_EQ(big.boot_delay.max, Minutes(3));
  EXPECT_EQ(big.priority, 10);

  const auto& small = c->cluster.pools[2];
  EXPECT_EQ(small.type.gpus, 2);
  EXPECT_EQ(small.tier, model::Tier::kSpot);
  EXPECT_EQ(small.min_nodes, 0);
  EXPECT_EQ(small.max_nodes, 8);
  EXPECT_EQ(small.boot_delay.kind, model::BootDelay::Kind::kLogNormal);
  EXPECT_EQ(small.boot_delay.median, Minutes(4));
  EXPECT_DOUBLE_EQ(small.boot_delay.sigma, 0.5);
  EXPECT_EQ(small.boot_delay.min, Seconds(0));
  EXPECT_EQ(small.boot_delay.max, Minutes(15));

  ASSERT_EQ(c->cluster.priority_classes.size(), 2u);
  EXPECT_EQ(c->cluster.priority_classes[0].name, "urgent");
  EXPECT_TRUE(c->cluster.priority_classes[0].protect);
  EXPECT_TRUE(c->cluster.priority_classes[1].preemptible);
  EXPECT_EQ(c->cluster.default_priority_class, 1);
  EXPECT_FALSE(c->policies.scheduler.backfill);

  const autoscale::PolicyDefaults& d = c->policies;
  EXPECT_THAT(d.compare, ElementsAre("tide", "reactive", "fixed:peak"));
  EXPECT_EQ(d.tide.scale_up.trigger.pending_threshold, 0);
  EXPECT_EQ(d.tide.scale_up.trigger.pending_grace, Minutes(2));
  EXPECT_FALSE(d.tide.scale_up.gang_aware);
  EXPECT_THAT(d.tide.scale_up.expanders, ElementsAre("least-waste", "most-jobs"));
  EXPECT_EQ(d.tide.scale_up.max_pools_per_pass, 2);
  EXPECT_EQ(d.tide.scale_up.hedge.nodes, 2);
  EXPECT_EQ(d.reactive.scale_up.hedge.nodes, 0);  // off unless asked for
  EXPECT_EQ(d.tide.scale_down.idle.idle_after, Minutes(15));
  EXPECT_FALSE(d.tide.scale_down.enabled);
  EXPECT_TRUE(d.tide.scale_up.enabled);
  EXPECT_EQ(d.reactive.scale_down.idle.idle_after, Minutes(20));
  EXPECT_EQ(d.reactive.scale_up.trigger.pending_threshold, 0);  // the reactive defaults stay
  EXPECT_EQ(d.powersave.scale_down.idle.idle_after, Minutes(30));
  EXPECT_EQ(d.powersave_start_tick, Minutes(1));
  EXPECT_EQ(d.fixed_pool, "big");
}

TEST(ParseConfigTest, ReservedPoolWithMinNodesOnlyIsFixed) {
  auto c = ParseConfig(R"(pools:
  - {name: r, instance_type: {gpus: 8}, tier: reserved, price_per_hour: 1, min_nodes: 3}
)",
                       "r.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->cluster.pools[0].min_nodes, 3);
  EXPECT_EQ(c->cluster.pools[0].max_nodes, 3);
}

TEST(ParseConfigTest, TierSpellings) {
  for (const auto& [text, tier] : std::vector<std::pair<std::string, model::Tier>>{
           {"on-demand", model::Tier::kOnDemand}, {"ondemand", model::Tier::kOnDemand},
           {"on_demand", model::Tier::kOnDemand}, {"Spot", model::Tier::kSpot},
           {"preemptible", model::Tier::kSpot}}) {
    auto c = ParseConfig(StrCat("pools:\n  - {name: p, instance_type: {gpus: 8}, price_per_hour: 1, tier: ", text,
                                "}\n"),
                         "t.yaml");
    ASSERT_TRUE(c.ok()) << text << ": " << c.status();
    EXPECT_EQ(c->cluster.pools[0].tier, tier) << text;
  }
}

TEST(ParseConfigTest, BundledExampleLoads) {
  const std::string path = StrCat(TIDE_SOURCE_DIR, "/examples/cluster.yaml");
  auto c = LoadConfig(path);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->source, path);
  EXPECT_EQ(c->simulation.seed, 7u);
  ASSERT_EQ(c->cluster.pools.size(), 3u);
  EXPECT_EQ(c->cluster.pools[0].tier, model::Tier::kReserved);
  EXPECT_EQ(c->cluster.pools[0].min_nodes, 4);
  EXPECT_EQ(c->cluster.pools[0].max_nodes, 4);
  EXPECT_EQ(c->cluster.pools[2].type.gpus, 2);
  EXPECT_EQ(c->policies.fixed_pool, "a100x8-ondemand");
  EXPECT_EQ(c->policies.reactive.scale_down.idle.idle_after, Minutes(10));
}

TEST(LoadConfigTest, MissingFileIsNotFound) {
  const std::string path = ::testing::TempDir() + "/tide_config_test_missing.yaml";
  auto c = LoadConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(c.status()), HasSubstr(path));
}


constexpr char kTwoPools[] = R"(pools:
  - {name: od, instance_type: {gpus: 8}, price_per_hour: 100, region: north}
  - {name: spot, instance_type: {gpus: 8}, tier: spot, price_per_hour: 30, region: west, min_priority: normal}
regions:
  - {name: north, egress_per_gb: 0.8}
  - {name: west}
)";

TEST(ParseConfigTest, RegionsPoolRegionsAndMinPriority) {
  auto c = ParseConfig(kTwoPools, "r.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->cluster.regions.size(), 2u);
  EXPECT_EQ(c->cluster.regions[0].name, "north");
  EXPECT_DOUBLE_EQ(c->cluster.regions[0].egress_per_gb, 0.8);
  EXPECT_DOUBLE_EQ(c->cluster.regions[1].egress_per_gb, 0);
  EXPECT_EQ(c->cluster.pools[0].region, "north");
  EXPECT_EQ(c->cluster.pools[1].region, "west");
  EXPECT_EQ(c->cluster.pools[0].min_priority, INT32_MIN);  // anyone
  EXPECT_EQ(c->cluster.pools[1].min_priority, 50);         // normal's value
}

TEST(ParseConfigTest, VariantsStartFromTideOptions) {
  auto c = ParseConfig(StrCat(kTwoPools, R"(policies:
  variants:
    cheap: {spot_share: 1, buy_from: [spot]}
    plain:
  tide: {pending_threshold: 5}
)"), "v.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  const auto& d = c->policies;
  EXPECT_EQ(d.tide.scale_up.trigger.pending_threshold, 5);
  ASSERT_EQ(d.variants.size(), 2u);
  EXPECT_EQ(d.variants[0].first, "cheap");
  // Inherited from tide (given after the variants in the file, read first).
  EXPECT_EQ(d.variants[0].second.scale_up.trigger.pending_threshold, 5);
  EXPECT_DOUBLE_EQ(d.variants[0].second.tiers.spot_share, 1);
  EXPECT_THAT(d.variants[0].second.scale_up.buy_from, ElementsAre(1));
  EXPECT_DOUBLE_EQ(d.tide.tiers.spot_share, 0.3);  // tide itself unchanged
  EXPECT_TRUE(d.tide.scale_up.buy_from.empty());
  EXPECT_EQ(d.variants[1].first, "plain");  // an empty variant is tide as configured
  EXPECT_EQ(d.variants[1].second.scale_up.trigger.pending_threshold, 5);
}

TEST(ParseConfigTest, ScheduleRulesListReplacesAndEmptyListClears) {
  auto c = ParseConfig(StrCat(kTwoPools, R"(policies:
  tide:
    schedule:
      rules:
        - {name: evening, pools: [od], from: '18:00', to: '08:00', max_nodes: 0}
        - {name: morning, pools: [od], from: '09:00', to: '10:00', min_nodes: 2}
  variants:
    no-schedule: {schedule: {rules: []}}
    evening-only:
      schedule:
        rules:
          - {name: evening, pools: [od], from: '18:00', to: '08:00', max_nodes: 0}
)"), "s.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  const auto& d = c->policies;
  ASSERT_EQ(d.tide.schedule.rules.size(), 2u);
  ASSERT_EQ(d.variants.size(), 2u);
  EXPECT_TRUE(d.variants[0].second.schedule.rules.empty());
  ASSERT_EQ(d.variants[1].second.schedule.rules.size(), 1u);
  EXPECT_EQ(d.variants[1].second.schedule.rules[0].name, "evening");
}

TEST(ParseConfigTest, TimeZoneOfReportsDefaultsToTheSchedulesThenUtc) {
  auto c = ParseConfig(kMinimal, "min.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->DisplayTimeZone(), "UTC");
  c = ParseConfig(std::string(kMinimal) + "policies:\n  tide:\n    schedule: {time_zone: Asia/Shanghai}\n", "s.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->DisplayTimeZone(), "Asia/Shanghai");
  c = ParseConfig(std::string("time_zone: Europe/Berlin\n") + kMinimal +
                      "policies:\n  tide:\n    schedule: {time_zone: Asia/Shanghai}\n", "b.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->DisplayTimeZone(), "Europe/Berlin");
}
TEST(ParseConfigTest, VariantsStartFromTideOrFromWhatTheyName) {
  auto c = ParseConfig(StrCat(kTwoPools, R"(policies:
  tide: {idle_release_after: 5m}
  variants:
    plain: {}
    seedish: {from: tide-seed, boot_hedge: 2}
    later: {from: seedish, consolidation: {enabled: true}}
)"), "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  const auto& d = c->policies;
  ASSERT_EQ(d.variants.size(), 3u);
  // policies.tide applies to tide and tide-seed alike.
  EXPECT_EQ(d.tide.scale_down.idle.idle_after, Minutes(5));
  EXPECT_EQ(d.seed.scale_down.idle.idle_after, Minutes(5));
  const auto& plain = d.variants[0].second;
  EXPECT_EQ(plain.scale_up.hedge.nodes, 3);
  EXPECT_EQ(plain.scale_up.trigger.pending_threshold, 0);
  const auto& seedish = d.variants[1].second;
  EXPECT_EQ(seedish.scale_up.hedge.nodes, 2);
  EXPECT_EQ(seedish.scale_up.trigger.pending_threshold, 3);
  EXPECT_FALSE(seedish.consolidation.enabled);
  EXPECT_EQ(seedish.scale_down.idle.idle_after, Minutes(5));
  const auto& later = d.variants[2].second;
  EXPECT_EQ(later.scale_up.hedge.nodes, 2);
  EXPECT_TRUE(later.consolidation.enabled);
  EXPECT_EQ(later.consolidation.quiet_for, Hours(1));  // tide-seed's, through seedish
}

TEST(ParseConfigTest, AVariantStartsOnlyFromAPolicyNamedBeforeIt) {
  for (const char* bad : {"{from: reactive}", "{from: later}", "{from: [tide]}"}) {
    SCOPED_TRACE(bad);
    auto c = ParseConfig(StrCat(kTwoPools, "policies:\n  variants:\n    first: ", bad, "\n    later: {}\n"),
                         "c.yaml");
    ASSERT_FALSE(c.ok());
    EXPECT_THAT(Msg(c.status()), HasSubstr("policies.variants.first.from"));
  }
  auto twice = ParseConfig(StrCat(kTwoPools, "policies:\n  variants:\n    tide-seed: {}\n"), "c.yaml");
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(Msg(twice.status()), HasSubstr("not a built-in policy's"));
}

TEST(ParseConfigTest, ConsolidationOptions) {
  auto c = ParseConfig(StrCat(kTwoPools, R"(policies:
  variants:
    packed:
      consolidation: {enabled: true, min_run: 1h, min_ratio: 5, max_unsaved: 5m, headroom_gpus: 8,
                      headroom_window: 30m, quiet_for: 2h, remaining: expected-end}
)"), "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  const auto& d = c->policies;
  EXPECT_TRUE(d.tide.consolidation.enabled);  // tide's default
  EXPECT_FALSE(d.seed.consolidation.enabled);  // not in the seed's rule
  EXPECT_FALSE(d.reactive.consolidation.enabled);
  ASSERT_EQ(d.variants.size(), 1u);
  const auto& o = d.variants[0].second.consolidation;
  EXPECT_TRUE(o.enabled);
  EXPECT_EQ(o.min_run, Hours(1));
  EXPECT_DOUBLE_EQ(o.min_ratio, 5);
  EXPECT_EQ(o.max_unsaved, Minutes(5));
  EXPECT_EQ(o.headroom_gpus, 8);
  EXPECT_EQ(o.headroom_window, Minutes(30));
  EXPECT_EQ(o.quiet_for, Hours(2));
  EXPECT_EQ(d.tide.consolidation.quiet_for, Seconds(0));
  EXPECT_EQ(d.seed.consolidation.quiet_for, Hours(1));
  EXPECT_EQ(o.remaining, autoscale::ConsolidationOptions::Remaining::kExpectedEnd);
}


struct BadConfigCase {
  std::string name;
  std::string text;
  // The start of the message: "bad.yaml:LINE:COL: " (or "bad.yaml:LINE:" where
  // the column is yaml-cpp's to choose).
  std::string prefix;
  // The field path and the complaint, e.g. "pools[1].max_nodes: must be >= min_nodes".
  std::string part;
};

class BadConfigTest : public ::testing::TestWithParam<BadConfigCase> {};

TEST_P(BadConfigTest, ErrorNamesFileLineColumnAndField) {
  const auto& c = GetParam();
  auto r = ParseConfig(c.text, "bad.yaml");
  ASSERT_FALSE(r.ok()) << "parsed:\n" << c.text;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(r.status()), StartsWith(c.prefix));
  EXPECT_THAT(Msg(r.status()), HasSubstr(c.part));
}

// One good pool, to put after a bad one or use as pools[0].
#define GOOD_POOL "  - {name: gpu, instance_type: {gpus: 8}, price_per_hour: 100}\n"

INSTANTIATE_TEST_SUITE_P(
    Cases, BadConfigTest,
    ::testing::Values(
        BadConfigCase{"UnknownTimeZone", "time_zone: Mars/Olympus\npools:\n" GOOD_POOL, "bad.yaml:1:12: ",
                      "time_zone: unknown time zone 'Mars/Olympus'"},
        BadConfigCase{"LiveUnknownPool",
                      "pools:\n" GOOD_POOL "live:\n  slurm:\n    pools: {gpux: \"n[1-4]\"}\n", "bad.yaml:5:19: ",
                      "live.slurm.pools.gpux: no pool named 'gpux' (pools: gpu)"},
        BadConfigCase{"LivePoolWithoutNodes",
                      "pools:\n" GOOD_POOL "  - {name: b, instance_type: {gpus: 8}, price_per_hour: 1}\n"
                      "live:\n  slurm:\n    pools: {gpu: \"n[1-4]\"}\n",
                      "bad.yaml:6:12: ", "pool 'b' has no Slurm nodes"},
        BadConfigCase{"LiveNoSlurm", "pools:\n" GOOD_POOL "live:\n  state: s.db\n", "bad.yaml:4:3: ",
                      "`live:` needs a `slurm:` section"},
        BadConfigCase{"LiveBadProvider",
                      "pools:\n" GOOD_POOL "live:\n  slurm: {pools: {gpu: n1}}\n  provider: {kind: aws}\n",
                      "bad.yaml:5:20: ", "unknown provider 'aws'; expected local, exec or kwok"},
        BadConfigCase{"LiveExecWithoutList",
                      "pools:\n" GOOD_POOL "live:\n  slurm: {pools: {gpu: n1}}\n"
                      "  provider: {kind: exec, create: [a], delete: [b]}\n",
                      "bad.yaml:5:13: ", "the exec provider needs a `list` command"},
        BadConfigCase{"LiveBadSignal",
                      "pools:\n" GOOD_POOL "live:\n  slurm: {pools: {gpu: n1}, checkpoint_signal: KILL}\n",
                      "bad.yaml:4:48: ", "'KILL' is not a signal tide sends"},
        BadConfigCase{"LiveUnknownClass",
                      "pools:\n" GOOD_POOL "live:\n  slurm: {pools: {gpu: n1}, classes: [{partition: p, class: vip}]}\n",
                      "bad.yaml:4:", "no priority class named 'vip'"},
        BadConfigCase{"YamlSyntaxError", "pools:\n  - name: gpu\n    price_per_hour: [1, 2\n", "bad.yaml:4:",
                      "YAML syntax error: end of sequence flow not found"},
        BadConfigCase{"YamlBadIndentation", "pools:\n  - name: gpu\n     price_per_hour: 1\n", "bad.yaml:3:",
                      "YAML syntax error: illegal map value"},
        BadConfigCase{"EmptyFile", "", "bad.yaml: ", "the file is empty"},
        // Found by fuzzing: the YAML parser's message quoted a control byte raw.
        BadConfigCase{"ControlByteInAnEscape", "currency: \"C\\\x01\"\n", "bad.yaml:1:",
                      "YAML syntax error: unknown escape character: \\x01"},
        BadConfigCase{"ControlByteInAKey", "curr\x1b" "ency: CNY\npools:\n" GOOD_POOL, "bad.yaml:1:",
                      "curr\\x1bency"},
        BadConfigCase{"NotAMapping", "just some words\n", "bad.yaml:1:1: expected a mapping", "(key: value lines)"},
        BadConfigCase{"UnknownTopLevelKey", "currency: CNY\npool:\n" GOOD_POOL, "bad.yaml:2:1: ",
                      "pool: unknown field (did you mean 'pools'?); expected one of: currency, simulation, jobs, regions, instance_types, pools"},
        BadConfigCase{"UnknownPoolKey",
                      "pools:\n" GOOD_POOL "  - name: b\n    instance_type: {gpus: 8}\n    price_per_hour: 1\n"
                      "    max_node: 4\n",
                      "bad.yaml:6:5: ", "pools[1].max_node: unknown field (did you mean 'max_nodes'?); expected one of: name, instance_type"},
        BadConfigCase{"MissingPools", "currency: CNY\n", "bad.yaml:1:1: no pools",
                      "no pools: define at least one under `pools:`"},
        BadConfigCase{"EmptyPools", "pools: []\n", "bad.yaml:1:8: ", "pools: expected a non-empty list of pools"},
        BadConfigCase{"PoolsNotAList", "pools: gpu\n", "bad.yaml:1:8: ", "pools: expected a non-empty list"},
        BadConfigCase{"MissingPrice", "pools:\n  - name: gpu\n    instance_type: {gpus: 8}\n", "bad.yaml:2:5: ",
                      "pools[0]: pool 'gpu' needs a price_per_hour"},
        BadConfigCase{"NegativePrice",
                      "pools:\n  - name: gpu\n    instance_type: {gpus: 8}\n    price_per_hour: -1\n",
                      "bad.yaml:4:21: ", "pools[0].price_per_hour: must be between 0 and"},
        BadConfigCase{"PriceNotANumber",
                      "pools:\n  - name: gpu\n    instance_type: {gpus: 8}\n    price_per_hour: cheap\n",
                      "bad.yaml:4:21: ", "pools[0].price_per_hour: expected a number, got 'cheap'"},
        BadConfigCase{"MissingName", "pools:\n  - instance_type: {gpus: 8}\n    price_per_hour: 1\n",
                      "bad.yaml:2:5: ", "pools[0]: a pool needs a name"},
        BadConfigCase{"MissingInstanceType", "pools:\n  - name: gpu\n    price_per_hour: 1\n", "bad.yaml:2:5: ",
                      "pools[0]: pool 'gpu' needs an instance_type"},
        BadConfigCase{"MaxNodesBelowMinNodes",
                      "pools:\n" GOOD_POOL
                      "  - name: b\n    instance_type: {gpus: 8}\n    price_per_hour: 1\n    min_nodes: 2\n"
                      "    max_nodes: 1\n",
                      "bad.yaml:7:16: ", "pools[1].max_nodes: must be >= min_nodes (2), got 1"},
        BadConfigCase{"MaxNodesNotANumber",
                      "pools:\n  - name: gpu\n    instance_type: {gpus: 8}\n    price_per_hour: 1\n"
                      "    max_nodes: lots\n",
                      "bad.yaml:5:16: ", "pools[0].max_nodes: expected a whole number, got 'lots'"},
        BadConfigCase{"NegativeMinNodes",
                      "pools:\n  - name: gpu\n    instance_type: {gpus: 8}\n    price_per_hour: 1\n"
                      "    min_nodes: -1\n",
                      "bad.yaml:5:16: ", "pools[0].min_nodes: must be between 0 and 1000000, got -1"},
        BadConfigCase{"NodesAndMaxNodes",
                      "pools:\n  - name: gpu\n    instance_type: {gpus: 8}\n    price_per_hour: 1\n"
                      "    nodes: 2\n    max_nodes: 3\n",
                      "bad.yaml:5:12: ", "pools[0].nodes: give either nodes or min_nodes/max_nodes, not both"},
        BadConfigCase{"ReservedWithoutFixedSize",
                      "pools:\n  - name: base\n    instance_type: {gpus: 8}\n    tier: reserved\n"
                      "    price_per_hour: 55\n    min_nodes: 1\n    max_nodes: 4\n",
                      "bad.yaml:2:5: ", "pools[0]: pool 'base' is reserved"},
        BadConfigCase{"ReservedWithMaxNodesOnly",
                      "pools:\n  - name: base\n    instance_type: {gpus: 8}\n    tier: reserved\n"
                      "    price_per_hour: 55\n    max_nodes: 4\n",
                      "bad.yaml:2:5: ", "give it `nodes: N`"},
        BadConfigCase{"UnknownInstanceTypeName",
                      "instance_types:\n  - {name: a100x8, gpus: 8}\n  - {name: a100x2, gpus: 2}\n"
                      "pools:\n  - name: gpu\n    instance_type: h100x8\n    price_per_hour: 1\n",
                      "bad.yaml:6:20: ",
                      "pools[0].instance_type: no instance type named 'h100x8'; defined: a100x8, a100x2"},
        BadConfigCase{"InstanceTypeNameWithoutTypes",
                      "pools:\n  - name: gpu\n    instance_type: a100x8\n    price_per_hour: 1\n",
                      "bad.yaml:3:20: ", "no instance type named 'a100x8'; define it under instance_types"},
        BadConfigCase{"InstanceTypeTooManyGpus",
                      "pools:\n  - name: gpu\n    instance_type: {gpus: 128}\n    price_per_hour: 1\n",
                      "bad.yaml:3:27: ", "pools[0].instance_type.gpus: must be between 1 and 64, got 128"},
        BadConfigCase{"UnknownInstanceTypeKey",
                      "instance_types:\n  - {name: a, gpus: 8, gpu: A100}\npools:\n" GOOD_POOL, "bad.yaml:2:24: ",
                      "instance_types[0].gpu: unknown field"},
        BadConfigCase{"InstanceTypeWithoutName", "instance_types:\n  - {gpus: 8}\npools:\n" GOOD_POOL,
                      "bad.yaml:2:5: ", "instance_types[0]: an instance type needs a name"},
        BadConfigCase{"DuplicateInstanceType",
                      "instance_types:\n  - {name: a, gpus: 8}\n  - {name: a, gpus: 2}\npools:\n" GOOD_POOL,
                      "bad.yaml:3:5: ", "instance_types[1]: instance type 'a' is defined twice"},
        BadConfigCase{"BadTier",
                      "pools:\n  - name: gpu\n    instance_type: {gpus: 8}\n    tier: cheap\n"
                      "    price_per_hour: 1\n",
                      "bad.yaml:4:11: ", "pools[0].tier: 'cheap' is not a tier; use reserved, on-demand or spot"},
        BadConfigCase{"BadDuration",
                      "pools:\n" GOOD_POOL "policies:\n  tide:\n    pending_grace: 1minute\n",
                      "bad.yaml:5:20: ", "policies.tide.pending_grace: '1minute' is not a duration"},
        BadConfigCase{"NegativeBootHedge", "pools:\n" GOOD_POOL "policies:\n  tide:\n    boot_hedge: -1\n",
                      "bad.yaml:5:", "policies.tide.boot_hedge: must be between 0 and 1000, got -1"},
        BadConfigCase{"BadScanInterval", "pools:\n" GOOD_POOL "policies:\n  reactive:\n    scan_interval: -10s\n",
                      "bad.yaml:5:20: ", "policies.reactive.scan_interval: '-10s' is not a duration"},
        BadConfigCase{"BadBootDelayRange",
                      "pools:\n  - name: gpu\n    instance_type: {gpus: 8}\n    price_per_hour: 1\n"
                      "    boot_delay: 5m-2m\n",
                      "bad.yaml:5:17: ", "pools[0].boot_delay: the range's upper end is below its lower end"},
        BadConfigCase{"BadBootDelayText",
                      "pools:\n  - name: gpu\n    instance_type: {gpus: 8}\n    price_per_hour: 1\n"
                      "    boot_delay: 2m-5x\n",
                      "bad.yaml:5:17: ", "pools[0].boot_delay: '2m-5x' is not a boot delay"},
        BadConfigCase{"BadBootDelayThreeParts",
                      "pools:\n  - name: gpu\n    instance_type: {gpus: 8}\n    price_per_hour: 1\n"
                      "    boot_delay: 1m-2m-3m\n",
                      "bad.yaml:5:17: ", "'1m-2m-3m' is not a boot delay"},
        BadConfigCase{"BadBootDelayDistribution",
                      "pools:\n  - name: gpu\n    instance_type: {gpus: 8}\n    price_per_hour: 1\n"
                      "    boot_delay: {distribution: gamma}\n",
                      "bad.yaml:5:32: ", "pools[0].boot_delay.distribution: expected uniform, fixed or lognormal"},
        BadConfigCase{"BootDelayMaxBelowMin",
                      "pools:\n  - name: gpu\n    instance_type: {gpus: 8}\n    price_per_hour: 1\n"
                      "    boot_delay: {min: 5m, max: 1m}\n",
                      "bad.yaml:5:17: ", "pools[0].boot_delay: max is below min"},
        BadConfigCase{"UnknownExpander",
                      "pools:\n" GOOD_POOL "policies:\n  tide:\n    expanders: [priority, cheapest]\n",
                      "bad.yaml:5:16: ", "policies.tide.expanders: unknown expander 'cheapest'; known: priority"},
        BadConfigCase{"UnknownPolicyInCompare", "pools:\n" GOOD_POOL "policies:\n  compare: [tide, greedy]\n",
                      "bad.yaml:4:12: ", "policies.compare: unknown policy 'greedy'; known: tide, tide-seed, reactive"},
        BadConfigCase{"UnknownPolicyInCompareString", "pools:\n" GOOD_POOL "policies:\n  compare: tide,greedy\n",
                      "bad.yaml:4:12: ", "policies.compare: unknown policy 'greedy'"},
        BadConfigCase{"FixedPolicyWithBadSize", "pools:\n" GOOD_POOL "policies:\n  compare: [tide, fixedfoo]\n",
                      "bad.yaml:4:12: ", "policies.compare: unknown policy 'fixedfoo'"},
        BadConfigCase{"FixedPolicyOnUnknownPool", "pools:\n" GOOD_POOL "policies:\n  compare: [fixed:3:nope]\n",
                      "bad.yaml:4:12: ", "policies.compare: policy 'fixed:3:nope': no pool named 'nope'"},
        BadConfigCase{"PolicyListedTwice", "pools:\n" GOOD_POOL "policies:\n  compare: [tide, tide]\n",
                      "bad.yaml:4:12: ", "policy 'tide' listed twice"},
        BadConfigCase{"FixedPoolNotDefined", "pools:\n" GOOD_POOL "policies:\n  fixed:\n    pool: h100\n",
                      "bad.yaml:5:11: ", "policies.fixed.pool: no pool named 'h100'"},
        BadConfigCase{"UnknownPolicySection", "pools:\n" GOOD_POOL "policies:\n  greedy: {}\n", "bad.yaml:4:3: ",
                      "policies.greedy: unknown field; expected one of: compare, tide"},
        BadConfigCase{"UnknownAutoscalerKey", "pools:\n" GOOD_POOL "policies:\n  tide:\n    threshold: 3\n",
                      "bad.yaml:5:5: ", "policies.tide.threshold: unknown field"},
        BadConfigCase{"PendingThresholdNotANumber",
                      "pools:\n" GOOD_POOL "policies:\n  tide:\n    pending_threshold: three\n", "bad.yaml:5:24: ",
                      "policies.tide.pending_threshold: expected a whole number, got 'three'"},
        BadConfigCase{"GangAwareNotABool", "pools:\n" GOOD_POOL "policies:\n  tide:\n    gang_aware: maybe\n",
                      "bad.yaml:5:17: ", "policies.tide.gang_aware: expected true or false"},
        BadConfigCase{"DuplicatePoolName",
                      "pools:\n" GOOD_POOL "  - name: gpu\n    instance_type: {gpus: 2}\n    price_per_hour: 1\n",
                      "bad.yaml:3:5: ", "pools[1]: pool 'gpu' is defined twice"},
        BadConfigCase{"DefaultPriorityClassUnknown", "pools:\n" GOOD_POOL "default_priority_class: urgent\n",
                      "bad.yaml:3:25: ", "default_priority_class: no priority class named 'urgent'"},
        BadConfigCase{"DefaultPriorityClassNotInCustomList",
                      "pools:\n" GOOD_POOL "priority_classes:\n  - {name: a, value: 1}\ndefault_priority_class: normal\n",
                      "bad.yaml:5:25: ", "default_priority_class: no priority class named 'normal'"},
        BadConfigCase{"DuplicatePriorityClass",
                      "pools:\n" GOOD_POOL "priority_classes:\n  - {name: a, value: 1}\n  - {name: a, value: 2}\n",
                      "bad.yaml:5:5: ", "priority_classes[1]: priority class 'a' is defined twice"},
        BadConfigCase{"PriorityClassWithoutName", "pools:\n" GOOD_POOL "priority_classes:\n  - {value: 1}\n",
                      "bad.yaml:4:5: ", "priority_classes[0]: a priority class needs a name"},
        BadConfigCase{"UnknownPriorityClassKey",
                      "pools:\n" GOOD_POOL "priority_classes:\n  - {name: a, value: 1, preempt: true}\n",
                      "bad.yaml:4:25: ", "priority_classes[0].preempt: unknown field"},
        BadConfigCase{"EmptyPriorityClasses", "pools:\n" GOOD_POOL "priority_classes: []\n", "bad.yaml:3:19: ",
                      "priority_classes: expected a non-empty list of priority classes"},
        BadConfigCase{"BadSimulationStart", "simulation:\n  start: next monday\npools:\n" GOOD_POOL,
                      "bad.yaml:2:10: ", "simulation.start: 'next monday' is not a timestamp"},
        BadConfigCase{"NegativeSeed", "simulation:\n  seed: -1\npools:\n" GOOD_POOL, "bad.yaml:2:9: ",
                      "simulation.seed: must be between 0 and"},
        BadConfigCase{"UnknownSimulationKey", "simulation:\n  days: 7\npools:\n" GOOD_POOL, "bad.yaml:2:3: ",
                      "simulation.days: unknown field; expected one of: seed, start, gpus_per_worker_max"},
        BadConfigCase{"VariantNamedLikeABuiltIn",
                      "pools:\n" GOOD_POOL "policies:\n  variants:\n    reactive: {spot_share: 0}\n", "bad.yaml:5:15: ",
                      "policies.variants.reactive: a variant needs a name of its own"},
        BadConfigCase{"VariantUnknownOption",
                      "pools:\n" GOOD_POOL "policies:\n  variants:\n    v: {spot_shar: 0}\n", "bad.yaml:5:9: ",
                      "policies.variants.v.spot_shar: unknown field (did you mean 'spot_share'?)"},
        BadConfigCase{"ConsolidationUnknownKey",
                      "pools:\n" GOOD_POOL "policies:\n  tide:\n    consolidation: {enabled: true, min_rato: 2}\n",
                      "bad.yaml:5:", "policies.tide.consolidation.min_rato: unknown field (did you mean 'min_ratio'?)"},
        BadConfigCase{"ConsolidationNegativeRatio",
                      "pools:\n" GOOD_POOL "policies:\n  tide:\n    consolidation: {min_ratio: -1}\n", "bad.yaml:5:",
                      "policies.tide.consolidation.min_ratio: must be between 0 and 1000, got -1"},
        BadConfigCase{"ConsolidationRemaining",
                      "pools:\n" GOOD_POOL "policies:\n  tide:\n    consolidation: {remaining: runtime}\n",
                      "bad.yaml:5:", "policies.tide.consolidation.remaining: expected age or expected-end"},
        BadConfigCase{"ConsolidationHeadroom",
                      "pools:\n" GOOD_POOL "policies:\n  tide:\n    consolidation: {headroom_gpus: many}\n",
                      "bad.yaml:5:", "policies.tide.consolidation.headroom_gpus: expected a whole number, got 'many'"},
        BadConfigCase{"BuyFromUnknownPool", "pools:\n" GOOD_POOL "policies:\n  tide: {buy_from: [gpu, tpu]}\n",
                      "bad.yaml:4:20: ", "policies.tide.buy_from: no pool named 'tpu'"},
        BadConfigCase{"MinPriorityUnknownClass",
                      "pools:\n  - {name: gpu, instance_type: {gpus: 8}, price_per_hour: 1, min_priority: urgent}\n",
                      "bad.yaml:2:", "no priority class named 'urgent'"},
        BadConfigCase{"PoolRegionNotDefined",
                      "regions:\n  - {name: north}\npools:\n  - {name: gpu, instance_type: {gpus: 8}, price_per_hour: 1, region: south}\n",
                      "bad.yaml:4:", "region 'south' is not under `regions:` (north)"},
        BadConfigCase{"RegionTwice", "regions:\n  - {name: a}\n  - {name: a}\npools:\n" GOOD_POOL, "bad.yaml:3:5: ",
                      "regions[1]: region 'a' is defined twice"},
        BadConfigCase{"NegativeEgress", "regions:\n  - {name: a, egress_per_gb: -1}\npools:\n" GOOD_POOL, "bad.yaml:2:",
                      "egress_per_gb: must be between 0 and"},
        BadConfigCase{"IdleTimeTwice", "pools:\n" GOOD_POOL "policies:\n  tide: {idle_release_after: 5m, unneeded_time: 10m}\n",
                      "bad.yaml:4:", "policies.tide.unneeded_time: the same setting as idle_release_after; give only one"},
        BadConfigCase{"ForecastMinDaysAboveDays",
                      "pools:\n" GOOD_POOL "policies:\n  tide: {forecast: {days: 3, min_days: 5}}\n", "bad.yaml:4:",
                      "policies.tide.forecast.min_days: min_days (5) must not exceed days (3)"},
        BadConfigCase{"UnknownSchedulerKey", "pools:\n" GOOD_POOL "scheduler:\n  backfil: true\n",
                      "bad.yaml:4:3: ", "scheduler.backfil: unknown field (did you mean 'backfill'?); expected one of: backfill"}),
    [](const auto& info) { return info.param.name; });

#undef GOOD_POOL

}  // namespace
}  // namespace tide::config

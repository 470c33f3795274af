#include "report/html.h"

#include <gtest/gtest.h>

#include <regex>

#include "nlohmann/json.hpp"

namespace tide::report {
namespace {

model::Timeline SmallTimeline() {
  model::TimelineRecorder r(FromUnixSeconds(1'767'571'200), Seconds(60), {"demand_gpus"}, {"spot_interruptions"});
  r.Hold(FromUnixSeconds(1'767'571'200), FromUnixSeconds(1'767'571'320), {1.0 / 3});
  r.Set(FromUnixSeconds(1'767'571'260), {2});
  return r.Finish(FromUnixSeconds(1'767'571'320));
}

ReportData Data(const model::Timeline* t) {
  ReportData d;
  d.title = "tide simulate: </script><b>x";
  d.time_zone = "Asia/Shanghai";
  d.currency = "CNY";
  d.summary_json = R"({"policies": [{"name": "tide", "cost_total": 12.5}]})";
  d.classes = {"high", "low"};
  d.policies.push_back({"tide", "the policy", t, {{"all", std::vector<int64_t>(101, 7)}}});
  return d;
}

TEST(ReportData, CarriesTimelineQuantilesAndSummary) {
  const model::Timeline t = SmallTimeline();
  const auto j = nlohmann::json::parse(ReportDataJson(Data(&t)));
  EXPECT_EQ(j["format"], "tide-report/1");
  EXPECT_EQ(j["mode"], "simulation");
  EXPECT_EQ(j["time_zone"], "Asia/Shanghai");
  EXPECT_EQ(j["classes"], nlohmann::json({"high", "low"}));
  EXPECT_EQ(j["summary"]["policies"][0]["cost_total"], 12.5);
  const auto& tl = j["policies"][0]["timeline"];
  EXPECT_EQ(tl["start"], 1'767'571'200);
  EXPECT_EQ(tl["step"], 60);
  EXPECT_EQ(tl["buckets"], 2);
  EXPECT_EQ(tl["series"]["demand_gpus"], nlohmann::json({0.333, 0.333}));  // three decimals
  EXPECT_EQ(tl["series"]["spot_interruptions"], nlohmann::json({0, 2}));
  EXPECT_EQ(j["policies"][0]["wait_quantiles"]["all"].size(), 101u);
}

TEST(ReportData, NoTimelineIsNull) {
  const auto j = nlohmann::json::parse(ReportDataJson(Data(nullptr)));
  EXPECT_TRUE(j["policies"][0]["timeline"].is_null());
}

TEST(RenderHtml, IsOnePageWithNothingToFetch) {
  const model::Timeline t = SmallTimeline();
  const std::string page = RenderHtml(ReportDataJson(Data(&t)));
  EXPECT_EQ(page.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(page.find("<style>"), std::string::npos);
  EXPECT_NE(page.find("function chart("), std::string::npos);  // the script is inlined
  // No external resource: no src= or href= attribute but data: ones (the
  // empty icon, so that browsers ask for no favicon), no stylesheet link.
  EXPECT_FALSE(std::regex_search(page, std::regex(R"((src|href)\s*=\s*"(?!data:))")));
  EXPECT_NE(page.find(R"(<link rel="icon" href="data:,">)"), std::string::npos);
  EXPECT_EQ(page.find("stylesheet"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  // The markers are all filled.
  EXPECT_EQ(page.find("/*@"), std::string::npos);
}

TEST(RenderHtml, DataCannotCloseItsScriptElement) {
  const model::Timeline t = SmallTimeline();
  const std::string page = RenderHtml(ReportDataJson(Data(&t)));
  const size_t open = page.find("<script id=\"tide-data\"");
  ASSERT_NE(open, std::string::npos);
  const size_t close = page.find("</script>", open);
  const std::string data = page.substr(page.find('>', open) + 1, close - page.find('>', open) - 1);
  EXPECT_NE(data.find(R"(<\/script><b>x)"), std::string::npos);
  // What the browser reads back is the original title.
  EXPECT_EQ(nlohmann::json::parse(data)["title"], "tide simulate: </script><b>x");
}

TEST(RenderLiveHtml, FetchesItsSourceAndEmbedsNoData) {
  const std::string page = RenderLiveHtml("/api/v1/report?a=\"b\"", 5);
  EXPECT_NE(page.find(R"(<body data-source="/api/v1/report?a=&quot;b&quot;" data-refresh="5">)"), std::string::npos);
  EXPECT_NE(page.find(R"(<script id="tide-data" type="application/json">null</script>)"), std::string::npos);
}

}  // namespace
}  // namespace tide::report

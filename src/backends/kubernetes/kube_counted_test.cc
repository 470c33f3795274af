// The request counter behind tide_kube_requests_total: each request counted
// once, by kind, and passed on unchanged.
#include "backends/kubernetes/kube_counted.h"

#include <memory>

#include "backends/kubernetes/kube_fake_transport_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::backends::kube {
namespace {

TEST(CountedTransportTest, CountsEachRequestByKindAndPassesItOn) {
  auto inner = std::make_unique<testing::FakeTransport>();
  testing::FakeTransport* fake = inner.get();
  for (int i = 0; i < 5; ++i) fake->Reply200("{}");
  fake->watches.emplace_back();
  RequestCounts counts;
  CountedTransport t(std::move(inner), &counts);
  ASSERT_TRUE(t.Request("GET", "/api/v1/pods?limit=500").ok());
  ASSERT_TRUE(t.Request("GET", "/api/v1/nodes/n1").ok());
  ASSERT_TRUE(t.Request("POST", "/api/v1/namespaces/a/pods/p/binding", "{}").ok());
  ASSERT_TRUE(t.Request("PATCH", "/api/v1/nodes/n1", "{}").ok());
  ASSERT_TRUE(t.Request("DELETE", "/api/v1/nodes/n1").ok());
  ASSERT_TRUE(t.Watch("/api/v1/pods?watch=1", [](std::string_view) { return true; }).ok());
  EXPECT_EQ(fake->calls.size(), 5u);
  EXPECT_EQ(fake->calls[2].method, "POST");
  const auto n = counts.Snapshot();
  EXPECT_EQ(n.at("list"), 1);
  EXPECT_EQ(n.at("get"), 1);
  EXPECT_EQ(n.at("post"), 1);
  EXPECT_EQ(n.at("patch"), 1);
  EXPECT_EQ(n.at("delete"), 1);
  EXPECT_EQ(n.at("watch"), 1);
  EXPECT_EQ(n.at("put"), 0);
  EXPECT_THAT(counts.Exposition(), ::testing::HasSubstr("tide_kube_requests_total{kind=\"list\"} 1\n"));
  EXPECT_THAT(counts.Exposition(), ::testing::HasSubstr("tide_kube_requests_total{kind=\"put\"} 0\n"));
}

}  // namespace
}  // namespace tide::backends::kube

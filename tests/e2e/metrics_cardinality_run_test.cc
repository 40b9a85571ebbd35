// /metrics of `kubesched run` stays bounded when anyone who may create pods floods the cluster
// with pods carrying random policy annotations, queue labels, extended resources, labels and
// annotations: scraped over HTTP from the real binary against kubesched-testapi.

#include <catch2/catch.hpp>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/metrics_series.h"
#include "tests/testing/scrape.h"
#include "tests/testing/test_api_client.h"

namespace kubesched::metrics {
namespace {

using testapi::TestApiProcess;
using testing::ChildProcess;
using testing::LabelValues;
using testing::Scrape;
using testing::Series;

constexpr char kMarker[] = "junk";

std::string NodeJson(const std::string& name) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
                      R"("},"status":{"capacity":{"cpu":"64","memory":"64Gi","pods":"200"},)",
                      R"("allocatable":{"cpu":"64","memory":"64Gi","pods":"200"}}})");
}

// A pod with the given metadata fields (JSON members of "labels" and "annotations") and requests.
std::string PodJson(const std::string& name, const std::string& labels,
                    const std::string& annotations, const std::string& requests) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                      R"(","namespace":"default","labels":{)", labels, R"(},"annotations":{)",
                      annotations, R"(}},"spec":{"schedulerName":"kubesched",)",
                      R"("containers":[{"name":"c","image":"busybox","resources":{"requests":{)",
                      requests, "}}}]}}");
}

std::string Member(const std::string& key, const std::string& value) {
  return absl::StrCat("\"", key, "\":\"", value, "\"");
}

std::vector<std::string> Minus(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::vector<std::string> out;
  for (const std::string& s : a) {
    if (!b.contains(s)) out.push_back(s);
  }
  return out;
}

bool AnyWithMarker(const Scrape& scrape) {
  for (const testing::ScrapeSample& sample : scrape.samples()) {
    for (const auto& [name, value] : sample.labels) {
      if (absl::StrContains(value, kMarker) || absl::StrContains(name, kMarker)) return true;
    }
  }
  return false;
}

double Attempts(const Scrape& scrape) { return scrape.Value(kScheduleAttemptsTotal); }

// Creates `count` pods: one in four names a policy that does not exist, one a queue that does not
// exist, one requests an extended resource no node has; the others fit. All carry random labels
// and annotations. Returns their names.
std::vector<std::string> Flood(testing::TestApiClient& api, std::mt19937_64& random, int count,
                               const std::string& round) {
  const auto junk = [&random] { return absl::StrCat(kMarker, "-", random() % 1'000'000'000); };
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    const std::string name = absl::StrCat("flood-", round, "-", i);
    std::string labels = Member(absl::StrCat("example.com/", junk()), junk());
    std::string annotations = Member(absl::StrCat("example.com/", junk()), junk());
    std::string requests = Member("cpu", "10m");
    if (i % 4 == 0) annotations += "," + Member("kubesched.io/policy", junk());
    if (i % 4 == 1) labels += "," + Member("kubesched.io/queue", absl::StrCat("root.", junk()));
    if (i % 4 == 2) requests += "," + Member(absl::StrCat("example.com/", junk()), "1");
    api.Create("/api/v1/namespaces/default/pods", PodJson(name, labels, annotations, requests));
    names.push_back(name);
  }
  return names;
}

TEST_CASE("metrics: run's series do not grow with pods of random annotations, nor outlive them",
          "[metrics][run][e2e]") {
  const uint64_t seed = std::random_device()();
  INFO("seed " << seed);
  std::mt19937_64 random(seed);
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  testing::TestApiClient api(**server);
  for (int i = 0; i < 2; ++i) api.Create("/api/v1/nodes", NodeJson(absl::StrCat("node-", i)));
  api.Create("/api/v1/namespaces/default/pods", PodJson("plain", "", "", Member("cpu", "1")));
  api.Create("/api/v1/namespaces/default/pods", PodJson("too-big", "", "", Member("cpu", "999")));
  auto scheduler = testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig()});
  Scrape scrape;
  const auto wait_for = [&](std::string_view what, const std::function<bool()>& done) {
    testing::RequireEventually(what, *scheduler, [&] {
      scrape = testing::ScrapeMetrics(*scheduler);
      return done();
    });
  };
  wait_for("one pod is bound and one unschedulable", [&] {
    return scrape.Value(kBindsTotal, {{"result", "bound"}}) == 1 &&
           scrape.Value(kPendingPods, {{"queue", "unschedulable"}}) == 1;
  });

  constexpr int kPerRound = 24;
  std::vector<std::string> pods = Flood(api, random, kPerRound, "a");
  wait_for("the first flood was tried", [&] {
    return scrape.Value(kBindsTotal, {{"result", "bound"}}) == 1 + kPerRound / 4 &&
           scrape.Value(kPendingPods, {{"queue", "unschedulable"}}) == 1 + 3 * kPerRound / 4;
  });
  const std::set<std::string> flooded = Series(scrape);
  const std::set<std::string> flooded_values = LabelValues(scrape);
  CHECK_FALSE(AnyWithMarker(scrape));
  CHECK(scrape.Value(kUnschedulablePods,
                     {{"plugin", "PolicySelection"}, {"profile", "kubesched"}}) == kPerRound / 4);

  const std::vector<std::string> more = Flood(api, random, kPerRound, "b");
  pods.insert(pods.end(), more.begin(), more.end());
  wait_for("the second flood was tried", [&] {
    return scrape.Value(kBindsTotal, {{"result", "bound"}}) == 1 + 2 * kPerRound / 4 &&
           scrape.Value(kPendingPods, {{"queue", "unschedulable"}}) == 1 + 6 * kPerRound / 4;
  });
  const std::set<std::string> flooded_twice = Series(scrape);
  INFO("new after the second flood:\n" << absl::StrJoin(Minus(flooded_twice, flooded), "\n"));
  CHECK_FALSE(AnyWithMarker(scrape));
  CHECK(flooded_twice == flooded);
  CHECK(LabelValues(scrape) == flooded_values);

  for (const std::string& name : pods) {
    REQUIRE(api.Send("DELETE", absl::StrCat("/api/v1/namespaces/default/pods/", name)).status ==
            200);
  }
  wait_for("the flood's pods are gone", [&] {
    return scrape.Value(kPendingPods, {{"queue", "unschedulable"}}) == 1 &&
           scrape.Value(kCacheSize, {{"type", "pods"}}) == 1;
  });
  INFO("new after the pods went:\n" << absl::StrJoin(Minus(Series(scrape), flooded), "\n"));
  CHECK_FALSE(AnyWithMarker(scrape));
  CHECK(Minus(Series(scrape), flooded).empty());
  CHECK(LabelValues(scrape) == flooded_values);
  CHECK_FALSE(scrape.Has(kUnschedulablePods, {{"plugin", "PolicySelection"}}));
  CHECK(Attempts(scrape) >= 2 + 2 * kPerRound);
  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(15)).value_or(-1) == 0);
}

}  // namespace
}  // namespace kubesched::metrics

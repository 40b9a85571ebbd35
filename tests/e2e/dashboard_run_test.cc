// deploy/dashboards/kubesched.json reads only metrics that `kubesched run` serves: every metric
// name in its PromQL expressions (panels and variables) must be a sample of a real scrape, and
// every query goes to the dashboard's `datasource` variable.

#include <catch2/catch.hpp>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/scrape.h"
#include "tests/testing/temp_file.h"
#include "tests/testing/test_api_client.h"

namespace kubesched::metrics {
namespace {

using testapi::TestApiProcess;
using testing::Scrape;

bool IsNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool IsNameChar(char c) { return IsNameStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

// Drops what holds no metric name: string literals, label matchers {…}, ranges […].
std::string StripNonNames(std::string_view expr) {
  std::string out;
  char skip_until = 0;
  for (size_t i = 0; i < expr.size(); ++i) {
    const char c = expr[i];
    if (skip_until != 0) {
      if (c == '\\') ++i;
      if (c == skip_until) skip_until = 0;
      continue;
    }
    if (c == '"' || c == '\'' || c == '`') skip_until = c;
    if (c == '{') skip_until = '}';
    if (c == '[') skip_until = ']';
    out.push_back(skip_until == 0 ? c : ' ');
  }
  return out;
}

// The metric names a PromQL expression reads: identifiers that are not functions or aggregations
// (followed by "("), keywords, grouping labels (by/without/on/ignoring/group_*(…)), numbers and
// durations, or Grafana variables ($job, $__rate_interval).
std::set<std::string> MetricNames(std::string_view expr) {
  static const std::set<std::string, std::less<>> kKeywords = {
      "by",   "without", "on",  "ignoring", "group_left", "group_right",
      "bool", "offset",  "and", "or",       "unless"};
  static const std::set<std::string, std::less<>> kGroupings = {
      "by", "without", "on", "ignoring", "group_left", "group_right"};
  const std::string text = StripNonNames(expr);
  std::set<std::string> names;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '$' || std::isdigit(static_cast<unsigned char>(c))) {  // a variable, number, duration
      ++i;
      while (i < text.size() && (IsNameChar(text[i]) || text[i] == '.')) ++i;
      continue;
    }
    if (!IsNameStart(c)) {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < text.size() && IsNameChar(text[i])) ++i;
    const std::string name = text.substr(start, i - start);
    size_t next = i;
    while (next < text.size() && text[next] == ' ') ++next;
    // A call, or an aggregation with its grouping first: "sum by (le) (…)".
    const std::string_view rest = std::string_view(text).substr(next);
    const auto word_follows = [&rest](std::string_view word) {
      return rest.substr(0, word.size()) == word &&
             (rest.size() == word.size() || !IsNameChar(rest[word.size()]));
    };
    const bool call =
        (next < text.size() && text[next] == '(') ||
        (!kGroupings.contains(name) && (word_follows("by") || word_follows("without")));
    if (kGroupings.contains(name) && call) {
      i = text.find(')', next);  // the grouping's label names
      if (i == std::string::npos) break;
      continue;
    }
    if (!call && !kKeywords.contains(name)) names.insert(name);
  }
  return names;
}

void CollectQueries(const rapidjson::Value& value, std::vector<std::string>* exprs,
                    std::vector<const rapidjson::Value*>* datasources) {
  if (value.IsArray()) {
    for (const rapidjson::Value& item : value.GetArray()) CollectQueries(item, exprs, datasources);
    return;
  }
  if (!value.IsObject()) return;
  for (const auto& member : value.GetObject()) {
    const std::string_view key(member.name.GetString(), member.name.GetStringLength());
    if ((key == "expr" || key == "query") && member.value.IsString()) {
      exprs->emplace_back(member.value.GetString(), member.value.GetStringLength());
    } else if (key == "datasource") {
      datasources->push_back(&member.value);
    }
    CollectQueries(member.value, exprs, datasources);
  }
}

// A variable's query reads a metric through label_values(metric, label).
std::string_view QueryExpression(std::string_view query) {
  constexpr std::string_view kLabelValues = "label_values(";
  if (query.substr(0, kLabelValues.size()) != kLabelValues) return query;
  query.remove_prefix(kLabelValues.size());
  return query.substr(0, query.find(','));
}

TEST_CASE("dashboard: the metric name extractor finds names, not functions, labels or variables",
          "[dashboard]") {
  CHECK(MetricNames(R"(histogram_quantile(0.99, sum by (le, verb) )"
                    R"((rate(rest_client_request_duration_seconds_bucket{job=~"$job"})"
                    R"([$__rate_interval]))))") ==
        std::set<std::string>{"rest_client_request_duration_seconds_bucket"});
  CHECK(MetricNames("time() - process_start_time_seconds offset 5m") ==
        std::set<std::string>{"process_start_time_seconds"});
  CHECK(MetricNames("max without (pod) (up) + sum(a_total) by (x) / on (y) group_left b") ==
        std::set<std::string>{"up", "a_total", "b"});
  CHECK(MetricNames("x{l=\"by (no_metric)\"} and $var") == std::set<std::string>{"x"});
}

TEST_CASE("dashboard: every metric the dashboard reads is in a scrape of run, via $datasource",
          "[dashboard][run][e2e]") {
  std::ifstream file(testing::SourcePath("deploy/dashboards/kubesched.json"));
  REQUIRE(file.good());
  std::stringstream text;
  text << file.rdbuf();
  rapidjson::Document dashboard;
  dashboard.Parse(text.str().c_str());
  INFO(rapidjson::GetParseError_En(dashboard.GetParseError()));
  REQUIRE(!dashboard.HasParseError());
  REQUIRE(dashboard.IsObject());

  // The data source is a variable of type datasource, for Prometheus.
  bool has_datasource_variable = false;
  for (const rapidjson::Value& variable : dashboard["templating"]["list"].GetArray()) {
    has_datasource_variable |= std::string_view(variable["name"].GetString()) == "datasource" &&
                               std::string_view(variable["type"].GetString()) == "datasource" &&
                               std::string_view(variable["query"].GetString()) == "prometheus";
  }
  CHECK(has_datasource_variable);

  std::vector<std::string> exprs;
  std::vector<const rapidjson::Value*> datasources;
  CollectQueries(dashboard["panels"], &exprs, &datasources);
  const size_t panel_queries = exprs.size();
  CollectQueries(dashboard["templating"], &exprs, &datasources);
  REQUIRE(panel_queries >= 15);
  for (const rapidjson::Value* datasource : datasources) {
    REQUIRE(datasource->IsObject());
    CHECK(std::string_view((*datasource)["uid"].GetString()) == "${datasource}");
  }
  std::set<std::string> names;
  for (const std::string& expr : exprs) {
    if (expr == "prometheus") continue;  // the datasource variable's plugin type
    for (const std::string& name : MetricNames(QueryExpression(expr))) names.insert(name);
  }
  // What the dashboard is for: upstream's names first.
  for (const std::string& wanted :
       {std::string(kScheduleAttemptsTotal), std::string(kPodSchedulingSliDuration) + "_bucket",
        std::string(kSchedulingAttemptDuration) + "_bucket", std::string(kPendingPods),
        std::string(kBindsTotal), std::string(kPreemptionAttemptsTotal), std::string(kCacheSize),
        std::string(kRestClientRequestsTotal), std::string(kRestClientRequestDuration) + "_bucket",
        std::string(kLeaderElectionMasterStatus), std::string("process_cpu_seconds_total"),
        std::string("process_resident_memory_bytes")}) {
    INFO(wanted);
    CHECK(names.contains(wanted));
  }

  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  testing::TestApiClient api(**server);
  api.Create("/api/v1/nodes",
             R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-0"},"status":)"
             R"({"allocatable":{"cpu":"4","memory":"16Gi","pods":"110"}}})");
  for (const auto& [name, cpu] : {std::pair{"small", "1"}, std::pair{"huge", "64"}}) {
    api.Create("/api/v1/namespaces/default/pods",
               absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                            R"(","namespace":"default"},"spec":{"schedulerName":"kubesched",)",
                            R"("containers":[{"name":"c","image":"busybox","resources":)",
                            R"({"requests":{"cpu":")", cpu, R"("}}}]}})"));
  }
  auto scheduler =
      testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig(), .leader_elect = true});
  Scrape scrape;
  testing::RequireEventually("one pod is bound and one unschedulable", *scheduler, [&] {
    scrape = testing::ScrapeMetrics(*scheduler);
    return scrape.Value(kBindsTotal, {{"result", "bound"}}) == 1 &&
           scrape.Value(kPendingPods, {{"queue", "unschedulable"}}) == 1;
  });
  std::vector<std::string> missing;
  for (const std::string& name : names) {
    if (!scrape.Has(name)) missing.push_back(name);
  }
  INFO("read by the dashboard, missing from the scrape: " << absl::StrJoin(missing, ", "));
  CHECK(missing.empty());
  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(15)).value_or(-1) == 0);
}

}  // namespace
}  // namespace kubesched::metrics

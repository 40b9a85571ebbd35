// The `queues` section: decoding and validation, in the configuration file and as the ConfigMap's
// queues.yaml.

#include "config/queues.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "config/config.h"
#include "tests/testing/temp_file.h"

namespace kubesched::config {
namespace {

std::string Error(const absl::StatusOr<QueuesConfig>& parsed) {
  REQUIRE_FALSE(parsed.ok());
  return std::string(parsed.status().message());
}

constexpr char kIssueExample[] = R"(
queues:
  modelLabels: {nvidia.com/gpu: nvidia.com/gpu.product, cpu: kubesched.io/machine-class}
  tree:
  - name: prod
    max: {cpu: "900", memory: 4Ti, nvidia.com/gpu: "64", nvidia.com/gpu.A100: "16"}
    queues:
    - name: search
      max: {cpu: "750"}
      budget: {nvidia.com/gpu: 1000h, period: 168h}
    - name: ads
)";

TEST_CASE("the queues section of the issue's example decodes", "[config][quota]") {
  auto parsed = ParseQueuesDocument(kIssueExample);
  REQUIRE(parsed.ok());
  REQUIRE(parsed->model_labels.size() == 2);
  CHECK(parsed->model_labels[1] ==
        std::pair<std::string, std::string>("cpu", "kubesched.io/machine-class"));
  REQUIRE(parsed->tree.size() == 1);
  const QueueSpec& prod = parsed->tree[0];
  CHECK(prod.path == "root.prod");
  CHECK(prod.max.Get(api::kCpu) == 900'000);
  CHECK(prod.max.Get(api::kMemory) == 4LL << 40);
  CHECK(prod.max.Get(api::InternResource("nvidia.com/gpu.A100")) == 16);
  CHECK(prod.limited.size() == 4);
  REQUIRE(prod.queues.size() == 2);
  const QueueSpec& search = prod.queues[0];
  CHECK(search.path == "root.prod.search");
  REQUIRE(search.budget.size() == 1);
  CHECK(search.budget[0].unit_seconds == 1000.0 * 3600);
  CHECK(search.budget[0].text == "1000h");
  CHECK(search.period == absl::Hours(168));
  CHECK(prod.queues[1].path == "root.prod.ads");
  CHECK(prod.queues[1].limited.empty());
  CHECK(parsed->auto_create);
}

TEST_CASE("cpu budgets are milli-core seconds", "[config][quota]") {
  auto parsed = ParseQueuesDocument(
      "tree: [{name: a, budget: {cpu: 2h}}, {name: b, budget: "
      "{cpu: 500mh}}]");
  REQUIRE(parsed.ok());
  CHECK(parsed->tree[0].budget[0].unit_seconds == 2000.0 * 3600);
  CHECK(parsed->tree[1].budget[0].unit_seconds == 500.0 * 3600);
  CHECK_FALSE(parsed->tree[1].period.has_value());
}

TEST_CASE("an explicit root entry is unwrapped", "[config][quota]") {
  auto parsed = ParseQueuesDocument("tree: [{name: root, queues: [{name: a}, {name: b}]}]");
  REQUIRE(parsed.ok());
  REQUIRE(parsed->tree.size() == 2);
  CHECK(parsed->tree[1].path == "root.b");
}

TEST_CASE("a queue document of one stray comma is an error", "[config][quota]") {
  const auto parsed = ParseQueuesDocument(",");
  REQUIRE_FALSE(parsed.ok());
  CHECK(absl::StartsWith(parsed.status().message(), "line 1, column 1: "));
}

TEST_CASE("bad queue trees are rejected with the path and the field", "[config][quota]") {
  struct Case {
    std::string yaml;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"tree: [{name: p, max: {cpu: '900'}, queues: [{name: c, max: {cpu: '1000'}}]}]",
       "queues.tree[0].queues[0] (root.p.c).max.cpu: 1000 is above root.p's max 900"},
      {"tree: [{name: p, max: {cpu: lots}}]",
       "queues.tree[0] (root.p).max.cpu: \"lots\" is not a quantity"},
      {"tree: [{name: p, max: {'not a name!': '1'}}]",
       "queues.tree[0] (root.p).max: \"not a name!\" is not a resource name"},
      {"tree: [{name: p}, {name: p}]",
       "queues.tree[1] (root.p).name: duplicate queue name \"p\" under root"},
      {"tree: [{name: root, max: {cpu: '1'}}]",
       "queues.tree[0] (root).max: root takes no max or budget: it is the whole cluster"},
      {"tree: [{name: a.b}]", "queues.tree[0].name: \"a.b\" is not a queue name"},
      {"tree: [{name: a, budget: {nvidia.com/gpu: 10}}]",
       "queues.tree[0] (root.a).budget.nvidia.com/gpu: \"10\" is not an amount of resource-hours"},
      {"tree: [{name: a, budget: {period: 24h}}]",
       "queues.tree[0] (root.a).budget.period: a period needs a budget to reset"},
      {"tree: [{name: a, max: {cpu: '-1'}}]",
       "queues.tree[0] (root.a).max.cpu: must not be negative"},
      {"tree: [{name: a, colour: red}]", "queues.tree[0]: unknown field \"colour\""},
      {"tree: [{max: {cpu: '1'}}]", "queues.tree[0].name: required"},
      {"modelLabels: {nvidia.com/gpu: 'bad label!'}",
       "queues.modelLabels.nvidia.com/gpu: \"bad label!\" is not a label key"},
      {"configMap: {namespace: a, name: b}", "queues: unknown field \"configMap\""},
      {"models: {A100: []}", "queues.models.A100: lists no label value"},
      {"models: {A100: ['NVIDIA-A100-*-80GB']}",
       "queues.models.A100[0]: \"NVIDIA-A100-*-80GB\" is not a label value (a trailing * matches "
       "by prefix)"},
      {"models: {'A 100': [x]}", "queues.models: \"A 100\" is not a model name"},
      {"models: {A100: ['NVIDIA-A100-*'], A100-80: ['NVIDIA-A100-SXM4-80GB']}",
       "queues.models.A100-80: \"NVIDIA-A100-SXM4-80GB\" overlaps \"NVIDIA-A100-*\" of model "
       "A100: a node's label value must name one model"},
      {"models: [A100]", "queues.models: must be a map of model name to node label values"},
      {"tree: [{name: a, budget: {cpu: 10h, alignTo: day}}]",
       "queues.tree[0] (root.a).budget.alignTo: must be week or month, got \"day\""},
      {"tree: [{name: a, budget: {cpu: 10h, alignTo: week, period: 100h}}]",
       "queues.tree[0] (root.a).budget.period: with alignTo: week the period must be a whole "
       "number of weeks (168h, 336h, ...), got 100h"},
      {"tree: [{name: a, budget: {cpu: 10h, alignTo: month, period: 720h}}]",
       "queues.tree[0] (root.a).budget.period: with alignTo: month each calendar month is one "
       "period; leave period out"},
      {"tree: [{name: a, budget: {alignTo: month}}]",
       "queues.tree[0] (root.a).budget.alignTo: an aligned period needs a budget to reset"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.yaml);
    CHECK_THAT(Error(ParseQueuesDocument(c.yaml)), Catch::Contains(c.error));
  }
}

TEST_CASE("models map real node label values to the names limits use, in the order written",
          "[config][quota]") {
  auto parsed = ParseQueuesDocument(
      "models:\n  H100: [NVIDIA-H100-*]\n  A100: [NVIDIA-A100-SXM4-80GB, NVIDIA-A100-PCIE-40GB]\n");
  REQUIRE(parsed.ok());
  REQUIRE(parsed->models.size() == 2);
  CHECK(parsed->models[0].first == "H100");
  CHECK(parsed->models[0].second == std::vector<std::string>{"NVIDIA-H100-*"});
  CHECK(parsed->models[1].first == "A100");
  CHECK(parsed->models[1].second.size() == 2);
}

TEST_CASE("a grandchild is checked against the nearest ancestor that limits the resource",
          "[config][quota]") {
  auto parsed = ParseQueuesDocument(
      "tree: [{name: p, max: {nvidia.com/gpu: '8'}, queues: [{name: m, queues: [{name: c, max: "
      "{nvidia.com/gpu: '9'}}]}]}]");
  CHECK_THAT(Error(parsed), Catch::Contains("(root.p.m.c).max.nvidia.com/gpu: 9 is above "
                                            "root.p's max 8"));
}

TEST_CASE("the configuration file takes the queues section and its file-only fields",
          "[config][quota]") {
  auto config = ParseConfiguration(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "queues:\n  tree: [{name: a, max: {cpu: '4'}}]\n  autoCreate: false\n"
      "  configMap: {namespace: kube-system, name: kubesched-queues}\n"
      "  ledger: {namespace: kube-system, name: ledger}\n  ledgerInterval: 30s\n");
  REQUIRE(config.ok());
  CHECK(config->queues.tree.size() == 1);
  CHECK_FALSE(config->queues.auto_create);
  CHECK(config->queues.config_map.name == "kubesched-queues");
  CHECK(config->queues.ledger.namespace_name == "kube-system");
  CHECK(config->queues.ledger_interval == absl::Seconds(30));

  auto bad = ParseConfiguration(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "queues:\n  tree: [{name: a, max: {cpu: '4'}, queues: [{name: b, max: {cpu: '5'}}]}]\n");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("queues.tree[0].queues[0] (root.a.b).max.cpu: 5 is above"));
}

TEST_CASE("without a queues section every namespace gets its own unlimited queue",
          "[config][quota]") {
  const Configuration config = DefaultConfiguration();
  CHECK(config.queues.tree.empty());
  CHECK(config.queues.auto_create);
  REQUIRE(config.queues.model_labels.size() == 1);
  CHECK(config.queues.model_labels[0].second == "nvidia.com/gpu.product");
}

TEST_CASE("the shipped queue example loads", "[config][quota]") {
  auto config = LoadConfigurationFile(testing::SourcePath("config/examples/queues.yaml"));
  INFO(config.status().message());
  REQUIRE(config.ok());
  REQUIRE(config->queues.tree.size() == 2);
  CHECK(config->queues.tree[0].queues[0].path == "root.prod.search");
  CHECK(config->queues.model_labels.size() == 2);
}

TEST_CASE("budget periods may be aligned to calendar weeks and months", "[config][quota]") {
  auto parsed = ParseQueuesDocument(
      "tree:\n"
      "- {name: weekly, budget: {nvidia.com/gpu: 100h, alignTo: week}}\n"
      "- {name: fortnightly, budget: {nvidia.com/gpu: 100h, alignTo: week, period: 336h}}\n"
      "- {name: monthly, budget: {nvidia.com/gpu: 100h, alignTo: month}}\n"
      "- {name: rolling, budget: {nvidia.com/gpu: 100h, period: 24h}}\n");
  INFO(parsed.status().message());
  REQUIRE(parsed.ok());
  REQUIRE(parsed->tree.size() == 4);
  CHECK(parsed->tree[0].align_to == PeriodAlignment::kWeek);
  CHECK(parsed->tree[0].period == absl::Hours(168));  // one week unless given
  CHECK(parsed->tree[1].period == absl::Hours(336));
  CHECK(parsed->tree[2].align_to == PeriodAlignment::kMonth);
  CHECK_FALSE(parsed->tree[2].period.has_value());
  CHECK(parsed->tree[3].align_to == PeriodAlignment::kNone);
}

}  // namespace
}  // namespace kubesched::config

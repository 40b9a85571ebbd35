// NodeResourcesFit's watermark args: thresholds, and pools by node labels, each error naming the
// field path.

#include <catch2/catch.hpp>
#include <string>
#include <variant>
#include <vector>

#include "config/config.h"
#include "config/plugin_args.h"

namespace kubesched::config {
namespace {

constexpr std::string_view kFit = "NodeResourcesFit";

absl::StatusOr<WatermarkThresholds> Watermark(const std::string& watermark) {
  auto args =
      ParsePluginArgs(kFit, "scoringStrategy: {type: Watermark, watermark: " + watermark + "}");
  if (!args.ok()) return args.status();
  const auto* fit = std::get_if<NodeResourcesFitArgs>(&*args);
  REQUIRE(fit != nullptr);
  return fit->scoring_strategy.watermark;
}

std::string ErrorOf(const std::string& watermark) {
  const auto parsed = Watermark(watermark);
  return parsed.ok() ? "ok" : std::string(parsed.status().message());
}

TEST_CASE("watermark pools decode with their selectors and thresholds", "[config][watermark]") {
  const auto parsed = Watermark(
      "{high: 0.9, low: 0.85, pools: [{name: gpu, nodeSelector: {pool: gpu, "
      "nvidia.com/gpu.present: 'true'}, high: 0.6, low: 0.5}, {name: cpu, nodeSelector: "
      "{pool: cpu}}]}");
  REQUIRE(parsed.ok());
  REQUIRE(parsed->pools.size() == 2);
  const WatermarkPool& gpu = parsed->pools[0];
  CHECK(gpu.name == "gpu");
  CHECK(gpu.node_selector.size() == 2);
  CHECK(gpu.high == 0.6);
  CHECK(gpu.low == 0.5);
  // A pool without thresholds takes the watermark's.
  CHECK(parsed->pools[1].high == 0.9);
  CHECK(parsed->pools[1].low == 0.85);
  CHECK(Watermark("{high: 0.9}")->pools.empty());
}

TEST_CASE("bad watermark pools are errors naming the field", "[config][watermark]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{pools: {name: a}}", "scoringStrategy.watermark.pools: must be a list"},
      {"{pools: [{nodeSelector: {pool: a}}]}", "scoringStrategy.watermark.pools[0].name: required"},
      {"{pools: [{name: default, nodeSelector: {pool: a}}]}",
       "scoringStrategy.watermark.pools[0].name: \"default\" is the name of the nodes in no "
       "pool; choose another"},
      {"{pools: [{name: 'a b', nodeSelector: {pool: a}}]}",
       "scoringStrategy.watermark.pools[0].name: \"a b\" must be a valid label value"},
      {"{pools: [{name: a, nodeSelector: {pool: a}}, {name: a, nodeSelector: {pool: b}}]}",
       "scoringStrategy.watermark.pools[1].name: duplicate pool \"a\""},
      {"{pools: [{name: a}]}",
       "scoringStrategy.watermark.pools[0].nodeSelector: required: the labels that put a node in "
       "the pool"},
      {"{pools: [{name: a, nodeSelector: {}}]}",
       "scoringStrategy.watermark.pools[0].nodeSelector: must be a non-empty map of node label "
       "to value"},
      {"{pools: [{name: a, nodeSelector: {'bad key!': x}}]}",
       "scoringStrategy.watermark.pools[0].nodeSelector.bad key!: \"bad key!\" is not a valid "
       "label key"},
      {"{pools: [{name: a, nodeSelector: {pool: [x]}}]}",
       "scoringStrategy.watermark.pools[0].nodeSelector.pool: must be a string"},
      {"{pools: [{name: a, nodeSelector: {pool: a}, high: 1.5}]}",
       "scoringStrategy.watermark.pools[0].high: must be in (0, 1]"},
      {"{pools: [{name: a, nodeSelector: {pool: a}, high: 0.5, low: 0.6}]}",
       "scoringStrategy.watermark.pools[0].low: must be in (0, high]"},
      {"{pools: [{name: a, nodeSelector: {pool: a}, weight: 2}]}",
       "scoringStrategy.watermark.pools[0]: unknown field \"weight\""},
  };
  for (const auto& [text, want] : cases) {
    CAPTURE(text);
    const std::string error = ErrorOf(text);
    CHECK(error.find(want) != std::string::npos);
    CHECK(error.rfind("NodeResourcesFit: ", 0) == 0);
  }
}

}  // namespace
}  // namespace kubesched::config

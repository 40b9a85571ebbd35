// Selectors compiled once per expression, and their verdicts remembered per device shape.

#include "plugins/dynamic_resources/selector_cache.h"

#include <catch2/catch.hpp>
#include <thread>
#include <vector>

namespace kubesched::plugins::dynamic_resources {
namespace {

TEST_CASE("a selector is compiled once per expression, errors included", "[dra]") {
  SelectorCache cache;
  const CompiledSelector& first = cache.Get(R"(device.driver == "a")");
  CHECK(first.program.ok());
  CHECK(&cache.Get(R"(device.driver == "a")") == &first);
  const CompiledSelector& broken = cache.Get("device.driver +");
  CHECK_FALSE(broken.program.ok());
  CHECK(&cache.Get("device.driver +") == &broken);
  CHECK(cache.size() == 2);
}

TEST_CASE("verdicts are remembered per shape, never for the shape of no device", "[dra]") {
  VerdictMemo memo;
  CHECK(memo.Get(7) == VerdictMemo::kUnknown);
  memo.Set(7, VerdictMemo::kTrue);
  memo.Set(5000, VerdictMemo::kFalse);  // another chunk
  memo.Set(9, VerdictMemo::kError);
  CHECK(memo.Get(7) == VerdictMemo::kTrue);
  CHECK(memo.Get(5000) == VerdictMemo::kFalse);
  CHECK(memo.Get(9) == VerdictMemo::kError);
  CHECK(memo.Get(8) == VerdictMemo::kUnknown);
  memo.Set(api::kNoShape, VerdictMemo::kTrue);
  CHECK(memo.Get(api::kNoShape) == VerdictMemo::kUnknown);
  // Beyond the memo's capacity nothing is remembered, and nothing breaks.
  memo.Set(UINT32_MAX, VerdictMemo::kTrue);
  CHECK(memo.Get(UINT32_MAX) == VerdictMemo::kUnknown);
}

TEST_CASE("threads filling one memo at once all see every verdict", "[dra]") {
  VerdictMemo memo;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&memo] {
      for (api::DeviceShape shape = 1; shape < 20000; ++shape) {
        memo.Set(shape, shape % 2 == 0 ? VerdictMemo::kTrue : VerdictMemo::kFalse);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (api::DeviceShape shape = 1; shape < 20000; ++shape) {
    REQUIRE(memo.Get(shape) == (shape % 2 == 0 ? VerdictMemo::kTrue : VerdictMemo::kFalse));
  }
}

}  // namespace
}  // namespace kubesched::plugins::dynamic_resources

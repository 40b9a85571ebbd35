#include "scheduler/api/resource.h"

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace kubesched::api {
namespace {

int64_t Amount(const std::string& resource, const std::string& text) {
  return CanonicalAmount(InternResource(resource), *Quantity::Parse(text));
}

TEST_CASE("the four built-in resources have fixed ids", "[api]") {
  CHECK(InternResource("cpu") == kCpu);
  CHECK(InternResource("memory") == kMemory);
  CHECK(InternResource("ephemeral-storage") == kEphemeralStorage);
  CHECK(InternResource("pods") == kPods);
  CHECK(ResourceName(kEphemeralStorage) == "ephemeral-storage");
  CHECK(ResourceCount() >= 4);
}

TEST_CASE("an extended resource gets a stable id on first sight", "[api]") {
  const size_t before = ResourceCount();
  const ResourceId id = InternResource("resource-test.example.com/widget");
  CHECK(id >= 4);
  CHECK(InternResource("resource-test.example.com/widget") == id);
  CHECK(ResourceName(id) == "resource-test.example.com/widget");
  CHECK(ResourceCount() == before + 1);
}

TEST_CASE("interning the same names from many threads yields one id per name", "[api]") {
  std::vector<std::vector<ResourceId>> seen(4);
  std::vector<std::thread> threads;
  for (auto& ids : seen) {
    threads.emplace_back([&ids] {
      for (int i = 0; i < 50; ++i) {
        ids.push_back(InternResource("threads.example.com/r" + std::to_string(i)));
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& ids : seen) CHECK(ids == seen[0]);
}

TEST_CASE("only resources beyond the built-in four are scalar", "[api]") {
  CHECK_FALSE(IsScalarResource(kCpu));
  CHECK_FALSE(IsScalarResource(kPods));
  CHECK(IsScalarResource(InternResource("nvidia.com/gpu")));
  CHECK(IsScalarResource(InternResource("hugepages-2Mi")));
}

TEST_CASE("extended resource names follow upstream's classification", "[api]") {
  const std::pair<std::string, bool> cases[] = {
      {"nvidia.com/gpu", true},
      {"example.com/foo_bar", true},
      {"cpu", false},
      {"hugepages-2Mi", false},
      {"kubernetes.io/foo", false},
      {"storage.kubernetes.io/foo", false},
      {"requests.example.com/foo", false},
      {"example.com/", false},
      {"example.com/a b", false},
      {"Example.com/foo", false},
      {"a/b/c", false},
  };
  for (const auto& [name, extended] : cases) {
    INFO(name);
    CHECK(IsExtendedResourceName(name) == extended);
  }
}

TEST_CASE("hugepages resources are recognised by their prefix", "[api]") {
  CHECK(IsHugePagesResourceName("hugepages-2Mi"));
  CHECK(IsHugePagesResourceName("hugepages-1Gi"));
  CHECK_FALSE(IsHugePagesResourceName("memory"));
  CHECK_FALSE(IsHugePagesResourceName("example.com/hugepages-2Mi"));
}

TEST_CASE("canonical amounts are milli-cores for cpu and rounded-up units otherwise", "[api]") {
  CHECK(Amount("cpu", "250m") == 250);
  CHECK(Amount("cpu", "2") == 2000);
  CHECK(Amount("memory", "1.5") == 2);
  CHECK(Amount("memory", "1Gi") == 1073741824);
  CHECK(Amount("nvidia.com/gpu", "2") == 2);
  CHECK(Amount("pods", "110") == 110);
}

TEST_CASE("amounts format per resource kind", "[api]") {
  struct Case {
    std::string resource;
    int64_t amount;
    std::string text;
  };
  const Case cases[] = {
      {"cpu", 250, "250m"},
      {"cpu", 2000, "2"},
      {"cpu", 0, "0"},
      {"cpu", 1500000, "1500"},
      {"memory", 3LL << 30, "3Gi"},
      {"memory", 1536LL << 20, "1536Mi"},
      {"memory", 1000, "1000"},
      {"memory", 1000000000, "1000000000"},
      {"memory", 0, "0"},
      {"ephemeral-storage", 1024, "1Ki"},
      {"hugepages-2Mi", 2 << 20, "2Mi"},
      {"nvidia.com/gpu", 2, "2"},
      {"nvidia.com/gpu", 2048, "2048"},
      {"pods", 110, "110"},
  };
  for (const Case& c : cases) {
    INFO(c.resource << " " << c.amount);
    CHECK(FormatAmount(InternResource(c.resource), c.amount) == c.text);
  }
}

TEST_CASE("a resource list reads absent entries as zero and grows on set", "[api]") {
  ResourceList list;
  const ResourceId gpu = InternResource("nvidia.com/gpu");
  CHECK(list.Get(gpu) == 0);
  list.Set(gpu, 0);
  CHECK(list.size() == 0);
  list.Set(gpu, 4);
  CHECK(list.Get(gpu) == 4);
  CHECK(list.size() == size_t{gpu} + 1);
  CHECK(list.Get(kCpu) == 0);
}

TEST_CASE("resource lists add, subtract and take maxima per resource", "[api]") {
  const ResourceId gpu = InternResource("nvidia.com/gpu");
  ResourceList a;
  a.Set(kCpu, 1000);
  a.Set(kMemory, 100);
  ResourceList b;
  b.Set(kCpu, 500);
  b.Set(gpu, 2);

  ResourceList sum = a;
  sum.Add(b);
  CHECK(sum.Get(kCpu) == 1500);
  CHECK(sum.Get(kMemory) == 100);
  CHECK(sum.Get(gpu) == 2);

  sum.Subtract(b);
  CHECK(sum == a);

  ResourceList max = a;
  max.SetMax(b);
  CHECK(max.Get(kCpu) == 1000);
  CHECK(max.Get(gpu) == 2);
}

TEST_CASE("resource lists that differ only in trailing zeros are equal", "[api]") {
  const ResourceId gpu = InternResource("nvidia.com/gpu");
  ResourceList short_list;
  short_list.Set(kCpu, 1);
  ResourceList long_list;
  long_list.Set(kCpu, 1);
  long_list.Set(gpu, 3);
  long_list.Set(gpu, 0);
  CHECK(short_list == long_list);
  CHECK(long_list == short_list);
  long_list.Set(gpu, 1);
  CHECK_FALSE(short_list == long_list);
}

TEST_CASE("a resource list is zero when every entry is zero", "[api]") {
  ResourceList list;
  CHECK(list.IsZero());
  list.Set(kMemory, 5);
  CHECK_FALSE(list.IsZero());
  list.Add(kMemory, -5);
  CHECK(list.IsZero());
}

TEST_CASE("ForEachNonZero visits non-zero entries in id order", "[api]") {
  ResourceList list;
  list.Set(kPods, 3);
  list.Set(kCpu, 1);
  std::vector<std::pair<ResourceId, int64_t>> seen;
  list.ForEachNonZero([&](ResourceId id, int64_t amount) { seen.emplace_back(id, amount); });
  CHECK(seen == std::vector<std::pair<ResourceId, int64_t>>{{kCpu, 1}, {kPods, 3}});
}

}  // namespace
}  // namespace kubesched::api

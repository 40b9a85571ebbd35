#include "scheduler/framework/storage_state.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

namespace kubesched::framework {
namespace {

std::shared_ptr<const api::PersistentVolume> Volume(const std::string& name, int64_t bytes) {
  auto volume = std::make_shared<api::PersistentVolume>();
  volume->meta.name = name;
  volume->capacity.Set(api::InternResource("storage"), bytes);
  return volume;
}

int64_t BytesOf(const ShardedObjectMap<api::PersistentVolume>& map, const std::string& name) {
  const api::PersistentVolume* volume = map.Find(name);
  return volume == nullptr ? -1 : volume->capacity.Get(api::InternResource("storage"));
}

TEST_CASE("a published copy keeps what it saw while the writer goes on", "[framework]") {
  ShardedObjectMap<api::PersistentVolume> writer;
  for (int i = 0; i < 200; ++i) writer.Set("pv-" + std::to_string(i), Volume("x", i));
  const ShardedObjectMap<api::PersistentVolume> published = writer;
  writer.Set("pv-7", Volume("x", 1000));
  writer.Remove("pv-8");
  writer.Set("pv-new", Volume("x", 5));
  CHECK(BytesOf(published, "pv-7") == 7);
  CHECK(BytesOf(published, "pv-8") == 8);
  CHECK(BytesOf(published, "pv-new") == -1);
  CHECK(published.size() == 200);
  CHECK(BytesOf(writer, "pv-7") == 1000);
  CHECK(BytesOf(writer, "pv-8") == -1);
  CHECK(writer.size() == 200);
  int visited = 0;
  writer.ForEach([&](const std::string&, const api::PersistentVolume&) { ++visited; });
  CHECK(visited == 200);
}

TEST_CASE("removing what is not there changes nothing", "[framework]") {
  ShardedObjectMap<api::PersistentVolume> map;
  map.Remove("nothing");
  CHECK(map.size() == 0);
  map.Set("a", Volume("a", 1));
  map.Set("a", Volume("a", 2));
  CHECK(map.size() == 1);
  CHECK(BytesOf(map, "a") == 2);
}

TEST_CASE("claims are found by namespace and name", "[framework]") {
  StorageState state;
  auto claim = std::make_shared<api::PersistentVolumeClaim>();
  claim->meta.namespace_name = "ns";
  claim->meta.name = "data";
  state.claims.Set(StorageState::ClaimKey("ns", "data"), claim);
  CHECK(state.Claim("ns", "data") == claim.get());
  CHECK(state.Claim("other", "data") == nullptr);
}

}  // namespace
}  // namespace kubesched::framework

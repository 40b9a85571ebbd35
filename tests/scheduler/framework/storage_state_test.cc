#include "scheduler/framework/storage_state.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

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

std::shared_ptr<const api::VolumeAttachment> Attachment(const std::string& name,
                                                        const std::string& node) {
  auto attachment = std::make_shared<api::VolumeAttachment>();
  attachment->meta.name = name;
  attachment->node_name = node;
  return attachment;
}

std::vector<std::string> AttachedTo(const StorageState& state, const std::string& node) {
  std::vector<std::string> names;
  if (const AttachmentList* list = state.attachments_by_node.Find(node)) {
    for (const auto& attachment : *list) names.push_back(attachment->meta.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST_CASE("attachments are found by node as well as by name", "[framework]") {
  StorageState state;
  state.SetAttachment("va-1", Attachment("va-1", "n1"));
  state.SetAttachment("va-2", Attachment("va-2", "n1"));
  state.SetAttachment("va-3", Attachment("va-3", "n2"));
  const StorageState published = state;
  CHECK(AttachedTo(state, "n1") == std::vector<std::string>{"va-1", "va-2"});

  state.SetAttachment("va-2", Attachment("va-2", "n2"));  // moved: listed under its new node only
  state.RemoveAttachment("va-1");
  state.RemoveAttachment("never-there");
  CHECK(AttachedTo(state, "n1").empty());
  CHECK(state.attachments_by_node.Find("n1") == nullptr);
  CHECK(AttachedTo(state, "n2") == std::vector<std::string>{"va-2", "va-3"});
  CHECK(state.attachments.Find("va-1") == nullptr);
  CHECK(state.attachments.size() == 2);
  // A published copy keeps what it saw.
  CHECK(AttachedTo(published, "n1") == std::vector<std::string>{"va-1", "va-2"});
  CHECK(AttachedTo(published, "n2") == std::vector<std::string>{"va-3"});
}

}  // namespace
}  // namespace kubesched::framework

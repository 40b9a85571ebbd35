#include "config/yaml_reader.h"

#include <catch2/catch.hpp>
#include <string>

namespace kubesched::config::yaml {
namespace {

TEST_CASE("paths join fields with dots and indexes with brackets", "[config]") {
  CHECK(Field("", "profiles") == "profiles");
  CHECK(Field(Index("profiles", 2), "plugins") == "profiles[2].plugins");
}

TEST_CASE("EmitBlock turns flow-style JSON into block YAML that keeps quoted scalars quoted",
          "[config]") {
  // A quoted "true" must stay a string for the decoder that reads the text back.
  const absl::StatusOr<YAML::Node> node =
      ParseDocument(R"({"values": ["true", 5], "key": "zone", "empty": null})");
  REQUIRE(node.ok());
  const absl::StatusOr<std::string> text = EmitBlock(*node);
  REQUIRE(text.ok());
  CHECK(*text == "\"values\":\n  - \"true\"\n  - 5\n\"key\": \"zone\"\n\"empty\": ~");
}

TEST_CASE("a missing key reads as null, not as an exception", "[config]") {
  const absl::StatusOr<YAML::Node> node = ParseDocument("a: 1");
  REQUIRE(node.ok());
  CHECK_FALSE(HasValue(Get(*node, "b")));
  CHECK_FALSE(HasValue(Get(YAML::Node(YAML::NodeType::Sequence), "a")));
}

TEST_CASE("the reader keeps the first error only", "[config]") {
  Reader reader;
  reader.Fail("a", "first");
  reader.Fail("b", "second");
  CHECK(reader.status().message() == "a: first");
}

}  // namespace
}  // namespace kubesched::config::yaml

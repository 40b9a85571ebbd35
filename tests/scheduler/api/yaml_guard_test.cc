#include "scheduler/api/yaml_guard.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "yaml-cpp/eventhandler.h"

namespace kubesched::api {
namespace {

// Stops after a fixed number of events, so that a test of the guard ends even when the guard
// does not: a failing guard shows up as this handler's message, not as a hang.
class BoundedHandler final : public YAML::EventHandler {
 public:
  static constexpr const char* kGaveUp = "the test handler gave up";

  void OnDocumentStart(const YAML::Mark&) override { Count(); }
  void OnDocumentEnd() override { Count(); }
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { Count(); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { Count(); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Count();
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Count();
  }
  void OnSequenceEnd() override { Count(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Count();
  }
  void OnMapEnd() override { Count(); }

 private:
  void Count() {
    if (++events_ > 1'000'000) throw YamlHandlerStop{kGaveUp};
  }
  size_t events_ = 0;
};

YamlParseError ParseError(const std::string& text) {
  BoundedHandler handler;
  YamlParseError error;
  CHECK_FALSE(ParseYamlEvents(text, handler, &error));
  return error;
}

TEST_CASE("a stray comma ends the parse with an error at its position", "[yaml]") {
  // yaml-cpp 0.7 repeats an empty document forever here; a fixed yaml-cpp reports a syntax
  // error. Either way the parse ends with an error at the comma, not at the test's bound.
  for (const std::string text : {",", ",a", "a: 1\n---\n,"}) {
    INFO(text);
    const YamlParseError error = ParseError(text);
    CHECK(error.message != BoundedHandler::kGaveUp);
    CHECK_FALSE(error.mark.is_null());
  }
  CHECK(ParseError("a: 1\n---\n,").mark.line == 2);
}

TEST_CASE("loading a stray comma is an error, not an endless allocation", "[yaml]") {
  const auto documents = LoadYamlDocuments(",");
  REQUIRE_FALSE(documents.ok());
  CHECK(documents.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(documents.status().message(), "line 1, column 1: "));
}

TEST_CASE("aliases may not expand past the input's budget", "[yaml]") {
  // Nine levels of ten aliases each: a billion values from a few hundred bytes.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string prev = absl::StrCat("*a", i - 1);
    absl::StrAppend(&bomb, "a", i, ": &a", i, " [", prev);
    for (int k = 1; k < 10; ++k) absl::StrAppend(&bomb, ", ", prev);
    absl::StrAppend(&bomb, "]\n");
  }
  const YamlParseError error = ParseError(bomb);
  CHECK(error.message == "document too large (alias expansion?)");
  CHECK_FALSE(LoadYamlDocuments(bomb).ok());
}

TEST_CASE("an alias inside its own anchor is refused", "[yaml]") {
  const auto documents = LoadYamlDocuments("a: &x [1, *x]");
  REQUIRE_FALSE(documents.ok());
  CHECK(absl::StrContains(documents.status().message(), "not complete"));
}

TEST_CASE("text over the size limit is refused before parsing", "[yaml]") {
  const auto documents = LoadYamlDocuments("a: 12345", 4);
  REQUIRE_FALSE(documents.ok());
  CHECK(documents.status().message() == "document is 8 bytes, more than the limit of 4");
}

TEST_CASE("loaded nodes read as yaml-cpp's own loader gives them", "[yaml]") {
  const auto documents =
      LoadYamlDocuments("a: &v {k: \"5\"}\nb: *v\nc: [1, ~]\nc: 2\n---\n---\nplain\n");
  REQUIRE(documents.ok());
  REQUIRE(documents->size() == 3);
  const YAML::Node& first = (*documents)[0];
  REQUIRE(first.IsMap());
  CHECK(first.size() == 4);  // the repeated key stays for the strict decoders to report
  const YAML::Node quoted = first["a"]["k"];
  CHECK(quoted.Scalar() == "5");
  CHECK(quoted.Tag() == "!");
  CHECK(first["b"]["k"].Scalar() == "5");
  CHECK(first["c"].IsSequence());
  CHECK(first["c"][1].IsNull());
  CHECK((*documents)[1].IsNull());
  CHECK((*documents)[2].Scalar() == "plain");
  CHECK((*documents)[2].Tag() == "?");
}

TEST_CASE("a deep document with many values loads without copying them per level", "[yaml]") {
  // 400 levels (yaml-cpp allows 500) over 200000 values: copying each subtree into its parent's
  // memory as it closes takes 8e7 steps, tens of seconds; placing them in one arena, 2e5.
  std::string values;
  for (int i = 0; i < 200000; ++i) values += "1,";
  const auto documents = LoadYamlDocuments(std::string(400, '[') + values + std::string(400, ']'));
  INFO(documents.status().message());
  REQUIRE(documents.ok());
  // YAML::Node's assignment writes through, so the walk keeps each level rather than reassigning.
  std::vector<YAML::Node> levels = {(*documents)[0]};
  for (int i = 1; i < 400; ++i) levels.push_back(levels.back()[0]);
  CHECK(levels.back().size() == 200000);
}

TEST_CASE("nesting deeper than yaml-cpp allows is an error that says so", "[yaml]") {
  const auto documents = LoadYamlDocuments(std::string(600, '[') + std::string(600, ']'));
  REQUIRE_FALSE(documents.ok());
  CHECK(absl::EndsWith(documents.status().message(), ": nesting too deep"));
}

TEST_CASE("empty text has no documents", "[yaml]") {
  const auto documents = LoadYamlDocuments("");
  REQUIRE(documents.ok());
  CHECK(documents->empty());
}

TEST_CASE("a syntax error names its line and column", "[yaml]") {
  const auto documents = LoadYamlDocuments("a: [1, 2\nb: 3");
  REQUIRE_FALSE(documents.ok());
  CHECK(absl::StartsWith(documents.status().message(), "line "));
}

}  // namespace
}  // namespace kubesched::api

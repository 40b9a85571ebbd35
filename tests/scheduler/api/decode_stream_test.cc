#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/api/decode.h"
#include "tests/testing/temp_file.h"

namespace kubesched::api {
namespace {

// What a decode gives, as text: each object described with its node or pod fields that the
// stream could get wrong, then each problem; or the error.
template <typename Decoded>
std::string Outcome(const absl::StatusOr<Decoded>& decoded) {
  if (!decoded.ok()) return absl::StrCat("error: ", decoded.status().ToString());
  std::string text;
  for (const Object& object : decoded->objects) {
    absl::StrAppend(&text, DescribeObject(object));
    if (const auto* pod = std::get_if<Pod>(&object)) {
      absl::StrAppend(&text, " containers=", pod->spec.containers.size(),
                      " tolerations=", pod->spec.tolerations.size(), " node=", pod->spec.node_name);
      for (const Container& c : pod->spec.containers) absl::StrAppend(&text, " ", c.image);
    }
    absl::StrAppend(&text, "\n");
  }
  for (const DecodeProblem& problem : decoded->problems) {
    absl::StrAppend(&text, "problem: ", problem.ToString(), "\n");
  }
  return text;
}

// A pod of the same workload whatever its name: one container, one toleration, bound.
std::string PodJson(const std::string& name) {
  return absl::StrCat(R"({"kind":"Pod","metadata":{"name":")", name,
                      R"(","namespace":"ns"},"spec":{)",
                      R"("nodeName":"n1","containers":[{"name":"a","image":"img:1",)",
                      R"("resources":{"requests":{"cpu":"1"}}}],)",
                      R"("tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute"}]}})");
}
constexpr char kNode[] = R"({"kind":"Node","metadata":{"name":"n1"}})";

TEST_CASE("a file read item by item decodes as the whole file does", "[api]") {
  const std::vector<std::string> inputs = {
      // kubectl's order: items before kind, metadata after.
      absl::StrCat(R"({"apiVersion":"v1","items":[)", kNode, ",", PodJson("p"),
                   R"(],"kind":"List","metadata":{"resourceVersion":""}})"),
      absl::StrCat(R"({"kind":"NodeList","items":[)", kNode, "]}"),
      absl::StrCat("[", PodJson("p"), ",", kNode, "]\n\n"),
      // Bad items are problems with their number; nested lists are walked.
      absl::StrCat(R"({"kind":"List","items":[3,{"kind":"Gadget","metadata":{"name":"g"}},)",
                   R"({"kind":"List","items":[)", PodJson("p"), R"(]},{"metadata":{}}]})"),
      R"({"kind":"List","items":[]})",
      // Only the first member of a name counts, as a parsed document's look-up finds it.
      absl::StrCat(R"({"items":[)", kNode, R"(],"items":[)", PodJson("p"), R"(],"kind":"List"})"),
      // Not a list this reader takes: the whole file decides.
      absl::StrCat(R"({"kind":"Pod","items":[)", kNode, R"(],"metadata":{"name":"x"}})"),
      absl::StrCat(R"({"kind":7,"items":[)", kNode, "]}"),
      R"({"kind":"List","items":{"a":1}})",
      R"({"kind":"List","items":null})",
      PodJson("p"),
      absl::StrCat("kind: List\nitems:\n- ", kNode, "\n"),
      // Errors: a syntax error, a NUL byte after the document.
      absl::StrCat(R"({"kind":"List","items":[)", kNode, ",\n  {]}"),
      absl::StrCat(R"({"kind":"List","items":[)", kNode, "]}", std::string(1, '\0')),
  };
  for (const std::string& input : inputs) {
    const testing::TempFile file(input, "input.json");
    INFO(input);
    CHECK(Outcome(DecodeFileQueue(file.path())) == Outcome(DecodeFile(file.path())));
  }
}

TEST_CASE("a file read item by item shares the lists of alike pods", "[api]") {
  const testing::TempFile file(
      absl::StrCat(R"({"kind":"List","items":[)", PodJson("p"), ",", PodJson("q"), "]}"),
      "pods.json");
  auto decoded = DecodeFileQueue(file.path());
  REQUIRE(decoded.ok());
  REQUIRE(decoded->objects.size() == 2);
  const Pod& p = std::get<Pod>(decoded->objects[0]);
  const Pod& q = std::get<Pod>(decoded->objects[1]);
  CHECK(q.meta.name == "q");
  CHECK(p.spec.containers.SharesWith(q.spec.containers));
  CHECK(p.spec.tolerations.SharesWith(q.spec.tolerations));
}

TEST_CASE("a missing file read item by item is the whole file's error", "[api]") {
  const std::string path = "/nonexistent/kubesched/dump.json";
  CHECK(Outcome(DecodeFileQueue(path)) == Outcome(DecodeFile(path)));
}

}  // namespace
}  // namespace kubesched::api

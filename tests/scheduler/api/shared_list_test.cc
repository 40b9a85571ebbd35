#include "scheduler/api/shared_list.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "scheduler/api/objects.h"

namespace kubesched::api {
namespace {

Container Named(const std::string& name, const std::string& image) {
  Container container;
  container.name = name;
  container.image = image;
  return container;
}

TEST_CASE("equal lists interned share one vector and different ones do not", "[api]") {
  const SharedList<Container> a = InternList<Container>({Named("app", "img:1")});
  const SharedList<Container> b = InternList<Container>({Named("app", "img:1")});
  const SharedList<Container> c = InternList<Container>({Named("app", "img:2")});
  CHECK(a.SharesWith(b));
  CHECK_FALSE(a.SharesWith(c));
  CHECK(c[0].image == "img:2");
  CHECK(InternList<Container>({}).empty());
}

TEST_CASE("a change through a copy of a shared list leaves the others as they were", "[api]") {
  const SharedList<Toleration> interned =
      InternList<Toleration>({Toleration{"k", {}, "v", {}, {}}});
  SharedList<Toleration> copy = interned;
  CHECK(copy.SharesWith(interned));
  copy[0].value = "w";
  copy.push_back(Toleration{"other", {}, "", {}, {}});
  CHECK_FALSE(copy.SharesWith(interned));
  CHECK(interned.size() == 1);
  CHECK(interned[0].value == "v");
  CHECK(copy.size() == 2);
  CHECK(copy[0].value == "w");
  // A list interned later with the old content still finds the untouched vector.
  CHECK(InternList<Toleration>({Toleration{"k", {}, "v", {}, {}}}).SharesWith(interned));
}

TEST_CASE("a list changed in place keeps references into it while it is its own", "[api]") {
  SharedList<Container> list;
  list.push_back(Named("a", "x"));
  list.push_back(Named("b", "y"));
  Container& first = list[0];
  Container& second = list[1];
  first.image = second.image;
  CHECK(list[0].image == "y");
  CHECK(list.get().size() == 2);
}

TEST_CASE("a shared optional is copied before it is changed through a copy", "[api]") {
  SharedOptional<Affinity> original;
  CHECK_FALSE(original.has_value());
  original.emplace().node_affinity.emplace().preferred.push_back({});
  SharedOptional<Affinity> copy = original;
  copy->node_affinity->preferred.clear();
  CHECK(original->node_affinity->preferred.size() == 1);
  CHECK(copy->node_affinity->preferred.empty());
  copy.reset();
  CHECK_FALSE(copy.has_value());
  CHECK(original.has_value());
}

}  // namespace
}  // namespace kubesched::api

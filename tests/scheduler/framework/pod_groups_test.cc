// Interned ids for what pods share: equal content gets one id, any difference another.

#include "scheduler/framework/pod_groups.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "scheduler/framework/pod_info.h"

namespace kubesched::framework {
namespace {

api::LabelSet Labels(std::initializer_list<std::pair<const char*, const char*>> pairs) {
  std::vector<std::pair<api::Symbol, api::Symbol>> symbols;
  for (const auto& [key, value] : pairs) symbols.emplace_back(api::Intern(key), api::Intern(value));
  return api::LabelSet::FromPairs(std::move(symbols));
}

TEST_CASE("label groups: same namespace, labels and terminating state share an id", "[core]") {
  const api::Symbol shop = api::Intern("shop");
  const api::Symbol prod = api::Intern("prod");
  const LabelGroupId web =
      InternLabelGroup(shop, Labels({{"app", "web"}, {"tier", "front"}}), false);
  // Order of the pairs does not matter: label sets are sorted.
  CHECK(InternLabelGroup(shop, Labels({{"tier", "front"}, {"app", "web"}}), false) == web);
  CHECK(InternLabelGroup(prod, Labels({{"app", "web"}, {"tier", "front"}}), false) != web);
  CHECK(InternLabelGroup(shop, Labels({{"app", "web"}, {"tier", "front"}}), true) != web);
  CHECK(InternLabelGroup(shop, Labels({{"app", "web"}}), false) != web);
  CHECK(InternLabelGroup(shop, Labels({{"app", "web"}, {"tier", "back"}}), false) != web);
  // Without labels, the terminating state still tells the groups apart.
  CHECK(InternLabelGroup(shop, Labels({}), false) != InternLabelGroup(shop, Labels({}), true));
}

AffinityTerm Term(const char* topology, std::vector<const char*> values) {
  AffinityTerm term;
  api::Requirement requirement;
  requirement.key = api::Intern("app");
  for (const char* value : values) requirement.values.push_back(api::Intern(value));
  std::sort(requirement.values.begin(), requirement.values.end());
  term.selector = api::LabelSelector{{requirement}};
  term.topology_key = api::Intern(topology);
  term.namespaces.insert(api::Intern("shop"));
  return term;
}

TEST_CASE("term ids: equal content shares an id, selector, key or namespaces tell apart",
          "[core]") {
  const TermId base = InternTerm(Term("kubernetes.io/hostname", {"web"}));
  CHECK(InternTerm(Term("kubernetes.io/hostname", {"web"})) == base);
  CHECK(InternTerm(Term("topology.kubernetes.io/zone", {"web"})) != base);
  CHECK(InternTerm(Term("kubernetes.io/hostname", {"web", "db"})) != base);

  AffinityTerm other_namespace = Term("kubernetes.io/hostname", {"web"});
  other_namespace.namespaces.insert(api::Intern("prod"));
  CHECK(InternTerm(other_namespace) != base);

  AffinityTerm no_selector = Term("kubernetes.io/hostname", {"web"});
  no_selector.selector.reset();
  CHECK(InternTerm(no_selector) != base);

  AffinityTerm all_namespaces = Term("kubernetes.io/hostname", {"web"});
  all_namespaces.namespace_selector = api::LabelSelector{};
  CHECK(InternTerm(all_namespaces) != base);
}

}  // namespace
}  // namespace kubesched::framework

// MakePodInfo: effective requests (upstream PodRequests, with and without non-zero defaults) and
// the compiled pod (anti-)affinity terms.

#include "scheduler/framework/pod_info.h"

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using framework::AffinityTerm;
using framework::MakePodInfo;
using testing::Labels;
using testing::PodBuilder;
using testing::Resources;

constexpr int64_t kMi = 1024 * 1024;
constexpr int64_t kGi = 1024 * kMi;

api::Pod WithOverhead(api::Pod pod, std::vector<std::pair<std::string, std::string>> overhead) {
  pod.spec.overhead = Resources(overhead);
  return pod;
}

framework::PodInfoPtr Info(api::Pod pod) {
  return MakePodInfo(std::make_shared<const api::Pod>(std::move(pod)), 0);
}

struct RequestsCase {
  std::string name;
  api::Pod pod;
  int64_t cpu_milli;
  int64_t memory;
};

TEST_CASE("pod requests follow upstream PodRequests", "[core]") {
  const std::vector<RequestsCase> cases = {
      {"containers are summed",
       PodBuilder("p")
           .Container({{"cpu", "100m"}, {"memory", "1Gi"}})
           .Container({{"cpu", "200m"}, {"memory", "1Gi"}})
           .Build(),
       300, 2 * kGi},
      {"a larger init container wins",
       PodBuilder("p").Container({{"cpu", "100m"}}).InitContainer({{"cpu", "500m"}}).Build(), 500,
       0},
      {"a smaller init container changes nothing",
       PodBuilder("p").Container({{"cpu", "1"}}).InitContainer({{"cpu", "500m"}}).Build(), 1000, 0},
      {"init containers take the maximum, not the sum",
       PodBuilder("p")
           .Container({{"cpu", "100m"}})
           .InitContainer({{"cpu", "400m"}})
           .InitContainer({{"cpu", "300m"}})
           .Build(),
       400, 0},
      {"a sidecar runs next to the containers",
       PodBuilder("p").Container({{"cpu", "100m"}}).InitContainer({{"cpu", "50m"}}, true).Build(),
       150, 0},
      {"an init container runs next to the sidecars declared before it",
       PodBuilder("p")
           .Container({{"cpu", "100m"}})
           .InitContainer({{"cpu", "200m"}}, true)
           .InitContainer({{"cpu", "1"}})
           .Build(),
       1200, 0},
      {"a sidecar declared after an init container does not add to it",
       PodBuilder("p")
           .Container({{"cpu", "100m"}})
           .InitContainer({{"cpu", "1"}})
           .InitContainer({{"cpu", "200m"}}, true)
           .Build(),
       1000, 0},
      {"overhead is added on top",
       WithOverhead(PodBuilder("p").Container({{"cpu", "100m"}, {"memory", "1Gi"}}).Build(),
                    {{"cpu", "50m"}, {"memory", "100Mi"}}),
       150, kGi + 100 * kMi},
      {"a container listing nothing requests nothing", PodBuilder("p").Container({}).Build(), 0, 0},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const auto info = Info(c.pod);
    CHECK(info->requests.Get(api::kCpu) == c.cpu_milli);
    CHECK(info->requests.Get(api::kMemory) == c.memory);
  }
}

TEST_CASE("extended resources are counted like cpu", "[core]") {
  const auto info = Info(PodBuilder("p")
                             .Container({{"nvidia.com/gpu", "1"}})
                             .InitContainer({{"nvidia.com/gpu", "2"}})
                             .Build());
  CHECK(info->requests.Get(api::InternResource("nvidia.com/gpu")) == 2);
}

TEST_CASE("non-zero requests apply upstream's defaults to unlisted cpu and memory", "[core]") {
  const std::vector<RequestsCase> cases = {
      {"a container listing nothing gets 100m and 200Mi", PodBuilder("p").Container({}).Build(),
       100, 200 * kMi},
      {"an explicit zero stays zero", PodBuilder("p").Container({{"cpu", "0"}}).Build(), 0,
       200 * kMi},
      {"defaults apply per container",
       PodBuilder("p").Container({}).Container({{"memory", "1Gi"}}).Build(), 200, 200 * kMi + kGi},
      {"an init container without requests counts the defaults",
       PodBuilder("p").Container({{"cpu", "50m"}, {"memory", "100Mi"}}).InitContainer({}).Build(),
       100, 200 * kMi},
      {"listed values are kept",
       PodBuilder("p").Container({{"cpu", "2"}, {"memory", "1Gi"}}).Build(), 2000, kGi},
      {"a pod without containers gets no defaults", PodBuilder("p").Build(), 0, 0},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const auto info = Info(c.pod);
    CHECK(info->NonZeroRequest(api::kCpu) == c.cpu_milli);
    CHECK(info->NonZeroRequest(api::kMemory) == c.memory);
  }
}

TEST_CASE("non-zero defaults do not leak into real requests", "[core]") {
  const auto info = Info(PodBuilder("p").Container({}).Build());
  CHECK(info->requests.IsZero());
}

TEST_CASE("non-zero requests leave other resources unchanged", "[core]") {
  const auto info = Info(PodBuilder("p").Container({{"nvidia.com/gpu", "1"}}).Build());
  CHECK(info->NonZeroRequest(api::InternResource("nvidia.com/gpu")) == 1);
}

TEST_CASE("the pod info is keyed by namespace and name and keeps its priority", "[core]") {
  const auto info = MakePodInfo(PodBuilder("web", "prod").Ptr(), 7);
  CHECK(info->key == "prod/web");
  CHECK(info->priority == 7);
  CHECK(info->get().meta.name == "web");
}

// --- Affinity -------------------------------------------------------------------------------

api::LabelSelector MatchLabel(const std::string& key, const std::string& value) {
  api::Requirement requirement;
  requirement.key = api::Intern(key);
  requirement.op = api::SelectorOperator::kIn;
  requirement.values = {api::Intern(value)};
  return api::LabelSelector{{requirement}};
}

api::PodAffinityTerm Term(std::optional<api::LabelSelector> selector) {
  api::PodAffinityTerm term;
  term.label_selector = std::move(selector);
  term.topology_key = api::Intern("zone");
  return term;
}

// Compiles `term` as the required affinity of a pod in namespace `owner_ns`.
AffinityTerm Compile(api::PodAffinityTerm term, const std::string& owner_ns = "default") {
  api::Affinity affinity;
  affinity.pod_affinity.emplace().required.push_back(std::move(term));
  const auto info = Info(PodBuilder("owner", owner_ns).Affinity(affinity).Build());
  REQUIRE(info->required_affinity().size() == 1);
  return info->required_affinity().front();
}

TEST_CASE("a term without namespaces or namespace selector means the owner's namespace", "[core]") {
  const AffinityTerm term = Compile(Term(MatchLabel("app", "db")), "team-a");
  CHECK(term.namespaces.size() == 1);
  CHECK(term.namespaces.contains(api::Intern("team-a")));
  CHECK(term.topology_key == api::Intern("zone"));
}

TEST_CASE("a term with a namespace selector does not default to the owner's namespace", "[core]") {
  api::PodAffinityTerm raw = Term(MatchLabel("app", "db"));
  raw.namespace_selector = MatchLabel("team", "a");
  const AffinityTerm term = Compile(raw, "team-a");
  CHECK(term.namespaces.empty());
  CHECK(term.namespace_selector.has_value());
}

TEST_CASE("a term's listed namespaces are kept as given", "[core]") {
  api::PodAffinityTerm raw = Term(MatchLabel("app", "db"));
  raw.namespaces = {api::Intern("x"), api::Intern("y")};
  const AffinityTerm term = Compile(raw, "team-a");
  CHECK(term.namespaces.size() == 2);
  CHECK_FALSE(term.namespaces.contains(api::Intern("team-a")));
}

TEST_CASE("anti-affinity and preferred terms are compiled into their own lists", "[core]") {
  api::Affinity affinity;
  affinity.pod_affinity.emplace().preferred.push_back({5, Term(MatchLabel("app", "db"))});
  affinity.pod_anti_affinity.emplace().required.push_back(Term(MatchLabel("app", "web")));
  affinity.pod_anti_affinity->preferred.push_back({9, Term(MatchLabel("app", "cache"))});
  const auto info = Info(PodBuilder("p").Affinity(affinity).Build());
  CHECK(info->required_affinity().empty());
  REQUIRE(info->preferred_affinity().size() == 1);
  CHECK(info->preferred_affinity()[0].weight == 5);
  CHECK(info->required_anti_affinity().size() == 1);
  REQUIRE(info->preferred_anti_affinity().size() == 1);
  CHECK(info->preferred_anti_affinity()[0].weight == 9);
  CHECK(info->HasAffinity());
  CHECK(info->HasRequiredAntiAffinity());
}

TEST_CASE("a pod without pod affinity has no terms", "[core]") {
  const auto info = Info(PodBuilder("p").Build());
  CHECK_FALSE(info->HasAffinity());
  CHECK_FALSE(info->HasRequiredAntiAffinity());
}

struct MatchCase {
  std::string name;
  std::function<api::PodAffinityTerm()> term;  // compiled for an owner in "default"
  std::string pod_namespace;
  api::LabelSet pod_labels;
  std::optional<api::LabelSet> namespace_labels;
  bool matches;
};

TEST_CASE("an affinity term matches by namespace and then by label selector", "[core]") {
  const auto db = Labels({{"app", "db"}});
  const auto with_ns_selector = [](api::LabelSelector selector) {
    return [selector] {
      api::PodAffinityTerm term = Term(MatchLabel("app", "db"));
      term.namespace_selector = selector;
      return term;
    };
  };
  const std::vector<MatchCase> cases = {
      {"same namespace, matching labels", [] { return Term(MatchLabel("app", "db")); }, "default",
       db, std::nullopt, true},
      {"other namespace", [] { return Term(MatchLabel("app", "db")); }, "other", db, std::nullopt,
       false},
      {"labels do not match", [] { return Term(MatchLabel("app", "db")); }, "default",
       Labels({{"app", "web"}}), std::nullopt, false},
      {"an absent label selector matches no pod", [] { return Term(std::nullopt); }, "default", db,
       std::nullopt, false},
      {"an empty label selector matches every pod", [] { return Term(api::LabelSelector{}); },
       "default", Labels({{"any", "thing"}}), std::nullopt, true},
      {"an empty namespace selector matches every namespace, even unknown ones",
       with_ns_selector(api::LabelSelector{}), "other", db, std::nullopt, true},
      {"a namespace selector matches the namespace's labels",
       with_ns_selector(MatchLabel("team", "a")), "other", db, Labels({{"team", "a"}}), true},
      {"a namespace selector rejects other labels", with_ns_selector(MatchLabel("team", "a")),
       "other", db, Labels({{"team", "b"}}), false},
      {"a namespace selector rejects a namespace with unknown labels",
       with_ns_selector(MatchLabel("team", "a")), "other", db, std::nullopt, false},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const AffinityTerm term = Compile(c.term());
    api::Pod pod = PodBuilder("target", c.pod_namespace).Build();
    pod.meta.labels = c.pod_labels;
    const api::LabelSet* ns_labels = c.namespace_labels ? &*c.namespace_labels : nullptr;
    CHECK(term.Matches(pod, ns_labels) == c.matches);
  }
}

}  // namespace
}  // namespace kubesched

#include "scheduler/instrumentation/metrics_observer.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "scheduler/api/objects.h"
#include "scheduler/framework/gang_membership.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/metrics/metrics_server.h"
#include "tests/testing/builders.h"
#include "tests/testing/scrape.h"

namespace kubesched::metrics {
namespace {

using testing::PodBuilder;

TEST_CASE("metrics: the profile label is a configured policy the pod names, else its profile",
          "[metrics]") {
  SchedulerMetrics metrics;
  metrics.Profile("gpu-scheduler");
  metrics.Profile("stack");  // a policy whose framework was built
  api::Pod pod;
  pod.meta.name = "p";
  pod.meta.namespace_name = "default";
  pod.spec.scheduler_name = "gpu-scheduler";
  const auto label = [&metrics](const api::Pod& p) -> std::string {
    const ProfileMetrics* found =
        ProfileOf(*framework::MakePodInfo(std::make_shared<const api::Pod>(p), 0), metrics);
    return found == nullptr ? "<none>" : found->label();
  };
  CHECK(label(pod) == "gpu-scheduler");
  pod.meta.annotations["kubesched.io/policy"] = "stack";
  CHECK(label(pod) == "stack");
  // A policy that does not exist: the pod's profile, and no series for the name.
  pod.meta.annotations["kubesched.io/policy"] = "no-such-policy-4711";
  CHECK(label(pod) == "gpu-scheduler");
  CHECK(metrics.FindProfile("no-such-policy-4711") == nullptr);
  // A schedulerName no profile has (never scheduled, so never recorded): nothing.
  pod.spec.scheduler_name = "someone-else";
  CHECK(label(pod) == "<none>");
}

// An observer on a fake clock, fed as the scheduler feeds it.
struct Fixture {
  util::FakeClock clock{absl::FromUnixSeconds(1'700'000'000)};
  SchedulerMetrics metrics;
  MetricsObserver observer{&metrics, &clock};
  Fixture() { metrics.Profile("kubesched"); }  // the profile of the builder's pods

  // A member of the implicit group `group` (annotations) of `min_member`.
  framework::PodInfoPtr Member(const std::string& name, const std::string& group, int min_member) {
    return framework::MakePodInfo(
        PodBuilder(name)
            .Annotation(framework::kPodGroupAnnotation, group)
            .Annotation(framework::kPodGroupMinMemberAnnotation, std::to_string(min_member))
            .Ptr(),
        0);
  }
  // The pod's node was chosen; its first attempt began at `first_attempt`.
  void Select(const framework::PodInfoPtr& pod, absl::Time first_attempt) {
    queue::QueuedPodInfo queued;
    queued.pod_info = pod;
    queued.initial_attempt_timestamp = first_attempt;
    queued.attempts = 1;
    observer.OnNodeSelected(queued, "n1", 0.001);
  }
  // The pod was bound, as a member of a group of `min_member`.
  void Bind(const framework::PodInfoPtr& pod, int min_member) {
    observer.OnBound(*pod, "n1", 1);
    observer.OnGangMemberBound(*pod, min_member);
  }
  // The group histogram's observation count and sum.
  std::pair<double, double> Groups() {
    auto scrape = testing::Scrape::Parse(ScrapeText(metrics.collectables()));
    REQUIRE(scrape.ok());
    return {scrape->Value(std::string(kPodGroupSchedulingDuration) + "_count"),
            scrape->Value(std::string(kPodGroupSchedulingDuration) + "_sum")};
  }
};

TEST_CASE("metrics: a group is observed once, at its minMember-th bind, from its first attempt",
          "[metrics][gang]") {
  Fixture f;
  const absl::Time start = f.clock.Now();
  const auto a = f.Member("a", "job", 2);
  const auto b = f.Member("b", "job", 2);
  const auto extra = f.Member("c", "job", 2);
  f.Select(a, start + absl::Seconds(5));
  f.Select(b, start);  // b was tried first, and waited longest
  f.clock.Advance(absl::Seconds(30));
  f.Bind(a, 2);
  CHECK(f.Groups().first == 0);
  f.Bind(b, 2);
  CHECK(f.Groups() == std::pair<double, double>{1, 30});
  // A member beyond minMember is placed as an ordinary pod: the group is not observed again.
  f.Select(extra, f.clock.Now());
  f.Bind(extra, 2);
  CHECK(f.Groups().first == 1);
}

TEST_CASE("metrics: a group given up is not observed and its timing is forgotten",
          "[metrics][gang]") {
  Fixture f;
  const auto a = f.Member("a", "big", 3);
  const auto b = f.Member("b", "big", 3);
  f.Select(a, f.clock.Now());
  f.Select(b, f.clock.Now());
  CHECK(f.observer.TrackedGroups() == 1);
  f.observer.OnGangReleased("default/big");
  CHECK(f.observer.TrackedGroups() == 0);
  f.observer.OnGangReleased("default/never-seen");
  // A bind after the release (the PodGroup went meanwhile) starts nothing.
  f.Bind(a, 1);
  CHECK(f.Groups().first == 0);
  CHECK(f.observer.TrackedGroups() == 0);
}

TEST_CASE("metrics: a placed group's timing is kept until it is released, then goes",
          "[metrics][gang]") {
  Fixture f;
  const auto solo = f.Member("solo", "one", 1);
  f.Select(solo, f.clock.Now());
  f.Bind(solo, 1);
  CHECK(f.Groups().first == 1);
  CHECK(f.observer.TrackedGroups() == 1);    // a later member must not count as a new group
  f.observer.OnGangReleased("default/one");  // its last member went
  CHECK(f.observer.TrackedGroups() == 0);
  // A pod outside any group leaves no trace.
  const auto plain = framework::MakePodInfo(PodBuilder("plain").Ptr(), 0);
  f.Select(plain, f.clock.Now());
  f.observer.OnBound(*plain, "n1", 1);
  CHECK(f.observer.TrackedGroups() == 0);
}

}  // namespace
}  // namespace kubesched::metrics

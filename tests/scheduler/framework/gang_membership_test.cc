#include "scheduler/framework/gang_membership.h"

#include <catch2/catch.hpp>

#include "scheduler/framework/pod_info.h"
#include "tests/testing/builders.h"

namespace kubesched::framework {
namespace {

using testing::PodBuilder;

TEST_CASE("a pod outside any group has no membership", "[framework][gang]") {
  const GangMembership gang = GangMembershipOf(PodBuilder("web", "prod").Build());
  CHECK_FALSE(gang.InGroup());
  CHECK(gang.error.empty());
}

TEST_CASE("the scheduler-plugins label names a PodGroup object in the pod's namespace",
          "[framework][gang]") {
  const auto info =
      MakePodInfo(PodBuilder("worker-0", "ml").Label(kPodGroupLabel, "train").Ptr(), 0);
  CHECK(info->gang.key == "ml/train");
  CHECK(info->gang.name == "train");
  CHECK_FALSE(info->gang.implicit);
  CHECK(info->gang.error.empty());
}

TEST_CASE("annotations form an implicit group with its own min member", "[framework][gang]") {
  const GangMembership gang = GangMembershipOf(PodBuilder("w", "ml")
                                                   .Annotation(kPodGroupAnnotation, "batch")
                                                   .Annotation(kPodGroupMinMemberAnnotation, "4")
                                                   .Build());
  CHECK(gang.key == "ml/batch");
  CHECK(gang.implicit);
  CHECK(gang.min_member == 4);
  CHECK(gang.error.empty());
}

TEST_CASE("bad membership is an error the pod waits with", "[framework][gang]") {
  SECTION("label and annotation name different groups") {
    const GangMembership gang = GangMembershipOf(PodBuilder("w", "ml")
                                                     .Label(kPodGroupLabel, "a")
                                                     .Annotation(kPodGroupAnnotation, "b")
                                                     .Build());
    CHECK(gang.InGroup());
    CHECK(gang.error ==
          "the pod names two pod groups: label scheduling.x-k8s.io/pod-group=a and annotation "
          "kubesched.io/pod-group=b");
  }
  SECTION("label and annotation agree: the PodGroup object rules") {
    const GangMembership gang = GangMembershipOf(PodBuilder("w", "ml")
                                                     .Label(kPodGroupLabel, "a")
                                                     .Annotation(kPodGroupAnnotation, "a")
                                                     .Build());
    CHECK(gang.error.empty());
    CHECK_FALSE(gang.implicit);
  }
  SECTION("no min member") {
    const GangMembership gang =
        GangMembershipOf(PodBuilder("w", "ml").Annotation(kPodGroupAnnotation, "a").Build());
    CHECK(gang.error ==
          "annotation kubesched.io/pod-group needs kubesched.io/pod-group-min-member (the number "
          "of pods to place together)");
  }
  SECTION("min member not a positive whole number") {
    for (const char* bad : {"0", "-2", "two", "1.5", ""}) {
      INFO(bad);
      const GangMembership gang =
          GangMembershipOf(PodBuilder("w", "ml")
                               .Annotation(kPodGroupAnnotation, "a")
                               .Annotation(kPodGroupMinMemberAnnotation, bad)
                               .Build());
      CHECK(gang.error == std::string("annotation kubesched.io/pod-group-min-member: \"") + bad +
                              "\" is not a whole number of at least 1");
    }
  }
  SECTION("an empty group name") {
    const GangMembership gang =
        GangMembershipOf(PodBuilder("w", "ml").Label(kPodGroupLabel, "").Build());
    CHECK(gang.error == "the pod group name (scheduling.x-k8s.io/pod-group) is empty");
  }
}

}  // namespace
}  // namespace kubesched::framework

// The PodGroup informer: scheduler-plugins' CRD is watched like any kind when the cluster has it,
// and a cluster without it (LIST answers 404) neither fails nor holds back the informers' sync.

#include <catch2/catch.hpp>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "scheduler/client/informers.h"
#include "scheduler/util/log.h"
#include "tests/scheduler/client/scripted_api_server.h"
#include "tests/testing/wait.h"

namespace kubesched::client {
namespace {

using test::ListBody;
using test::Ok;
using test::ScriptedApiServer;
using test::StatusJson;
using test::WatchScript;
using testing::WaitUntil;

constexpr char kPodGroups[] = "/apis/scheduling.x-k8s.io/v1alpha1/podgroups";

std::string PodGroupJson(const std::string& name, const std::string& resource_version) {
  return absl::StrCat(R"({"kind":"PodGroup","apiVersion":"scheduling.x-k8s.io/v1alpha1",)",
                      R"("metadata":{"name":")", name, R"(","namespace":"ml","resourceVersion":")",
                      resource_version, R"("},"spec":{"minMember":3}})");
}

HttpResponse NotFound() {
  return HttpResponse{
      404, StatusJson(404, "NotFound", "the server could not find the requested resource")};
}

// Records the PodGroup events it receives.
class PodGroupRecorder : public ClusterEventHandler {
 public:
  void OnPod(const Event<api::Pod>&) override {}
  void OnNode(const Event<api::Node>&) override {}
  void OnNamespace(const Event<api::Namespace>&) override {}
  void OnPriorityClass(const Event<api::PriorityClass>&) override {}
  void OnPodGroup(const Event<api::PodGroup>& event) override {
    std::lock_guard<std::mutex> lock(mu_);
    const char* type = event.type == EventType::kAdded      ? "ADDED"
                       : event.type == EventType::kModified ? "MODIFIED"
                                                            : "DELETED";
    events_.push_back(
        absl::StrCat(type, " ", event.object->Key(), " minMember=", event.object->min_member));
  }
  std::vector<std::string> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> events_;
};

// Collects the warnings logged while it lives.
class WarningCollector {
 public:
  WarningCollector() {
    util::SetLogSinkForTesting([this](std::string_view level, std::string_view message) {
      if (level != "W") return;
      std::lock_guard<std::mutex> lock(mu_);
      warnings_.emplace_back(message);
    });
  }
  ~WarningCollector() { util::SetLogSinkForTesting(nullptr); }
  int CountContaining(std::string_view text) const {
    std::lock_guard<std::mutex> lock(mu_);
    int count = 0;
    for (const std::string& warning : warnings_)
      count += warning.find(text) != std::string::npos ? 1 : 0;
    return count;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> warnings_;
};

InformerOptions FastOptions() {
  InformerOptions options;
  options.reflector.backoff_initial = absl::Milliseconds(1);
  options.reflector.backoff_max = absl::Milliseconds(4);
  return options;
}

// A copy: Informers::Stats() returns a fresh vector each call.
std::optional<ReflectorStats> StatsOf(const std::vector<ReflectorStats>& stats,
                                      const std::string& kind) {
  for (const ReflectorStats& entry : stats) {
    if (entry.kind == kind) return entry;
  }
  return std::nullopt;
}

TEST_CASE("PodGroups are listed and delivered to OnPodGroup", "[reflector]") {
  ScriptedApiServer server;
  server.QueueList(kPodGroups, Ok(ListBody("4", {PodGroupJson("train", "4")})));
  PodGroupRecorder handler;
  Informers informers(server.transport(), &handler, FastOptions());
  informers.Start();
  REQUIRE(informers.WaitForSync(absl::Seconds(10)));
  CHECK(handler.events() == std::vector<std::string>{"ADDED ml/train minMember=3"});
  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPodGroups).size() == 1; }));
  const std::optional<ReflectorStats> stats = StatsOf(informers.Stats(), "PodGroup");
  REQUIRE(stats.has_value());
  CHECK_FALSE(stats->absent);
  informers.Stop();
}

TEST_CASE("a cluster without the PodGroup CRD syncs, warns once naming the CRD, and lists again",
          "[reflector]") {
  WarningCollector warnings;
  ScriptedApiServer server;
  for (int i = 0; i < 3; ++i) server.QueueList(kPodGroups, NotFound());
  // The CRD appears on the fourth list.
  server.QueueList(kPodGroups, Ok(ListBody("9", {PodGroupJson("train", "9")})));
  PodGroupRecorder handler;
  InformerOptions options = FastOptions();
  options.reflector.absent_retry_interval = absl::Milliseconds(1);
  Informers informers(server.transport(), &handler, options);
  informers.Start();

  REQUIRE(informers.WaitForSync(absl::Seconds(10)));
  REQUIRE(WaitUntil([&] { return handler.events().size() == 1; }));
  CHECK(handler.events() == std::vector<std::string>{"ADDED ml/train minMember=3"});
  CHECK(server.ListTargets(kPodGroups).size() == 4);
  CHECK(warnings.CountContaining("podgroups.scheduling.x-k8s.io") == 1);
  REQUIRE(WaitUntil([&] { return server.WatchTargets(kPodGroups).size() == 1; }));
  CHECK_FALSE(StatsOf(informers.Stats(), "PodGroup")->absent);
  informers.Stop();
}

TEST_CASE("while the PodGroup CRD is missing the informers stay synced and nothing is delivered",
          "[reflector]") {
  WarningCollector warnings;
  ScriptedApiServer server;
  server.QueueList(kPodGroups, NotFound());
  PodGroupRecorder handler;
  InformerOptions options = FastOptions();
  options.reflector.absent_retry_interval = absl::Hours(1);  // no second list during the test
  Informers informers(server.transport(), &handler, options);
  informers.Start();

  REQUIRE(informers.WaitForSync(absl::Seconds(10)));
  REQUIRE(WaitUntil([&] { return StatsOf(informers.Stats(), "PodGroup")->absent; }));
  CHECK(handler.events().empty());
  CHECK(server.WatchTargets(kPodGroups).empty());
  CHECK(warnings.CountContaining("CRD is not installed") == 1);
  informers.Stop();  // prompt: the retry wait ends on stop
}

TEST_CASE("RBAC rules without PodGroups cost the groups, not the informers' sync", "[reflector]") {
  WarningCollector warnings;
  ScriptedApiServer server;
  server.QueueList(kPodGroups,
                   HttpResponse{403, StatusJson(403, "Forbidden", "podgroups is forbidden")});
  PodGroupRecorder handler;
  InformerOptions options = FastOptions();
  options.reflector.absent_retry_interval = absl::Hours(1);
  Informers informers(server.transport(), &handler, options);
  informers.Start();

  REQUIRE(informers.WaitForSync(absl::Seconds(10)));
  CHECK(handler.events().empty());
  REQUIRE(WaitUntil([&] { return warnings.CountContaining("(HTTP 403)") == 1; }));
  CHECK(warnings.CountContaining("get/list/watch on podgroups.scheduling.x-k8s.io") == 1);
  informers.Stop();
}

TEST_CASE("a PodGroup CRD removed while watched deletes the groups it had", "[reflector]") {
  WarningCollector warnings;
  ScriptedApiServer server;
  server.QueueList(kPodGroups, Ok(ListBody("4", {PodGroupJson("train", "4")})));
  server.QueueWatch(kPodGroups, WatchScript{{}, NotFound()});
  server.QueueList(kPodGroups, NotFound());
  PodGroupRecorder handler;
  InformerOptions options = FastOptions();
  options.reflector.absent_retry_interval = absl::Hours(1);
  Informers informers(server.transport(), &handler, options);
  informers.Start();

  REQUIRE(WaitUntil([&] { return handler.events().size() == 2; }));
  CHECK(handler.events() ==
        std::vector<std::string>{"ADDED ml/train minMember=3", "DELETED ml/train minMember=3"});
  CHECK(warnings.CountContaining("podgroups.scheduling.x-k8s.io") == 1);
  informers.Stop();
}

}  // namespace
}  // namespace kubesched::client

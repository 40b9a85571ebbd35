// QuotaTracker: placement, hierarchical limits, typed (per-model) limits, budgets on a virtual
// clock, reloads and the ledger. The examples are the source articles' (YuniKorn's root.parent
// with child queues; the business-group quota with cpu.A4 and GPU-hour "cash").

#include "scheduler/quota/quota_tracker.h"

#include <catch2/catch.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "config/queues.h"
#include "tests/testing/builders.h"

namespace kubesched::quota {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

config::QueuesConfig Queues(const std::string& yaml) {
  auto parsed = config::ParseQueuesDocument(yaml);
  INFO(parsed.status().message());
  REQUIRE(parsed.ok());
  return *parsed;
}

framework::PodInfoPtr Pod(const std::string& name, const std::string& queue,
                          std::vector<std::pair<std::string, std::string>> requests,
                          const std::string& ns = "default") {
  PodBuilder builder(name, ns);
  builder.Container(requests);
  if (!queue.empty()) builder.Label(std::string(kQueueLabel), queue);
  return framework::MakePodInfo(builder.Ptr(), 0);
}

// The same pod at a higher priority: a preemptor of the pods Pod makes.
framework::PodInfoPtr Above(const framework::PodInfoPtr& pod) {
  return framework::MakePodInfo(pod->pod, 10);
}

framework::PodInfoPtr Bound(const framework::PodInfoPtr& pod, const std::string& node) {
  api::Pod copy = pod->get();
  copy.spec.node_name = node;
  return framework::MakePodInfo(std::make_shared<const api::Pod>(copy), 0);
}

int64_t Used(QuotaTracker& tracker, const std::string& path, const std::string& resource) {
  for (const auto& queue : tracker.Usage()) {
    if (queue.path == path) return queue.used.Get(api::InternResource(resource));
  }
  FAIL("no queue " << path);
  return -1;
}

// Reserves pods of `cpu` each into `queue` until one does not fit; returns how many fit.
int FillCpu(QuotaTracker& tracker, const std::string& queue, const std::string& cpu, int limit,
            const std::string& prefix) {
  for (int i = 0; i < limit; ++i) {
    auto pod = Pod(prefix + std::to_string(i), queue, {{"cpu", cpu}});
    if (tracker.Admit(*pod).verdict != Verdict::kFits) return i;
    REQUIRE(tracker.Reserve(*pod, "node").ok());
  }
  return limit;
}

constexpr char kYuniKorn[] = R"(
tree:
- name: parent
  max: {cpu: "900"}
  queues:
  - name: child1
  - name: child2
    max: {cpu: "750"}
  - name: child3
    max: {cpu: "750"}
)";

TEST_CASE("YuniKorn's example: children share the parent's 900 and one may take all of it",
          "[quota]") {
  util::FakeClock clock;
  SECTION("child1, unlimited itself, takes the parent's whole 900") {
    QuotaTracker tracker(&clock, Queues(kYuniKorn));
    CHECK(FillCpu(tracker, "root.parent.child1", "100", 20, "a") == 9);
    CHECK(Used(tracker, "root.parent", "cpu") == 900'000);
    const auto blocked = tracker.Admit(*Pod("x", "root.parent.child1", {{"cpu", "100"}}));
    CHECK(blocked.verdict == Verdict::kOverQuota);
    CHECK(blocked.blocking_queue == "root.parent");
    CHECK(blocked.message ==
          "queue root.parent: insufficient quota for cpu (used 900, max 900, requested 100)");
  }
  SECTION("child2 stops at its own 750, child3 then gets only the parent's remaining 150") {
    QuotaTracker tracker(&clock, Queues(kYuniKorn));
    CHECK(FillCpu(tracker, "root.parent.child2", "50", 40, "a") == 15);
    const auto own = tracker.Admit(*Pod("x", "root.parent.child2", {{"cpu", "50"}}));
    CHECK(own.blocking_queue == "root.parent.child2");
    CHECK(FillCpu(tracker, "root.parent.child3", "50", 40, "b") == 3);
    CHECK(Used(tracker, "root.parent", "cpu") == 900'000);
    CHECK(Used(tracker, "root.parent.child3", "cpu") == 150'000);
  }
}

TEST_CASE("room reserved for pods keeps the charges made and limits what comes after", "[quota]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kYuniKorn));
  CHECK(FillCpu(tracker, "root.parent.child2", "100", 3, "a") == 3);
  tracker.ReservePods(2);  // fewer than charged already: nothing is dropped
  CHECK(Used(tracker, "root.parent.child2", "cpu") == 300'000);
  tracker.Release("default/a0", /*assumed_only=*/false);  // refunds the charge kept
  CHECK(Used(tracker, "root.parent.child2", "cpu") == 200'000);
  tracker.ReservePods(1000);
  CHECK(FillCpu(tracker, "root.parent.child2", "100", 20, "b") == 5);  // child2's 750
  CHECK(Used(tracker, "root.parent", "cpu") == 700'000);
}

TEST_CASE("a release wakes the queues on the released pod's path", "[quota]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kYuniKorn));
  std::vector<std::string> woken;
  tracker.SetWakeHandler([&](const std::vector<std::string>& keys) { woken = keys; });
  auto pod = Pod("a", "root.parent.child2", {{"cpu", "1"}});
  REQUIRE(tracker.Reserve(*pod, "node").ok());
  tracker.Release(pod->key, /*assumed_only=*/false);
  CHECK(woken ==
        std::vector<std::string>{"quota:root.parent.child2", "quota:root.parent", "quota:root"});
  CHECK(Used(tracker, "root.parent", "cpu") == 0);
}

TEST_CASE("a pod blocked at its leaf waits on the leaf, at the parent on the parent", "[quota]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kYuniKorn));
  CHECK(FillCpu(tracker, "root.parent.child2", "750", 1, "a") == 1);
  CHECK(tracker.WaitKeys(*Pod("x", "root.parent.child2", {{"cpu", "1"}})) ==
        std::vector<std::string>{"quota:root.parent.child2"});
  CHECK(FillCpu(tracker, "root.parent.child1", "150", 1, "b") == 1);
  CHECK(tracker.WaitKeys(*Pod("y", "root.parent.child3", {{"cpu", "1"}})) ==
        std::vector<std::string>{"quota:root.parent"});
  CHECK(tracker.WaitKeys(*Pod("z", "root.parent.child3", {{"memory", "1Gi"}})).empty());
}

constexpr char kBizrq[] = R"(
modelLabels: {cpu: kubesched.io/machine-class, nvidia.com/gpu: nvidia.com/gpu.product}
tree:
- name: biz
  max: {cpu: "10", cpu.A4: "4"}
)";

TEST_CASE("bizrq's example: after 4 A4 cores, A4 placements stop while 6 other cores remain",
          "[quota]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kBizrq));
  tracker.SetNode(NodeBuilder("a4").Label("kubesched.io/machine-class", "A4").Build());
  tracker.SetNode(NodeBuilder("b8").Label("kubesched.io/machine-class", "B8").Build());
  for (int i = 0; i < 4; ++i) {
    auto pod = Pod("a" + std::to_string(i), "root.biz", {{"cpu", "1"}});
    const auto admission = tracker.Admit(*pod);
    INFO((admission.blocked_models.empty() ? "" : admission.blocked_models[0].message));
    REQUIRE(admission.blocked_models.empty());
    REQUIRE(tracker.Reserve(*pod, "a4").ok());
  }
  CHECK(Used(tracker, "root.biz", "cpu.A4") == 4000);
  CHECK(Used(tracker, "root.biz", "cpu") == 4000);

  auto next = Pod("next", "root.biz", {{"cpu", "1"}});
  const Admission admission = tracker.Admit(*next);
  CHECK(admission.verdict == Verdict::kFits);
  REQUIRE(admission.blocked_models.size() == 1);
  CHECK(api::SymbolText(admission.blocked_models[0].label_value) == "A4");
  CHECK(admission.blocked_models[0].message ==
        "queue root.biz: insufficient quota for cpu.A4 (used 4, max 4, requested 1)");
  CHECK_FALSE(tracker.Reserve(*next, "a4").ok());
  int other = 0;
  for (; other < 10; ++other) {
    auto pod = Pod("b" + std::to_string(other), "root.biz", {{"cpu", "1"}});
    if (!tracker.Reserve(*pod, "b8").ok()) break;
  }
  CHECK(other == 6);
  CHECK(Used(tracker, "root.biz", "cpu") == 10'000);
  CHECK(Used(tracker, "root.biz", "cpu.B8") == 6000);
}

// The labels NVIDIA's GPU feature discovery puts on nodes, and models that name them.
constexpr char kGpuModels[] = R"(
models:
  A100: [NVIDIA-A100-SXM4-80GB, NVIDIA-A100-PCIE-40GB]
  H100: [NVIDIA-H100-*]
tree:
- name: ml
  max: {nvidia.com/gpu: "16", nvidia.com/gpu.A100: "2"}
)";

TEST_CASE("a model limit counts every label value the model lists, whatever the variant",
          "[quota]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(kGpuModels));
  tracker.SetNode(
      NodeBuilder("sxm").Label("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB").Build());
  tracker.SetNode(
      NodeBuilder("pcie").Label("nvidia.com/gpu.product", "NVIDIA-A100-PCIE-40GB").Build());
  tracker.SetNode(
      NodeBuilder("h100").Label("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3").Build());
  REQUIRE(tracker.Reserve(*Pod("a", "root.ml", {{"nvidia.com/gpu", "1"}}), "sxm").ok());
  REQUIRE(tracker.Reserve(*Pod("b", "root.ml", {{"nvidia.com/gpu", "1"}}), "pcie").ok());
  CHECK(Used(tracker, "root.ml", "nvidia.com/gpu.A100") == 2);
  CHECK(Used(tracker, "root.ml", "nvidia.com/gpu.H100") == 0);

  // Both A100 variants are now closed to the queue; the H100 (a prefix match) is not.
  auto third = Pod("c", "root.ml", {{"nvidia.com/gpu", "1"}});
  const Admission admission = tracker.Admit(*third);
  REQUIRE(admission.blocked_models.size() == 1);
  CHECK(admission.blocked_models[0].message ==
        "queue root.ml: insufficient quota for nvidia.com/gpu.A100 (used 2, max 2, requested 1)");
  CHECK_FALSE(tracker.Reserve(*third, "sxm").ok());
  CHECK_FALSE(tracker.Reserve(*third, "pcie").ok());
  REQUIRE(tracker.Reserve(*third, "h100").ok());
  CHECK(Used(tracker, "root.ml", "nvidia.com/gpu.H100") == 1);
  CHECK(Used(tracker, "root.ml", "nvidia.com/gpu") == 3);
}

TEST_CASE("placement: pod label, namespace annotation, then root.<namespace>", "[quota]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues("tree: [{name: prod, queues: [{name: search}, {name: ads}]},"
                                      " {name: teams}]"));
  api::Namespace annotated;
  annotated.meta.name = "web";
  annotated.meta.annotations[std::string(kQueueAnnotation)] = "prod.ads";
  tracker.SetNamespace(annotated);
  api::Namespace team;
  team.meta.name = "ml";
  team.meta.annotations[std::string(kParentQueueAnnotation)] = "root.teams";
  team.meta.annotations[std::string(kNamespaceQuotaAnnotation)] = R"({"cpu": "4", "pods": 2})";
  tracker.SetNamespace(team);

  CHECK(tracker.Admit(*Pod("a", "root.prod.search", {{"cpu", "1"}}, "web")).queue ==
        "root.prod.search");
  CHECK(tracker.Admit(*Pod("b", "", {{"cpu", "1"}}, "web")).queue == "root.prod.ads");
  CHECK(tracker.Admit(*Pod("c", "", {{"cpu", "1"}}, "batch")).queue == "root.batch");
  CHECK(tracker.Admit(*Pod("d", "", {{"cpu", "1"}}, "ml")).queue == "root.teams.ml");

  // The namespace quota limits its auto-created queue, pods included.
  REQUIRE(tracker.Reserve(*Pod("d1", "", {{"cpu", "1"}}, "ml"), "n").ok());
  REQUIRE(tracker.Reserve(*Pod("d2", "", {{"cpu", "1"}}, "ml"), "n").ok());
  const auto third = tracker.Admit(*Pod("d3", "", {{"cpu", "1"}}, "ml"));
  CHECK(third.message ==
        "queue root.teams.ml: insufficient quota for pods (used 2, max 2, "
        "requested 1)");

  const auto parent = tracker.Admit(*Pod("e", "root.prod", {{"cpu", "1"}}));
  CHECK(parent.verdict == Verdict::kNoQueue);
  CHECK(parent.message ==
        "queue root.prod (pod label kubesched.io/queue) is a parent queue; pods "
        "go to leaf queues only");
  const auto missing = tracker.Admit(*Pod("f", "root.nope", {{"cpu", "1"}}));
  CHECK(missing.verdict == Verdict::kNoQueue);
  CHECK(missing.message == "queue root.nope (pod label kubesched.io/queue) does not exist");
  CHECK(tracker.WaitKeys(*Pod("f", "root.nope", {{"cpu", "1"}})) ==
        std::vector<std::string>{"placement"});

  api::Namespace broken;
  broken.meta.name = "broken";
  broken.meta.annotations[std::string(kNamespaceQuotaAnnotation)] = "{cpu: 4";
  tracker.SetNamespace(broken);
  CHECK_THAT(tracker.Admit(*Pod("g", "", {{"cpu", "1"}}, "broken")).message,
             Catch::Contains("namespace broken: annotation kubesched.io/namespace-quota: must be "
                             "a JSON object"));
}

TEST_CASE("with autoCreate off, a pod that names no queue waits", "[quota]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues("autoCreate: false\ntree: [{name: a}]"));
  const auto admission = tracker.Admit(*Pod("x", "", {{"cpu", "1"}}));
  CHECK(admission.verdict == Verdict::kNoQueue);
  CHECK_THAT(admission.message, Catch::Contains("queues.autoCreate is off"));
}

TEST_CASE("only the requested resources are checked", "[quota]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues("tree: [{name: a, max: {nvidia.com/gpu: '0'}}]"));
  CHECK(tracker.Admit(*Pod("cpu-only", "root.a", {{"cpu", "1"}})).verdict == Verdict::kFits);
  CHECK(tracker.Admit(*Pod("gpu", "root.a", {{"nvidia.com/gpu", "1"}})).verdict ==
        Verdict::kOverQuota);
}

constexpr char kBudget[] = R"(
tree:
- name: research
  budget: {nvidia.com/gpu: 1000h, period: 168h}
)";

// Runs `gpus` GPUs in root.research for `hours` and reports whether a new GPU pod still fits.
bool FitsAfter(int gpus, int hours) {
  util::FakeClock clock(absl::FromUnixSeconds(1'700'000'000));
  QuotaTracker tracker(&clock, Queues(kBudget));
  auto running = Pod("job", "root.research", {{"nvidia.com/gpu", std::to_string(gpus)}});
  REQUIRE(tracker.Reserve(*running, "n").ok());
  tracker.ChargeBound(*Bound(running, "n"));
  clock.Advance(absl::Hours(hours) - absl::Seconds(1));
  const bool before =
      tracker.Admit(*Pod("x", "root.research", {{"nvidia.com/gpu", "1"}})).verdict ==
      Verdict::kFits;
  CHECK(before);
  clock.Advance(absl::Seconds(1));
  const auto admission = tracker.Admit(*Pod("x", "root.research", {{"nvidia.com/gpu", "1"}}));
  if (admission.verdict == Verdict::kOverBudget) {
    CHECK(admission.message ==
          "queue root.research: budget for nvidia.com/gpu used up (used "
          "1000h of 1000h per 168h); budget spent, resets at 2023-11-21T22:13:20Z");
    CHECK(tracker.WaitKeys(*Pod("x", "root.research", {{"nvidia.com/gpu", "1"}})) ==
          std::vector<std::string>{"budget:root.research"});
  }
  // Pods that do not use the budgeted resource are not held back by it.
  CHECK(tracker.Admit(*Pod("y", "root.research", {{"cpu", "1"}})).verdict == Verdict::kFits);
  return admission.verdict == Verdict::kFits;
}

TEST_CASE("1000 GPU-hours are spent by 10 GPUs in 100 h or by 20 GPUs in 50 h", "[quota]") {
  CHECK_FALSE(FitsAfter(10, 100));
  CHECK_FALSE(FitsAfter(20, 50));
  CHECK(FitsAfter(10, 99));
}

TEST_CASE("a budget period resets spending and Tick wakes the waiters", "[quota]") {
  util::FakeClock clock(absl::FromUnixSeconds(1'700'000'000));
  QuotaTracker tracker(&clock, Queues(kBudget));
  std::vector<std::string> woken;
  tracker.SetWakeHandler([&](const std::vector<std::string>& keys) { woken = keys; });
  auto running = Pod("job", "root.research", {{"nvidia.com/gpu", "10"}});
  REQUIRE(tracker.Reserve(*running, "n").ok());
  clock.Advance(absl::Hours(120));
  CHECK(tracker.Admit(*Pod("x", "root.research", {{"nvidia.com/gpu", "1"}})).verdict ==
        Verdict::kOverBudget);
  tracker.Release(running->key, false);  // running pods stop spending when they end
  clock.Advance(absl::Hours(47));
  CHECK(tracker.Tick().empty());
  clock.Advance(absl::Hours(2));  // 169 h: a new period
  CHECK(tracker.Tick() == std::vector<std::string>{"budget:root.research"});
  CHECK(woken == std::vector<std::string>{"budget:root.research"});
  CHECK(tracker.Admit(*Pod("x", "root.research", {{"nvidia.com/gpu", "1"}})).verdict ==
        Verdict::kFits);
  const auto usage = tracker.Usage();
  for (const auto& queue : usage) {
    if (queue.path != "root.research") continue;
    REQUIRE(queue.budgets.size() == 1);
    CHECK(queue.budgets[0].used_hours == 0);
    CHECK(queue.budgets[0].limit_hours == 1000);
  }
}

TEST_CASE("the ledger carries spending across a restart", "[quota]") {
  util::FakeClock clock(absl::FromUnixSeconds(1'700'000'000));
  Ledger ledger;
  {
    QuotaTracker before(&clock, Queues(kBudget));
    auto running = Pod("job", "root.research", {{"nvidia.com/gpu", "10"}});
    REQUIRE(before.Reserve(*running, "n").ok());
    clock.Advance(absl::Hours(60));
    ledger = before.ExportLedger();
  }
  REQUIRE(ledger.entries.size() == 1);
  CHECK(ledger.entries[0].queue == "root.research");
  CHECK(ledger.entries[0].resource == "nvidia.com/gpu");
  CHECK(ledger.entries[0].used_unit_seconds == 600.0 * 3600);

  clock.Advance(absl::Hours(10));  // down for 10 hours, the job kept running
  QuotaTracker after(&clock, Queues(kBudget));
  after.ImportLedger(ledger);
  api::Pod job = Pod("job", "root.research", {{"nvidia.com/gpu", "10"}})->get();
  job.spec.node_name = "n";
  job.status.start_time = absl::FromUnixSeconds(1'700'000'000);
  after.ChargeBound(*framework::MakePodInfo(std::make_shared<const api::Pod>(job), 0));
  // 600 h before the restart and 100 h while down: 300 h left, spent in 30 more hours.
  clock.Advance(absl::Hours(29));
  CHECK(after.Admit(*Pod("x", "root.research", {{"nvidia.com/gpu", "1"}})).verdict ==
        Verdict::kFits);
  clock.Advance(absl::Hours(1));
  CHECK(after.Admit(*Pod("x", "root.research", {{"nvidia.com/gpu", "1"}})).verdict ==
        Verdict::kOverBudget);
}

TEST_CASE("a reload recomputes usage for added and removed queues", "[quota]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues("tree: [{name: a, max: {cpu: '10'}}]"));
  // Bound by someone else into a queue that does not exist yet: counted at the deepest existing.
  tracker.ChargeBound(*Bound(Pod("x", "root.b.c", {{"cpu", "3"}}), "n"));
  tracker.ChargeBound(*Bound(Pod("y", "root.a", {{"cpu", "4"}}), "n"));
  CHECK(Used(tracker, "root", "cpu") == 7000);
  CHECK(Used(tracker, "root.a", "cpu") == 4000);

  tracker.SetConfig(Queues("tree: [{name: b, max: {cpu: '5'}, queues: [{name: c}]}]"));
  CHECK(Used(tracker, "root.b", "cpu") == 3000);
  CHECK(Used(tracker, "root.b.c", "cpu") == 3000);
  CHECK(Used(tracker, "root", "cpu") == 7000);
  CHECK(tracker.Admit(*Pod("z", "root.b.c", {{"cpu", "3"}})).verdict == Verdict::kOverQuota);

  tracker.Release("default/x", false);
  tracker.Release("default/y", false);
  CHECK(Used(tracker, "root", "cpu") == 0);
  CHECK(Used(tracker, "root.b", "cpu") == 0);
}

TEST_CASE("a failed bind refunds only an unconfirmed charge", "[quota]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues("tree: [{name: a, max: {cpu: '10'}}]"));
  auto pod = Pod("x", "root.a", {{"cpu", "3"}});
  REQUIRE(tracker.Reserve(*pod, "n").ok());
  tracker.ChargeBound(*Bound(pod, "n"));  // the watch saw it bound
  CHECK(tracker.Release(pod->key, /*assumed_only=*/true).empty());
  CHECK(Used(tracker, "root.a", "cpu") == 3000);
  tracker.ChargeBound(*Bound(pod, "n"));  // idempotent
  CHECK(Used(tracker, "root.a", "cpu") == 3000);
  CHECK_FALSE(tracker.Release(pod->key, /*assumed_only=*/false).empty());
  CHECK(Used(tracker, "root.a", "cpu") == 0);
}

}  // namespace
}  // namespace kubesched::quota

namespace kubesched::quota {
namespace {

TEST_CASE("the preemption view names who may be preempted and whether their room suffices",
          "[quota][preemption]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues(R"(
tree:
- name: org
  max: {cpu: "10"}
  queues:
  - {name: a, max: {cpu: "4"}}
  - {name: b}
- name: other
)"));
  for (const auto& [name, queue, cpu] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"a1", "root.org.a", "2"},
                                                                      {"a2", "root.org.a", "2"},
                                                                      {"b1", "root.org.b", "3"},
                                                                      {"b2", "root.org.b", "3"},
                                                                      {"o1", "root.other", "8"}}) {
    REQUIRE(tracker.Reserve(*Pod(name, queue, {{"cpu", cpu}}), "n").ok());
  }
  CHECK_FALSE(tracker.PreemptionView(*Pod("fits", "root.other", {{"cpu", "1"}})).has_value());
  // Of the same priority as every pod of its queue: nobody to preempt.
  auto peer = tracker.PreemptionView(*Pod("x", "root.org.a", {{"cpu", "2"}}));
  REQUIRE(peer.has_value());
  CHECK(peer->Empty());
  CHECK_FALSE(peer->MayPreempt("default/a1"));

  // Blocked at its leaf root.org.a (4 of 4 used): only a1 and a2 may go.
  auto leaf = tracker.PreemptionView(*Above(Pod("x", "root.org.a", {{"cpu", "2"}})));
  REQUIRE(leaf.has_value());
  CHECK(leaf->blocking_queue() == "root.org.a");
  CHECK(leaf->MayPreempt("default/a1"));
  CHECK_FALSE(leaf->MayPreempt("default/b1"));
  CHECK_FALSE(leaf->MayPreempt("default/o1"));
  CHECK(leaf->FitsWithout({"default/a1"}));
  CHECK_FALSE(leaf->FitsWithout({}));

  // Blocked at root.org (10 of 10): anything under org may go; removing 3 is not enough for 4.
  auto parent = tracker.PreemptionView(*Above(Pod("y", "root.org.b", {{"cpu", "4"}})));
  REQUIRE(parent.has_value());
  CHECK(parent->blocking_queue() == "root.org");
  CHECK(parent->MayPreempt("default/a1"));
  CHECK(parent->MayPreempt("default/b2"));
  CHECK_FALSE(parent->MayPreempt("default/o1"));
  CHECK_FALSE(parent->FitsWithout({"default/b1"}));
  CHECK(parent->FitsWithout({"default/b1", "default/a1"}));
}

}  // namespace
}  // namespace kubesched::quota

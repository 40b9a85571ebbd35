// Random small clusters with Dynamic Resource Allocation, through the real scheduler on the
// embedded cluster: two drivers, devices of three models on nodes (pools per node, some with an
// outdated generation or still incomplete), network-attached devices for a zone or for every node,
// and pods with template claims (counts, All, firstAvailable, matchAttribute) and shared claims.
// Whatever is written must hold up: no device in two claims, every device matches its class and
// request, offered to the pod's node from the newest complete generation of its pool, every
// constraint true, the claims reserved for their pods. A pod left pending must have no node where
// an exhaustive search finds devices for it among those still free.

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/api/decode.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/simulate/simulation.h"

namespace kubesched::scheduler {
namespace {

const char* const kDrivers[] = {"drv-a.example.com", "drv-b.example.com"};
const char* const kModels[] = {"m0", "m1", "m2"};

// --- The model the objects are made from, and the oracle reads ------------------------------

struct DeviceModel {
  int driver = 0;
  std::string pool;
  std::string name;
  int model = 0;
  int numa = 0;
  // Where: a node index, or -1 with `zone` ("" for every node).
  int node = -1;
  std::string zone;
  bool usable = true;  // of its pool's newest, complete generation
};

struct SpecModel {
  int driver = -1;  // -1: class "any"
  uint32_t models = 0;
  bool all = false;
  int count = 1;
};

struct SlotModel {
  std::string request;
  std::vector<std::string> subs;  // empty: `exactly`
  std::vector<SpecModel> specs;
};

struct ClaimModel {
  std::string name;  // the claim's name once it exists
  std::vector<SlotModel> slots;
  // matchAttribute numa of driver a over all requests: every device of the claim is one of
  // driver a's, all on one numa node.
  bool numa_constraint = false;
};

struct PodModel {
  std::string name;
  std::vector<int> claims;  // indexes in Case::claims
};

struct Case {
  int nodes = 0;
  std::vector<DeviceModel> devices;
  std::vector<ClaimModel> claims;
  std::vector<PodModel> pods;
  bool any_incomplete = false;
};

std::string ZoneOf(int node) { return node % 2 == 0 ? "z1" : "z2"; }

bool OfferedTo(const DeviceModel& device, int node) {
  if (device.node >= 0) return device.node == node;
  return device.zone.empty() || device.zone == ZoneOf(node);
}

bool Matches(const SpecModel& spec, const DeviceModel& device) {
  if (spec.driver >= 0 && spec.driver != device.driver) return false;
  return spec.models == 0 || (spec.models >> device.model & 1) != 0;
}

// --- Generation --------------------------------------------------------------------------------

std::string SliceYaml(const std::string& name, const DeviceModel& first,
                      const std::vector<const DeviceModel*>& devices, int generation, int count) {
  std::string place =
      first.node >= 0 ? absl::StrCat("nodeName: node-", first.node)
      : first.zone.empty()
          ? std::string("allNodes: true")
          : absl::StrCat("nodeSelector: {nodeSelectorTerms: [{matchExpressions: ",
                         "[{key: zone, operator: In, values: [", first.zone, "]}]}]}");
  std::string list;
  for (const DeviceModel* d : devices) {
    absl::StrAppend(&list, list.empty() ? "" : ", ", "{name: ", d->name,
                    ", attributes: {model: {string: ", kModels[d->model],
                    "}, numa: {int: ", d->numa, "}}}");
  }
  return absl::StrCat(
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ", name,
      "}\nspec: {driver: ", kDrivers[first.driver], ", ", place, ", pool: {name: ", first.pool,
      ", generation: ", generation, ", resourceSliceCount: ", count, "}, devices: [", list, "]}\n");
}

// One pool: its devices, a stale generation now and then, and sometimes a missing second slice.
void AddPool(std::mt19937& random, int driver, const std::string& pool, int node,
             const std::string& zone, bool may_be_incomplete, Case& c, std::string& yaml) {
  const int count = 1 + static_cast<int>(random() % 3);
  const bool incomplete = may_be_incomplete && random() % 6 == 0;
  std::vector<const DeviceModel*> devices;
  const size_t first = c.devices.size();
  for (int i = 0; i < count; ++i) {
    DeviceModel d{driver,
                  pool,
                  absl::StrCat("dev-", i),
                  static_cast<int>(random() % 3),
                  static_cast<int>(random() % 2),
                  node,
                  zone,
                  !incomplete};
    c.devices.push_back(d);
  }
  for (size_t i = first; i < c.devices.size(); ++i) devices.push_back(&c.devices[i]);
  yaml += SliceYaml(pool + "-gen2", c.devices[first], devices, 2, incomplete ? 2 : 1);
  c.any_incomplete = c.any_incomplete || incomplete;
  if (random() % 4 == 0) {  // an outdated generation, whose device must never be picked
    DeviceModel stale = c.devices[first];
    stale.name = "stale";
    yaml += SliceYaml(pool + "-gen1", stale, {&stale}, 1, 1);
  }
}

SpecModel RandomSpec(std::mt19937& random, bool all_allowed) {
  SpecModel spec;
  spec.driver = static_cast<int>(random() % 3) - 1;
  spec.models = random() % 2 == 0 ? 0 : 1 + random() % 7;
  spec.all = all_allowed && random() % 8 == 0;
  spec.count = 1 + static_cast<int>(random() % 2);
  return spec;
}

std::string SpecYaml(const SpecModel& spec) {
  const char* classes[] = {"any", "only-a", "only-b"};
  std::string out = absl::StrCat("deviceClassName: ", classes[spec.driver + 1]);
  absl::StrAppend(
      &out, spec.all ? ", allocationMode: All" : absl::StrCat(", count: ", spec.count).c_str());
  if (spec.models != 0) {
    std::string models;
    for (int m = 0; m < 3; ++m) {
      if ((spec.models >> m & 1) != 0) {
        absl::StrAppend(&models, models.empty() ? "" : ", ", "\"", kModels[m], "\"");
      }
    }
    // Either driver's attribute, each guarded: the other driver's domain has no `model`.
    std::string either;
    for (const char* driver : kDrivers) {
      absl::StrAppend(&either, either.empty() ? "" : " || ", "(has(device.attributes[\"", driver,
                      "\"].model) && device.attributes[\"", driver, "\"].model in [", models, "])");
    }
    absl::StrAppend(&out, ", selectors: [{cel: {expression: '", either, "'}}]");
  }
  return out;
}

ClaimModel RandomClaim(std::mt19937& random, bool all_allowed) {
  ClaimModel claim;
  const int slots = 1 + static_cast<int>(random() % 2);
  for (int r = 0; r < slots; ++r) {
    SlotModel slot{absl::StrCat("req-", r), {}, {}};
    if (random() % 4 == 0) {
      slot.subs = {"sub-0", "sub-1"};
      slot.specs = {RandomSpec(random, all_allowed), RandomSpec(random, all_allowed)};
    } else {
      slot.specs = {RandomSpec(random, all_allowed)};
    }
    claim.slots.push_back(slot);
  }
  claim.numa_constraint = random() % 3 == 0;
  return claim;
}

std::string ClaimSpecYaml(const ClaimModel& claim) {
  std::string requests;
  for (const SlotModel& slot : claim.slots) {
    std::string entry = absl::StrCat("{name: ", slot.request, ", ");
    if (slot.subs.empty()) {
      absl::StrAppend(&entry, "exactly: {", SpecYaml(slot.specs[0]), "}}");
    } else {
      absl::StrAppend(&entry, "firstAvailable: [{name: sub-0, ", SpecYaml(slot.specs[0]),
                      "}, {name: sub-1, ", SpecYaml(slot.specs[1]), "}]}");
    }
    absl::StrAppend(&requests, requests.empty() ? "" : ", ", entry);
  }
  return absl::StrCat("{devices: {requests: [", requests, "]",
                      claim.numa_constraint ? ", constraints: [{matchAttribute: " : "",
                      claim.numa_constraint ? kDrivers[0] : "",
                      claim.numa_constraint ? "/numa}]" : "", "}}");
}

std::string NodeYaml(int node) {
  return absl::StrCat("---\napiVersion: v1\nkind: Node\nmetadata: {name: node-", node,
                      ", labels: {zone: ", ZoneOf(node),
                      "}}\nstatus: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n");
}

std::string ClassesYaml() {
  std::string yaml =
      "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: any}\nspec: {}\n";
  const char* names[] = {"only-a", "only-b"};
  for (int d = 0; d < 2; ++d) {
    absl::StrAppend(&yaml, "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: ",
                    "{name: ", names[d],
                    "}\nspec: {selectors: [{cel: {expression: ", "'device.driver == \"",
                    kDrivers[d], "\"'}}]}\n");
  }
  return yaml;
}

std::string PodYaml(const PodModel& pod, const Case& c) {
  std::string entries;
  for (size_t k = 0; k < pod.claims.size(); ++k) {
    const ClaimModel& claim = c.claims[pod.claims[k]];
    const bool shared = claim.name.rfind("shared-", 0) == 0;
    absl::StrAppend(&entries, entries.empty() ? "" : ", ", "{name: c", k,
                    shared ? ", resourceClaimName: " : ", resourceClaimTemplateName: ",
                    shared ? claim.name : absl::StrCat("tmpl-", pod.claims[k]), "}");
  }
  return absl::StrCat("---\napiVersion: v1\nkind: Pod\nmetadata: {name: ", pod.name,
                      ", namespace: default, uid: ", pod.name,
                      "-uid}\nspec:\n  schedulerName: kubesched\n",
                      "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n",
                      "  resourceClaims: [", entries, "]\n");
}

// The case and its objects as YAML: nodes, classes, slices, templates and shared claims, pods.
std::string GenerateCase(std::mt19937& random, Case& c) {
  c.nodes = 2 + static_cast<int>(random() % 2);
  std::string yaml = ClassesYaml();
  for (int n = 0; n < c.nodes; ++n) {
    yaml += NodeYaml(n);
    for (int d = 0; d < 2; ++d) {
      if (random() % 10 < 7) {
        AddPool(random, d, absl::StrCat("p", d, "-node-", n), n, "", true, c, yaml);
      }
    }
  }
  if (random() % 5 < 2) {
    AddPool(random, static_cast<int>(random() % 2), "net", -1, random() % 2 == 0 ? "z1" : "", false,
            c, yaml);
  }
  const int pods = 2 + static_cast<int>(random() % 3);
  const bool shared = random() % 4 == 0;
  for (int p = 0; p < pods; ++p) {
    PodModel pod{absl::StrCat("pod-", p), {}};
    const int own = static_cast<int>(c.claims.size());
    c.claims.push_back(RandomClaim(random, !c.any_incomplete));
    absl::StrAppend(&yaml, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n",
                    "metadata: {name: tmpl-", own,
                    ", namespace: default}\nspec: {spec: ", ClaimSpecYaml(c.claims[own]), "}\n");
    pod.claims.push_back(own);
    c.pods.push_back(pod);
  }
  if (shared) {
    const int index = static_cast<int>(c.claims.size());
    c.claims.push_back(RandomClaim(random, !c.any_incomplete));
    c.claims[index].name = "shared-0";
    absl::StrAppend(&yaml, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n",
                    "metadata: {name: shared-0, namespace: default}\nspec: ",
                    ClaimSpecYaml(c.claims[index]), "\n");
    c.pods[0].claims.push_back(index);
    c.pods[1].claims.push_back(index);
  }
  for (const PodModel& pod : c.pods) yaml += PodYaml(pod, c);
  return yaml;
}

// --- The scheduler's run -----------------------------------------------------------------------

class Observer final : public SchedulingObserver {
 public:
  void OnBound(const framework::PodInfo& pod, const std::string& node, int) override {
    bound[pod.get().meta.name] = node;
  }
  std::map<std::string, std::string> bound;
};

struct Run {
  cluster::EmbeddedCluster cluster;
  util::FakeClock clock{absl::FromUnixSeconds(1'700'000'000)};
  DeferredBindExecutor binds;
  Observer observer;
  std::unique_ptr<Scheduler> scheduler;

  explicit Run(const std::string& yaml) {
    auto decoded = api::DecodeObjects(yaml, "random");
    REQUIRE(decoded.ok());
    INFO((decoded->problems.empty() ? std::string() : decoded->problems.front().ToString()));
    REQUIRE(decoded->problems.empty());
    for (const api::Object& object : decoded->objects) REQUIRE(cluster.Create(object).ok());
    SchedulerDeps deps;
    deps.clock = &clock;
    deps.binder = &cluster;
    deps.bind_executor = &binds;
    deps.observer = &observer;
    deps.threads = 1;
    deps.claim_writer = &cluster;
    auto created = Scheduler::Create(config::DefaultConfiguration(), deps);
    REQUIRE(created.ok());
    scheduler = *std::move(created);
    cluster.Watch(scheduler.get());
    DriveToQuiescence(cluster, *scheduler, binds, clock);
  }

  // The claim behind the pod's entry `entry`, once it exists.
  std::shared_ptr<const api::ResourceClaim> ClaimOf(const std::string& pod, size_t entry) {
    const auto stored = cluster.GetPod("default/" + pod);
    REQUIRE(stored != nullptr);
    const std::string name = absl::StrCat("c", entry);
    for (const api::PodResourceClaimStatus& status : stored->status.resource_claim_statuses) {
      if (status.name == name) {
        return cluster.GetResourceClaim("default/" + status.resource_claim_name);
      }
    }
    for (const api::PodResourceClaim& claim : stored->spec.resource_claims) {
      if (claim.name == name && !claim.resource_claim_name.empty()) {
        return cluster.GetResourceClaim("default/" + claim.resource_claim_name);
      }
    }
    return nullptr;
  }
};

// --- What must hold ----------------------------------------------------------------------------

const DeviceModel* FindDevice(const Case& c, const api::DeviceRequestAllocationResult& result) {
  for (const DeviceModel& d : c.devices) {
    if (api::SymbolText(result.driver) == kDrivers[d.driver] &&
        api::SymbolText(result.pool) == d.pool && api::SymbolText(result.device) == d.name) {
      return &d;
    }
  }
  return nullptr;
}

// The slot and alternative a result's request names; false when none.
bool SlotOf(const ClaimModel& claim, const std::string& request, size_t* slot, size_t* alt) {
  for (size_t s = 0; s < claim.slots.size(); ++s) {
    const SlotModel& model = claim.slots[s];
    for (size_t a = 0; a < model.specs.size(); ++a) {
      const std::string name =
          model.subs.empty() ? model.request : model.request + "/" + model.subs[a];
      if (name != request) continue;
      *slot = s;
      *alt = a;
      return true;
    }
  }
  return false;
}

bool ConstraintHolds(const std::vector<const DeviceModel*>& devices) {
  for (const DeviceModel* d : devices) {
    if (d->driver != 0 || d->numa != devices.front()->numa) return false;
  }
  return true;
}

size_t AllCount(const Case& c, const SpecModel& spec, int node) {
  return static_cast<size_t>(std::count_if(c.devices.begin(), c.devices.end(), [&](const auto& d) {
    return d.usable && OfferedTo(d, node) && Matches(spec, d);
  }));
}

// One written allocation against its claim's model; `nodes`: the nodes of its bound pods.
void CheckAllocation(const Case& c, const ClaimModel& model, const api::AllocationResult& written,
                     const std::vector<int>& nodes, std::set<const DeviceModel*>& used) {
  REQUIRE_FALSE(nodes.empty());
  std::vector<std::optional<size_t>> chosen(model.slots.size());
  std::vector<size_t> counts(model.slots.size(), 0);
  std::vector<const DeviceModel*> devices;
  for (const api::DeviceRequestAllocationResult& result : written.devices) {
    const DeviceModel* d = FindDevice(c, result);
    INFO("device " << result.request << " " << api::SymbolText(result.pool) << "/"
                   << api::SymbolText(result.device));
    REQUIRE(d != nullptr);         // never a device of an outdated generation
    CHECK(d->usable);              // never one of an incomplete pool
    CHECK(used.insert(d).second);  // never one device twice
    size_t slot = 0;
    size_t alt = 0;
    REQUIRE(SlotOf(model, result.request, &slot, &alt));
    CHECK((!chosen[slot].has_value() || *chosen[slot] == alt));
    chosen[slot] = alt;
    ++counts[slot];
    CHECK(Matches(model.slots[slot].specs[alt], *d));
    for (int node : nodes) CHECK(OfferedTo(*d, node));
    devices.push_back(d);
  }
  for (size_t s = 0; s < model.slots.size(); ++s) {
    REQUIRE(chosen[s].has_value());
    const SpecModel& spec = model.slots[s].specs[*chosen[s]];
    CHECK(counts[s] == (spec.all ? AllCount(c, spec, nodes[0]) : static_cast<size_t>(spec.count)));
  }
  if (model.numa_constraint) CHECK(ConstraintHolds(devices));
}

// --- The exhaustive search for a pending pod -------------------------------------------------

struct Search {
  const Case& c;
  int node;
  const std::set<const DeviceModel*>& used;
  std::vector<std::pair<int, const SlotModel*>> slots;  // (claim, slot) to allocate
  std::vector<std::vector<const DeviceModel*>> picked;  // per claim of `slots`
  std::set<const DeviceModel*> taken;

  bool Free(const DeviceModel& d) const {
    return d.usable && OfferedTo(d, node) && !used.contains(&d) && !taken.contains(&d);
  }
  bool Done() const {
    for (const auto& [claim, slot] : slots) {
      if (c.claims[claim].numa_constraint && !ConstraintHolds(picked[claim])) return false;
    }
    return true;
  }
  bool Choose(size_t i, const std::vector<const DeviceModel*>& candidates, size_t from, int left,
              int claim) {
    if (left == 0) return Step(i + 1);
    for (size_t k = from; k < candidates.size(); ++k) {
      taken.insert(candidates[k]);
      picked[claim].push_back(candidates[k]);
      const bool found = Choose(i, candidates, k + 1, left - 1, claim);
      picked[claim].pop_back();
      taken.erase(candidates[k]);
      if (found) return true;
    }
    return false;
  }
  bool Step(size_t i) {
    if (i == slots.size()) return Done();
    const auto [claim, slot] = slots[i];
    for (const SpecModel& spec : slot->specs) {
      std::vector<const DeviceModel*> candidates;
      bool all_free = true;
      for (const DeviceModel& d : c.devices) {
        if (!d.usable || !OfferedTo(d, node) || !Matches(spec, d)) continue;
        if (Free(d)) {
          candidates.push_back(&d);
        } else {
          all_free = false;
        }
      }
      if (spec.all) {
        if (!all_free || candidates.empty()) continue;
        if (Choose(i, candidates, 0, static_cast<int>(candidates.size()), claim)) return true;
        continue;
      }
      if (Choose(i, candidates, 0, spec.count, claim)) return true;
    }
    return false;
  }
};

// Whether any node could still take the pod: its allocated claims' devices offered there, and
// the rest allocatable among the devices nothing holds.
bool FitsSomewhere(const Case& c, const PodModel& pod,
                   const std::vector<const api::ResourceClaim*>& claims,
                   const std::set<const DeviceModel*>& used) {
  for (int node = 0; node < c.nodes; ++node) {
    Search search{c, node, used, {}, std::vector<std::vector<const DeviceModel*>>(c.claims.size()),
                  {}};
    bool pinned_elsewhere = false;
    for (size_t k = 0; k < pod.claims.size(); ++k) {
      const api::ResourceClaim* claim = claims[k];
      if (claim != nullptr && claim->allocation.has_value()) {
        for (const auto& result : claim->allocation->devices) {
          const DeviceModel* d = FindDevice(c, result);
          pinned_elsewhere = pinned_elsewhere || d == nullptr || !OfferedTo(*d, node);
        }
        continue;
      }
      for (const SlotModel& slot : c.claims[pod.claims[k]].slots) {
        search.slots.emplace_back(pod.claims[k], &slot);
      }
    }
    if (!pinned_elsewhere && search.Step(0)) return true;
  }
  return false;
}

// --- The cases ----------------------------------------------------------------------------------

struct Outcome {
  int bound = 0;
  int pending = 0;
};

void CheckCase(const Case& c, Run& run, Outcome& outcome) {
  std::vector<std::shared_ptr<const api::ResourceClaim>> claims(c.claims.size());
  std::vector<std::vector<int>> nodes(c.claims.size());  // of the bound pods using each claim
  for (const PodModel& pod : c.pods) {
    const auto bound = run.observer.bound.find(pod.name);
    for (size_t k = 0; k < pod.claims.size(); ++k) {
      claims[pod.claims[k]] = run.ClaimOf(pod.name, k);
      if (bound == run.observer.bound.end()) continue;
      nodes[pod.claims[k]].push_back(std::stoi(bound->second.substr(5)));  // "node-<n>"
      REQUIRE(claims[pod.claims[k]] != nullptr);
      const auto& reserved = claims[pod.claims[k]]->reserved_for;
      CHECK(std::any_of(reserved.begin(), reserved.end(),
                        [&](const auto& consumer) { return consumer.name == pod.name; }));
    }
  }
  std::set<const DeviceModel*> used;
  for (size_t i = 0; i < c.claims.size(); ++i) {
    if (claims[i] == nullptr || !claims[i]->allocation.has_value()) {
      CHECK(nodes[i].empty());  // a bound pod's claims are all allocated
      continue;
    }
    INFO("claim " << claims[i]->meta.name);
    CheckAllocation(c, c.claims[i], *claims[i]->allocation, nodes[i], used);
  }
  for (const PodModel& pod : c.pods) {
    INFO("pod " << pod.name);
    if (run.observer.bound.contains(pod.name)) {
      ++outcome.bound;
      continue;
    }
    ++outcome.pending;
    std::vector<const api::ResourceClaim*> own;
    for (int index : pod.claims) own.push_back(claims[index].get());
    CHECK_FALSE(FitsSomewhere(c, pod, own, used));
  }
}

TEST_CASE("random clusters never give a device twice and leave pending only pods that fit nowhere",
          "[simulation][dra]") {
  std::mt19937 random(20261126);
  Outcome outcome;
  for (int iteration = 0; iteration < 150; ++iteration) {
    Case c;
    const std::string yaml = GenerateCase(random, c);
    INFO("iteration " << iteration << "\n" << yaml);
    Run run(yaml);
    CheckCase(c, run, outcome);
  }
  // Both outcomes are exercised.
  INFO("bound " << outcome.bound << ", pending " << outcome.pending);
  CHECK(outcome.bound > 100);
  CHECK(outcome.pending > 50);
}

}  // namespace
}  // namespace kubesched::scheduler

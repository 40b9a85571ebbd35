// Decoding of v1 Pod (see decode_internal.h).

#include <string>
#include <utility>

#include "scheduler/api/decode_internal.h"

namespace kubesched::api::internal {
namespace {

absl::Status CheckPort(std::string_view name, const Path& path, int32_t port) {
  if (port < 0 || port > 65535) return path.Field(name).Error("port out of range 0-65535");
  return absl::OkStatus();
}

absl::StatusOr<ContainerPort> DecodeContainerPort(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  ContainerPort port;
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(value, "containerPort", path, &port.container_port));
  KUBESCHED_RETURN_IF_ERROR(CheckPort("containerPort", path, port.container_port));
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(value, "hostPort", path, &port.host_port));
  KUBESCHED_RETURN_IF_ERROR(CheckPort("hostPort", path, port.host_port));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "hostIP", path, &port.host_ip));
  KUBESCHED_RETURN_IF_ERROR(
      ReadEnum(value, "protocol", path,
               {{"TCP", Protocol::kTCP}, {"UDP", Protocol::kUDP}, {"SCTP", Protocol::kSCTP}},
               &port.protocol));
  return port;
}

absl::Status DecodeContainerResources(const Json& container, const Path& path, Container* out) {
  const Json* resources = Find(container, "resources");
  if (resources == nullptr) return absl::OkStatus();
  const Path at = path.Field("resources");
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(*resources, at));
  KUBESCHED_RETURN_IF_ERROR(ReadResources(*resources, "requests", at, &out->requests));
  KUBESCHED_RETURN_IF_ERROR(ReadResources(*resources, "limits", at, &out->limits));
  // Listed-ness matters apart from the amount: upstream's non-zero defaults apply only to a
  // container that does not list cpu / memory at all.
  if (const Json* requests = Find(*resources, "requests")) {
    out->requests_cpu = Find(*requests, "cpu") != nullptr;
    out->requests_memory = Find(*requests, "memory") != nullptr;
  }
  return absl::OkStatus();
}

absl::StatusOr<Container> DecodeContainer(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  Container container;
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "name", path, &container.name));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "image", path, &container.image));
  KUBESCHED_RETURN_IF_ERROR(DecodeContainerResources(value, path, &container));
  KUBESCHED_RETURN_IF_ERROR(
      ForEachElement(value, "ports", path, [&](const Json& element, const Path& at) {
        absl::StatusOr<ContainerPort> port = DecodeContainerPort(element, at);
        if (!port.ok()) return port.status();
        container.ports.push_back(*std::move(port));
        return absl::OkStatus();
      }));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "restartPolicy", path, &container.restart_policy));
  return container;
}

absl::Status DecodeContainers(const Json& spec, std::string_view name, const Path& path,
                              std::vector<Container>* out) {
  return ForEachElement(spec, name, path, [&](const Json& element, const Path& at) {
    absl::StatusOr<Container> container = DecodeContainer(element, at);
    if (!container.ok()) return container.status();
    out->push_back(*std::move(container));
    return absl::OkStatus();
  });
}

absl::StatusOr<Toleration> DecodeToleration(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  Toleration t;
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "key", path, &t.key));
  KUBESCHED_RETURN_IF_ERROR(ReadEnum(value, "operator", path,
                                     {{"", TolerationOperator::kEqual},
                                      {"Equal", TolerationOperator::kEqual},
                                      {"Exists", TolerationOperator::kExists}},
                                     &t.op));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "value", path, &t.value));
  KUBESCHED_RETURN_IF_ERROR(ReadEnum(value, "effect", path,
                                     {{"", TaintEffect::kNone},
                                      {"NoSchedule", TaintEffect::kNoSchedule},
                                      {"PreferNoSchedule", TaintEffect::kPreferNoSchedule},
                                      {"NoExecute", TaintEffect::kNoExecute}},
                                     &t.effect));
  KUBESCHED_RETURN_IF_ERROR(ReadInt64(value, "tolerationSeconds", path, &t.toleration_seconds));
  return t;
}

absl::StatusOr<TopologySpreadConstraint> DecodeSpreadConstraint(const Json& value,
                                                                const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  TopologySpreadConstraint c;
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(value, "maxSkew", path, &c.max_skew));
  std::string topology_key;
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "topologyKey", path, &topology_key));
  c.topology_key = Intern(topology_key);
  KUBESCHED_RETURN_IF_ERROR(
      ReadEnum(value, "whenUnsatisfiable", path,
               {{"DoNotSchedule", UnsatisfiableConstraintAction::kDoNotSchedule},
                {"ScheduleAnyway", UnsatisfiableConstraintAction::kScheduleAnyway}},
               &c.when_unsatisfiable));
  KUBESCHED_RETURN_IF_ERROR(
      ReadOptionalLabelSelector(value, "labelSelector", path, &c.label_selector));
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(value, "minDomains", path, &c.min_domains));
  const auto policies = {std::pair{std::string_view("Honor"), NodeInclusionPolicy::kHonor},
                         std::pair{std::string_view("Ignore"), NodeInclusionPolicy::kIgnore}};
  KUBESCHED_RETURN_IF_ERROR(
      ReadOptionalEnum(value, "nodeAffinityPolicy", path, policies, &c.node_affinity_policy));
  KUBESCHED_RETURN_IF_ERROR(
      ReadOptionalEnum(value, "nodeTaintsPolicy", path, policies, &c.node_taints_policy));
  KUBESCHED_RETURN_IF_ERROR(ReadSymbols(value, "matchLabelKeys", path, &c.match_label_keys));
  return c;
}

// Fields that say where and how the pod may run.
absl::Status DecodePlacement(const Json& spec, const Path& path, PodSpec* out) {
  KUBESCHED_RETURN_IF_ERROR(ReadLabelSet(spec, "nodeSelector", path, &out->node_selector));
  if (const Json* affinity = Find(spec, "affinity")) {
    absl::StatusOr<Affinity> decoded = DecodeAffinity(*affinity, path.Field("affinity"));
    if (!decoded.ok()) return decoded.status();
    out->affinity = *std::move(decoded);
  }
  std::vector<Toleration> tolerations;
  KUBESCHED_RETURN_IF_ERROR(ReadArray(spec, "tolerations", path, DecodeToleration, &tolerations));
  out->tolerations = InternList(std::move(tolerations));
  KUBESCHED_RETURN_IF_ERROR(ReadArray(spec, "topologySpreadConstraints", path,
                                      DecodeSpreadConstraint, &out->topology_spread_constraints));
  KUBESCHED_RETURN_IF_ERROR(ReadString(spec, "nodeName", path, &out->node_name));
  KUBESCHED_RETURN_IF_ERROR(ReadBool(spec, "hostNetwork", path, &out->host_network));
  return absl::OkStatus();
}

absl::Status DecodePriorityFields(const Json& spec, const Path& path, PodSpec* out) {
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(spec, "priority", path, &out->priority));
  KUBESCHED_RETURN_IF_ERROR(ReadString(spec, "priorityClassName", path, &out->priority_class_name));
  KUBESCHED_RETURN_IF_ERROR(
      ReadOptionalEnum(spec, "preemptionPolicy", path,
                       {{"PreemptLowerPriority", PreemptionPolicy::kPreemptLowerPriority},
                        {"Never", PreemptionPolicy::kNever}},
                       &out->preemption_policy));
  KUBESCHED_RETURN_IF_ERROR(ReadString(spec, "schedulerName", path, &out->scheduler_name));
  // The API server defaults an empty schedulerName; dumps made without it must agree.
  if (out->scheduler_name.empty()) out->scheduler_name = kDefaultSchedulerName;
  return absl::OkStatus();
}

absl::StatusOr<PodResourceClaim> DecodePodResourceClaim(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  PodResourceClaim claim;
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "name", path, &claim.name));
  KUBESCHED_RETURN_IF_ERROR(
      ReadString(value, "resourceClaimName", path, &claim.resource_claim_name));
  KUBESCHED_RETURN_IF_ERROR(
      ReadString(value, "resourceClaimTemplateName", path, &claim.resource_claim_template_name));
  return claim;
}

// What the pod needs besides room: volumes, resource claims, and the gates that hold it back.
absl::Status DecodeNeeds(const Json& spec, const Path& path, PodSpec* out) {
  KUBESCHED_RETURN_IF_ERROR(DecodePodVolumes(spec, path, &out->volumes));
  KUBESCHED_RETURN_IF_ERROR(
      ForEachElement(spec, "schedulingGates", path, [&](const Json& element, const Path& at) {
        KUBESCHED_RETURN_IF_ERROR(ExpectObject(element, at));
        std::string name;
        KUBESCHED_RETURN_IF_ERROR(ReadString(element, "name", at, &name));
        out->scheduling_gates.push_back(std::move(name));
        return absl::OkStatus();
      }));
  return ReadArray(spec, "resourceClaims", path, DecodePodResourceClaim, &out->resource_claims);
}

absl::Status DecodePodSpec(const Json& pod, PodSpec* out) {
  const Path path("spec");
  const Json* spec = Find(pod, "spec");
  if (spec == nullptr) {
    out->scheduler_name = kDefaultSchedulerName;
    return absl::OkStatus();
  }
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(*spec, path));
  std::vector<Container> containers;
  KUBESCHED_RETURN_IF_ERROR(DecodeContainers(*spec, "containers", path, &containers));
  out->containers = InternList(std::move(containers));
  std::vector<Container> init_containers;
  KUBESCHED_RETURN_IF_ERROR(DecodeContainers(*spec, "initContainers", path, &init_containers));
  out->init_containers = InternList(std::move(init_containers));
  KUBESCHED_RETURN_IF_ERROR(ReadResources(*spec, "overhead", path, &out->overhead));
  KUBESCHED_RETURN_IF_ERROR(DecodePlacement(*spec, path, out));
  KUBESCHED_RETURN_IF_ERROR(DecodeNeeds(*spec, path, out));
  return DecodePriorityFields(*spec, path, out);
}

absl::StatusOr<PodCondition> DecodePodCondition(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  PodCondition condition;
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "type", path, &condition.type));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "status", path, &condition.status));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "reason", path, &condition.reason));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "message", path, &condition.message));
  return condition;
}

absl::StatusOr<PodResourceClaimStatus> DecodeClaimStatus(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  PodResourceClaimStatus status;
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "name", path, &status.name));
  if (status.name.empty()) return path.Field("name").Error("missing or empty");
  KUBESCHED_RETURN_IF_ERROR(
      ReadString(value, "resourceClaimName", path, &status.resource_claim_name));
  return status;
}

absl::Status DecodePodStatus(const Json& pod, PodStatus* out) {
  const Path path("status");
  const Json* status = Find(pod, "status");
  if (status == nullptr) return absl::OkStatus();
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(*status, path));
  KUBESCHED_RETURN_IF_ERROR(ReadEnum(*status, "phase", path,
                                     {{"Pending", PodPhase::kPending},
                                      {"Running", PodPhase::kRunning},
                                      {"Succeeded", PodPhase::kSucceeded},
                                      {"Failed", PodPhase::kFailed},
                                      {"Unknown", PodPhase::kUnknown}},
                                     &out->phase));
  KUBESCHED_RETURN_IF_ERROR(
      ReadArray(*status, "conditions", path, DecodePodCondition, &out->conditions));
  KUBESCHED_RETURN_IF_ERROR(
      ReadString(*status, "nominatedNodeName", path, &out->nominated_node_name));
  KUBESCHED_RETURN_IF_ERROR(ReadArray(*status, "resourceClaimStatuses", path, DecodeClaimStatus,
                                      &out->resource_claim_statuses));
  return ReadTime(*status, "startTime", path, &out->start_time);
}

}  // namespace

absl::StatusOr<Pod> DecodePod(const Json& object) {
  Pod pod;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/true, &pod.meta));
  KUBESCHED_RETURN_IF_ERROR(DecodePodSpec(object, &pod.spec));
  KUBESCHED_RETURN_IF_ERROR(DecodePodStatus(object, &pod.status));
  return pod;
}

}  // namespace kubesched::api::internal

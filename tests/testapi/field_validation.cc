#include "tests/testapi/field_validation.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/util/strings.h"
#include "tests/testapi/store.h"

namespace kubesched::testapi {
namespace {

// A known field and what its value is: "" anything (not checked further), "T" an object of
// schema T, "[]T" an array of T.
struct KnownField {
  std::string_view name;
  std::string_view schema;
};
using Schema = std::vector<KnownField>;

// Field lists from k8s.io/api (v1.32).
const Schema kObjectMetaFields = {{"annotations", ""},
                                  {"creationTimestamp", ""},
                                  {"deletionGracePeriodSeconds", ""},
                                  {"deletionTimestamp", ""},
                                  {"finalizers", ""},
                                  {"generateName", ""},
                                  {"generation", ""},
                                  {"labels", ""},
                                  {"managedFields", ""},
                                  {"name", ""},
                                  {"namespace", ""},
                                  {"ownerReferences", ""},
                                  {"resourceVersion", ""},
                                  {"selfLink", ""},
                                  {"uid", ""}};
const Schema kPodFields = {{"apiVersion", ""},
                           {"kind", ""},
                           {"metadata", "ObjectMeta"},
                           {"spec", "PodSpec"},
                           {"status", ""}};
const Schema kPodSpecFields = {{"activeDeadlineSeconds", ""},
                               {"affinity", ""},
                               {"automountServiceAccountToken", ""},
                               {"containers", "[]Container"},
                               {"dnsConfig", ""},
                               {"dnsPolicy", ""},
                               {"enableServiceLinks", ""},
                               {"ephemeralContainers", ""},
                               {"hostAliases", ""},
                               {"hostIPC", ""},
                               {"hostNetwork", ""},
                               {"hostPID", ""},
                               {"hostUsers", ""},
                               {"hostname", ""},
                               {"imagePullSecrets", ""},
                               {"initContainers", "[]Container"},
                               {"nodeName", ""},
                               {"nodeSelector", ""},
                               {"os", ""},
                               {"overhead", ""},
                               {"preemptionPolicy", ""},
                               {"priority", ""},
                               {"priorityClassName", ""},
                               {"readinessGates", ""},
                               {"resourceClaims", ""},
                               {"resources", "ResourceRequirements"},
                               {"restartPolicy", ""},
                               {"runtimeClassName", ""},
                               {"schedulerName", ""},
                               {"schedulingGates", ""},
                               {"securityContext", ""},
                               {"serviceAccount", ""},
                               {"serviceAccountName", ""},
                               {"setHostnameAsFQDN", ""},
                               {"shareProcessNamespace", ""},
                               {"subdomain", ""},
                               {"terminationGracePeriodSeconds", ""},
                               {"tolerations", "[]Toleration"},
                               {"topologySpreadConstraints", ""},
                               {"volumes", ""}};
const Schema kContainerFields = {{"args", ""},
                                 {"command", ""},
                                 {"env", ""},
                                 {"envFrom", ""},
                                 {"image", ""},
                                 {"imagePullPolicy", ""},
                                 {"lifecycle", ""},
                                 {"livenessProbe", ""},
                                 {"name", ""},
                                 {"ports", "[]ContainerPort"},
                                 {"readinessProbe", ""},
                                 {"resizePolicy", ""},
                                 {"resources", "ResourceRequirements"},
                                 {"restartPolicy", ""},
                                 {"securityContext", ""},
                                 {"startupProbe", ""},
                                 {"stdin", ""},
                                 {"stdinOnce", ""},
                                 {"terminationMessagePath", ""},
                                 {"terminationMessagePolicy", ""},
                                 {"tty", ""},
                                 {"volumeDevices", ""},
                                 {"volumeMounts", ""},
                                 {"workingDir", ""}};
const Schema kResourceRequirementsFields = {{"claims", ""}, {"limits", ""}, {"requests", ""}};
const Schema kContainerPortFields = {
    {"containerPort", ""}, {"hostIP", ""}, {"hostPort", ""}, {"name", ""}, {"protocol", ""}};
const Schema kTolerationFields = {
    {"effect", ""}, {"key", ""}, {"operator", ""}, {"tolerationSeconds", ""}, {"value", ""}};
const Schema kNodeFields = {{"apiVersion", ""},
                            {"kind", ""},
                            {"metadata", "ObjectMeta"},
                            {"spec", "NodeSpec"},
                            {"status", ""}};
const Schema kNodeSpecFields = {{"configSource", ""}, {"externalID", ""}, {"podCIDR", ""},
                                {"podCIDRs", ""},     {"providerID", ""}, {"taints", "[]Taint"},
                                {"unschedulable", ""}};
const Schema kTaintFields = {{"effect", ""}, {"key", ""}, {"timeAdded", ""}, {"value", ""}};
const Schema kNamespaceFields = {{"apiVersion", ""},
                                 {"kind", ""},
                                 {"metadata", "ObjectMeta"},
                                 {"spec", "NamespaceSpec"},
                                 {"status", ""}};
const Schema kNamespaceSpecFields = {{"finalizers", ""}};
const Schema kConfigMapFields = {{"apiVersion", ""}, {"binaryData", ""},
                                 {"data", ""},       {"immutable", ""},
                                 {"kind", ""},       {"metadata", "ObjectMeta"}};
const Schema kSecretFields = {
    {"apiVersion", ""},         {"data", ""},       {"immutable", ""}, {"kind", ""},
    {"metadata", "ObjectMeta"}, {"stringData", ""}, {"type", ""}};

const std::map<std::string_view, const Schema*>& Schemas() {
  static const std::map<std::string_view, const Schema*> schemas = {
      {"ObjectMeta", &kObjectMetaFields},
      {"Pod", &kPodFields},
      {"PodSpec", &kPodSpecFields},
      {"Container", &kContainerFields},
      {"ResourceRequirements", &kResourceRequirementsFields},
      {"ContainerPort", &kContainerPortFields},
      {"Toleration", &kTolerationFields},
      {"Node", &kNodeFields},
      {"NodeSpec", &kNodeSpecFields},
      {"Taint", &kTaintFields},
      {"Namespace", &kNamespaceFields},
      {"NamespaceSpec", &kNamespaceSpecFields},
      {"ConfigMap", &kConfigMapFields},
      {"Secret", &kSecretFields},
  };
  return schemas;
}

void Check(const rapidjson::Value& value, std::string_view schema_name, const std::string& path,
           std::vector<std::string>& unknown) {
  if (schema_name.empty()) return;
  if (schema_name.starts_with("[]")) {
    if (!value.IsArray()) return;
    for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
      Check(value[i], schema_name.substr(2), absl::StrCat(path, "[", i, "]"), unknown);
    }
    return;
  }
  auto schema = Schemas().find(schema_name);
  if (schema == Schemas().end() || !value.IsObject()) return;
  const Schema& fields = *schema->second;
  for (const auto& member : value.GetObject()) {
    std::string_view name(member.name.GetString(), member.name.GetStringLength());
    auto known = std::find_if(fields.begin(), fields.end(),
                              [&](const KnownField& field) { return field.name == name; });
    std::string child =
        path.empty() ? std::string(name) : absl::StrCat(path, ".", util::Absl(name));
    if (known == fields.end()) {
      unknown.push_back(std::move(child));
    } else {
      Check(member.value, known->schema, child, unknown);
    }
  }
}

std::string GroupVersionPath(const ResourceType& type) {
  return type.group.empty() ? "api/" + type.version
                            : absl::StrCat("apis/", type.group, "/", type.version);
}

}  // namespace

std::string OpenApiV3Root() {
  std::vector<std::string> paths;
  std::vector<std::string> seen;
  for (const ResourceType& type : AllResourceTypes()) {
    const std::string path = GroupVersionPath(type);
    if (std::find(seen.begin(), seen.end(), path) != seen.end()) continue;
    seen.push_back(path);
    paths.push_back(absl::StrCat("\"", path, "\":{\"serverRelativeURL\":\"/openapi/v3/", path,
                                 "?hash=kubesched-testapi\"}"));
  }
  return absl::StrCat("{\"paths\":{", absl::StrJoin(paths, ","), "}}");
}

std::string OpenApiV2Protobuf() {
  // Document{swagger: "2.0" (1), info (2): Info{title (1), version (2)}}.
  auto field = [](int number, std::string_view bytes) {
    return absl::StrCat(std::string(1, static_cast<char>(number << 3 | 2)),
                        std::string(1, static_cast<char>(bytes.size())), util::Absl(bytes));
  };
  return absl::StrCat(field(1, "2.0"), field(2, field(1, "Kubernetes") + field(2, "v1.32.0")));
}

std::optional<std::string> OpenApiV3GroupVersion(std::string_view path) {
  std::vector<std::string> operations;
  for (const ResourceType& type : AllResourceTypes()) {
    if (GroupVersionPath(type) != path) continue;
    const std::string item =
        absl::StrCat("/", util::Absl(path), type.namespaced ? "/namespaces/{namespace}/" : "/",
                     type.plural, "/{name}");
    operations.push_back(absl::StrCat(
        "\"", item, "\":{\"patch\":{\"operationId\":\"patch", type.kind,
        "\",\"x-kubernetes-group-version-kind\":{\"group\":\"", type.group, "\",\"version\":\"",
        type.version, "\",\"kind\":\"", type.kind,
        "\"},\"parameters\":[{\"name\":\"fieldValidation\",\"in\":\"query\",\"schema\":"
        "{\"type\":\"string\",\"uniqueItems\":true}}],\"responses\":{}}}"));
  }
  if (operations.empty()) return std::nullopt;
  return absl::StrCat(
      "{\"openapi\":\"3.0.0\",\"info\":{\"title\":\"Kubernetes\",\"version\":\"v1.32.0\"},"
      "\"paths\":{",
      absl::StrJoin(operations, ","), "}}");
}

absl::StatusOr<FieldValidation> ParseFieldValidation(std::string_view param) {
  if (param.empty() || param == "Warn") return FieldValidation::kWarn;
  if (param == "Strict") return FieldValidation::kStrict;
  if (param == "Ignore") return FieldValidation::kIgnore;
  return absl::InvalidArgumentError(
      absl::StrCat("fieldValidation parameter unsupported: ", util::Absl(param),
                   " (expected one of: Ignore, Warn, Strict)"));
}

absl::Status ValidateFields(FieldValidation mode, const ResourceType& type,
                            const rapidjson::Value& object, std::vector<std::string>* warnings) {
  if (mode == FieldValidation::kIgnore) return absl::OkStatus();
  std::vector<std::string> unknown = UnknownFields(type, object);
  if (unknown.empty()) return absl::OkStatus();
  std::vector<std::string> quoted;
  for (const std::string& field : unknown)
    quoted.push_back(absl::StrCat("unknown field \"", field, "\""));
  if (mode == FieldValidation::kWarn) {
    warnings->insert(warnings->end(), quoted.begin(), quoted.end());
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(type.kind, " in version \"", type.version, "\" cannot be handled as a ",
                   type.kind, ": strict decoding error: ", absl::StrJoin(quoted, ", ")));
}

std::vector<std::string> UnknownFields(const ResourceType& type, const rapidjson::Value& object) {
  std::vector<std::string> unknown;
  const bool core = type.group.empty();
  if (core && Schemas().contains(type.kind)) {
    Check(object, type.kind, "", unknown);
  } else if (HasMember(object, "metadata")) {
    Check(object["metadata"], "ObjectMeta", "metadata", unknown);
  }
  return unknown;
}

}  // namespace kubesched::testapi

#include "bench/scale_shape.h"

#include "absl/strings/str_cat.h"

namespace kubesched::bench {
namespace {

constexpr int kZones = 5;
constexpr int kRackSize = 40;
constexpr char kGpuResource[] = "nvidia.com/gpu";

// Every pod gets these from the API server's DefaultTolerationSeconds admission plugin.
constexpr char kDefaultTolerations[] =
    R"({"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",)"
    R"("tolerationSeconds":300},)"
    R"({"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute",)"
    R"("tolerationSeconds":300})";
constexpr char kGpuToleration[] =
    R"(,{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"})";

}  // namespace

std::string ShapedNode(int index) {
  const bool gpu = IsShapedGpuNode(index);
  const std::string labels = absl::StrCat(
      R"("kubernetes.io/hostname":"node-)", index, R"(","kubernetes.io/os":"linux",)",
      R"("topology.kubernetes.io/zone":"zone-)", index % kZones, R"(",)",
      R"("topology.kubernetes.io/rack":"rack-)", index / kRackSize, R"(",)",
      R"("node.kubernetes.io/instance-type":")", gpu ? "g5.4xlarge" : "m5.4xlarge", "\"");
  const std::string spec =
      gpu ? R"({"taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]})"
          : "{}";
  const std::string gpu_capacity = gpu ? absl::StrCat(R"(,")", kGpuResource, R"(":"1")") : "";
  const std::string resources =
      absl::StrCat(R"({"pods":"110","cpu":"16","memory":"64Gi")", gpu_capacity, "}");
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-)", index,
                      R"(","labels":{)", labels, R"(}},"spec":)", spec, R"(,"status":{"capacity":)",
                      resources, R"(,"allocatable":)", resources, "}}");
}

std::string ShapedPod(const std::string& name, const std::string& namespace_name, int ordinal,
                      const std::string& node_name, bool on_gpu_node) {
  const std::string app = absl::StrCat("app-", ordinal % 50);
  const std::string metadata = absl::StrCat(
      R"("name":")", name, R"(","namespace":")", namespace_name, R"(","labels":{"app":")", app,
      R"(","tier":")", ordinal % 3 == 0 ? "web" : "api", R"(","release":"stable"})");
  const std::string gpu_limit =
      on_gpu_node ? absl::StrCat(R"(,"limits":{")", kGpuResource, R"(":"1"})") : "";
  const std::string app_requests =
      on_gpu_node ? absl::StrCat(R"({"cpu":"250m","memory":"512Mi",")", kGpuResource, R"(":"1"})")
                  : R"({"cpu":"250m","memory":"512Mi"})";
  std::string spec = absl::StrCat(
      R"("schedulerName":"kubesched","containers":[)",
      R"({"name":"app","image":"registry.example.com/)", app, R"(:1.0",)",
      R"("resources":{"requests":)", app_requests, gpu_limit, "}},",
      R"({"name":"proxy","image":"registry.example.com/proxy:2.3",)",
      R"("resources":{"requests":{"cpu":"50m","memory":"64Mi"}}}],)", R"("tolerations":[)",
      kDefaultTolerations, on_gpu_node ? kGpuToleration : "", "]");
  if (!node_name.empty()) absl::StrAppend(&spec, R"(,"nodeName":")", node_name, "\"");
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{)", metadata, R"(},"spec":{)",
                      spec, R"(},"status":{"phase":")", node_name.empty() ? "Pending" : "Running",
                      "\"}}");
}

}  // namespace kubesched::bench

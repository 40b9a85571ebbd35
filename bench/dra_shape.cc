#include "bench/dra_shape.h"

#include "absl/strings/str_cat.h"

namespace kubesched::bench {
namespace {

constexpr char kDriver[] = "gpu.example.com";
constexpr const char* kModels[] = {"A100", "H100", "L40S"};
constexpr int kModelCount = 3;
constexpr int kMaxGpusPerPod = 8;

std::string TemplateName(int model, int count) {
  return absl::StrCat("gpu-", kModels[model], "-", count);
}

std::string Template(const std::string& namespace_name, int model, int count) {
  return absl::StrCat(
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":{"name":")",
      TemplateName(model, count), R"(","namespace":")", namespace_name,
      R"("},"spec":{"spec":{"devices":{"requests":[{"name":"gpus","exactly":{)",
      R"("deviceClassName":")", kDriver, R"(","count":)", count,
      R"(,"selectors":[{"cel":{"expression":"device.attributes[\")", kDriver, R"(\"].model == \")",
      kModels[model], R"(\""}}]}}]}}}})");
}

}  // namespace

std::vector<std::string> DraClassAndTemplates(const std::string& namespace_name) {
  std::vector<std::string> objects = {absl::StrCat(
      R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":")", kDriver,
      R"("},"spec":{"selectors":[{"cel":{"expression":"device.driver == \")", kDriver,
      R"(\""}}]}})")};
  for (int model = 0; model < kModelCount; ++model) {
    for (int count = 1; count <= kMaxGpusPerPod; ++count) {
      objects.push_back(Template(namespace_name, model, count));
    }
  }
  return objects;
}

std::string DraNodeSlice(int index, int gpus) {
  std::string devices;
  for (int gpu = 0; gpu < gpus; ++gpu) {
    absl::StrAppend(&devices, gpu == 0 ? "" : ",", R"({"name":"gpu-)", gpu,
                    R"(","attributes":{"model":{"string":")", kModels[index % kModelCount],
                    R"("},"index":{"int":)", gpu, R"(}},"capacity":{"memory":{"value":"80Gi"}}})");
  }
  return absl::StrCat(
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"node-)",
      index, R"(-gpus"},"spec":{"driver":")", kDriver, R"(","nodeName":"node-)", index,
      R"(","pool":{"name":"node-)", index, R"(","generation":1,"resourceSliceCount":1},)",
      R"("devices":[)", devices, "]}}");
}

std::string DraPodClaims(int ordinal) {
  const int model = ordinal % kModelCount;
  const int count = 1 + (ordinal / kModelCount) % kMaxGpusPerPod;
  return absl::StrCat(R"(,"resourceClaims":[{"name":"gpus","resourceClaimTemplateName":")",
                      TemplateName(model, count), R"("}])");
}

}  // namespace kubesched::bench

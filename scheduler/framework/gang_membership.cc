#include "scheduler/framework/gang_membership.h"

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kubesched::framework {
namespace {

const std::string* FindAnnotation(const api::ObjectMeta& meta, const char* key) {
  auto it = meta.annotations.find(key);
  return it == meta.annotations.end() ? nullptr : &it->second;
}

std::optional<std::string> FindLabel(const api::ObjectMeta& meta, const char* key) {
  const api::Symbol symbol = api::FindSymbol(key);
  if (symbol == api::kNoSuchSymbol) return std::nullopt;
  const std::optional<api::Symbol> value = meta.labels.Get(symbol);
  if (!value.has_value()) return std::nullopt;
  return std::string(api::SymbolText(*value));
}

}  // namespace

GangMembership GangMembershipOf(const api::Pod& pod) {
  GangMembership gang;
  const std::optional<std::string> label_value = FindLabel(pod.meta, kPodGroupLabel);
  const std::string* label = label_value.has_value() ? &*label_value : nullptr;
  const std::string* annotation = FindAnnotation(pod.meta, kPodGroupAnnotation);
  if (label == nullptr && annotation == nullptr) return gang;
  const std::string& ns = pod.meta.namespace_name;
  if (label != nullptr && annotation != nullptr && *label != *annotation) {
    gang.name = *label;
    gang.key = absl::StrCat(ns, "/", *label);
    gang.error = absl::StrCat("the pod names two pod groups: label ", kPodGroupLabel, "=", *label,
                              " and annotation ", kPodGroupAnnotation, "=", *annotation);
    return gang;
  }
  gang.name = label != nullptr ? *label : *annotation;
  gang.key = absl::StrCat(ns, "/", gang.name);
  if (gang.name.empty()) {
    gang.error =
        absl::StrCat("the pod group name (",
                     label != nullptr ? kPodGroupLabel : kPodGroupAnnotation, ") is empty");
    return gang;
  }
  if (label != nullptr) return gang;  // the PodGroup object says the rest
  gang.implicit = true;
  const std::string* min_member = FindAnnotation(pod.meta, kPodGroupMinMemberAnnotation);
  if (min_member == nullptr) {
    gang.error =
        absl::StrCat("annotation ", kPodGroupAnnotation, " needs ", kPodGroupMinMemberAnnotation,
                     " (the number of pods to place together)");
  } else if (!absl::SimpleAtoi(*min_member, &gang.min_member) || gang.min_member < 1) {
    gang.error = absl::StrCat("annotation ", kPodGroupMinMemberAnnotation, ": \"", *min_member,
                              "\" is not a whole number of at least 1");
    gang.min_member = 0;
  }
  return gang;
}

}  // namespace kubesched::framework

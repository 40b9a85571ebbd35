#pragma once

// What the volume plugins (VolumeZone, VolumeRestrictions, NodeVolumeLimits) read the same way
// from the volume objects, as upstream's storage helpers.

#include <string_view>
#include <utility>

#include "scheduler/api/storage.h"

namespace kubesched::plugins::helper {

// A claim's storage class as upstream's GetPersistentVolumeClaimClass: the beta annotation
// volume.beta.kubernetes.io/storage-class first, then spec.storageClassName; "" for none (the
// default class is the API server's business, not the scheduler's). The view lives as long as
// `claim`.
inline std::string_view ClaimClassName(const api::PersistentVolumeClaim& claim) {
  const auto beta = claim.meta.annotations.find("volume.beta.kubernetes.io/storage-class");
  if (beta != claim.meta.annotations.end()) return beta->second;
  return claim.storage_class_name.has_value() ? std::string_view(*claim.storage_class_name)
                                              : std::string_view();
}

// Calls fn(part) for each part of `text` split at every `separator`, as Go's strings.Split: ""
// gives one empty part, "a__" two. Views into `text`.
template <typename Fn>
void ForEachPart(std::string_view text, std::string_view separator, Fn&& fn) {
  while (true) {
    const size_t at = text.find(separator);
    if (at == std::string_view::npos) break;
    fn(text.substr(0, at));
    text.remove_prefix(at + separator.size());
  }
  std::forward<Fn>(fn)(text);
}

}  // namespace kubesched::plugins::helper

#include "scheduler/metrics/extension_point.h"

namespace kubesched::metrics {

std::string_view ExtensionPointName(ExtensionPoint point) {
  switch (point) {
    case ExtensionPoint::kPreFilter:
      return "PreFilter";
    case ExtensionPoint::kFilter:
      return "Filter";
    case ExtensionPoint::kPostFilter:
      return "PostFilter";
    case ExtensionPoint::kPreScore:
      return "PreScore";
    case ExtensionPoint::kScore:
      return "Score";
    case ExtensionPoint::kScoreExtensionNormalize:
      return "ScoreExtensionNormalize";
    case ExtensionPoint::kReserve:
      return "Reserve";
    case ExtensionPoint::kUnreserve:
      return "Unreserve";
    case ExtensionPoint::kPermit:
      return "Permit";
    case ExtensionPoint::kPreBind:
      return "PreBind";
    case ExtensionPoint::kBind:
      return "Bind";
    case ExtensionPoint::kPostBind:
      return "PostBind";
  }
  return "Unknown";
}

}  // namespace kubesched::metrics

#pragma once

// The extension points as the metrics name them (upstream's metrics.go constants). Kept apart
// from the Prometheus types so that the framework runtime can name a point without them.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kubesched::metrics {

enum class ExtensionPoint : uint8_t {
  kPreFilter,
  kFilter,
  kPostFilter,
  kPreScore,
  kScore,
  kScoreExtensionNormalize,
  kReserve,
  kUnreserve,
  kPermit,
  kPreBind,
  kBind,
  kPostBind,
};
inline constexpr size_t kExtensionPointCount = 12;

// "PreFilter", "Filter", ..., "ScoreExtensionNormalize", ..., "PostBind".
std::string_view ExtensionPointName(ExtensionPoint point);

}  // namespace kubesched::metrics

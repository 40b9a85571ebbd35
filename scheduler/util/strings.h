#pragma once

// Debian's abseil is built with its own absl::string_view (not std::string_view), so std views
// cannot be passed to absl::StrCat/StrJoin/StrFormat directly. These adapters are the one place
// that bridges the two.

#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace kubesched::util {

inline absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view Std(absl::string_view s) { return std::string_view(s.data(), s.size()); }

// Joins views with a separator.
template <typename Range>
std::string Join(const Range& parts, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& part : parts) {
    if (!first) out.append(separator);
    first = false;
    out.append(std::string_view(part));
  }
  return out;
}

}  // namespace kubesched::util

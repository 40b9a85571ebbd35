#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kubesched::api {

// A Kubernetes resource quantity ("100m", "1.5Gi", "2e3", "1k", "0.1"), held exactly as an int64
// count of milli-units. Values that need sub-milli precision are rounded up to the next milli-unit
// (as upstream's MilliValue does). The representable range is about ±9.2e15 units (8 PiB of
// bytes); larger values are rejected as overflow rather than wrapped.
class Quantity {
 public:
  // How the text was written; kept so that a quantity prints back in the same family.
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;

  // Parses the Kubernetes quantity grammar: sign, digits with optional fraction, then an optional
  // suffix (Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or e/E exponent). Malformed text and overflow
  // are InvalidArgument errors naming the text.
  static absl::StatusOr<Quantity> Parse(std::string_view text);
  static Quantity FromMilli(int64_t milli, Format format = Format::kDecimalSI);
  static Quantity FromValue(int64_t value, Format format = Format::kDecimalSI);

  int64_t milli() const { return milli_; }
  // The whole-unit value, rounded up (upstream's Value()).
  int64_t ValueCeil() const;
  Format format() const { return format_; }

  // Canonical Kubernetes text: "100m", "2", "1536Mi", "1500M"...
  std::string ToString() const;

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.milli_ == b.milli_; }

 private:
  int64_t milli_ = 0;
  Format format_ = Format::kDecimalSI;
};

}  // namespace kubesched::api

// libFuzzer target: the quantity parser, and the canonical text of what it accepts, which must
// parse back to the same value.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "scheduler/api/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<kubesched::api::Quantity> parsed = kubesched::api::Quantity::Parse(text);
  if (!parsed.ok()) return 0;
  static_cast<void>(parsed->ValueCeil());
  const std::string canonical = parsed->ToString();
  const absl::StatusOr<kubesched::api::Quantity> again = kubesched::api::Quantity::Parse(canonical);
  if (!again.ok() || again->milli() != parsed->milli()) __builtin_trap();
  return 0;
}

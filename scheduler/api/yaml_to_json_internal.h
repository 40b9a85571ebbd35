#pragma once

// YAML → JSON DOM conversion for the decoders; not part of the api contract.

#include <string_view>

#include "absl/status/status.h"
#include "rapidjson/document.h"

namespace kubesched::api::internal {

// Converts (multi-document) YAML text into `out`, whose root becomes an array with one value per
// YAML document (an empty document becomes null). Plain scalars are resolved with the YAML 1.2
// core schema (null, bool, int, float, else string); quoted scalars stay strings. Mapping keys
// must be scalars and are kept as their text. Aliases are expanded, within a size budget
// proportional to the input.
//
// Never throws. A document that does not parse is an InvalidArgument error naming `source` and
// the line and column.
absl::Status YamlToJson(std::string_view text, std::string_view source, rapidjson::Document* out);

}  // namespace kubesched::api::internal

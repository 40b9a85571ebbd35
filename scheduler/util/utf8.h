#pragma once

// UTF-8 checks for text that leaves the process as JSON. Object names and messages come from
// input files and the API server unchecked; JSON must be valid UTF-8.

#include <string>
#include <string_view>

namespace kubesched::util {

// True when `s` is well-formed UTF-8: shortest encodings only, no surrogates, at most U+10FFFF.
bool IsValidUtf8(std::string_view s);

// `s` with every byte that is not part of a well-formed sequence replaced by U+FFFD, as Go's
// encoding/json (and so kubectl) writes such strings. Valid text comes back unchanged.
std::string ToValidUtf8(std::string_view s);

}  // namespace kubesched::util

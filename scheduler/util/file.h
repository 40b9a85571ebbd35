#pragma once

// Reading whole files that come from the command line or a mounted volume, with a size cap: a
// path such as /dev/zero or a runaway pipe must end in an error, not in std::bad_alloc.

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace kubesched::util {

// Reads all of `path` (a regular file, a pipe, a device) if it holds at most `max_bytes`.
// Errors do not name the path; callers do. NotFound when the file does not exist; InvalidArgument
// for a directory ("is a directory"), any other open or read failure (the system's message) and
// a file over the cap ("larger than the limit of N bytes"), which is never read past the cap.
absl::StatusOr<std::string> ReadFileAtMost(const std::string& path, size_t max_bytes);

}  // namespace kubesched::util

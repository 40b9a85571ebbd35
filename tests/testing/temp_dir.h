#pragma once

// Temporary directories for tests, behind a compiled interface: <filesystem> stays out of the
// headers the test binaries precompile (its private inline functions name symbols libstdc++
// does not export, which KUBESCHED_PCH_CODEGEN would compile).

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kubesched::testing {

// Creates a fresh directory <system temporary directory>/<prefix>-<pid>-<n> and returns its path.
absl::StatusOr<std::string> MakeTempDirectory(std::string_view prefix);
// Removes `path` and everything under it; a path that does not exist is not an error.
absl::Status RemoveTree(const std::string& path);
// Removes one file; a file that does not exist is not an error.
absl::Status RemoveFile(const std::string& path);

}  // namespace kubesched::testing

#include "tests/testing/temp_dir.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <system_error>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace kubesched::testing {

absl::StatusOr<std::string> MakeTempDirectory(std::string_view prefix) {
  static std::atomic<int> counter{0};
  std::error_code error;
  const std::filesystem::path base = std::filesystem::temp_directory_path(error);
  if (error) return absl::InternalError(absl::StrCat("temporary directory: ", error.message()));
  const std::string name = std::string(prefix) + "-" + std::to_string(getpid()) + "-" +
                           std::to_string(counter.fetch_add(1));
  const std::string dir = (base / name).string();
  std::filesystem::create_directories(dir, error);
  if (error) return absl::InternalError(absl::StrCat("create ", dir, ": ", error.message()));
  return dir;
}

absl::Status RemoveTree(const std::string& path) {
  std::error_code error;
  std::filesystem::remove_all(path, error);
  if (error) return absl::InternalError(absl::StrCat("remove ", path, ": ", error.message()));
  return absl::OkStatus();
}

absl::Status RemoveFile(const std::string& path) {
  std::error_code error;
  std::filesystem::remove(path, error);
  if (error) return absl::InternalError(absl::StrCat("remove ", path, ": ", error.message()));
  return absl::OkStatus();
}

}  // namespace kubesched::testing

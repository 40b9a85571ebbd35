#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace kubesched::testing {

// A file with the given contents in a fresh temporary directory, removed on destruction.
class TempFile {
 public:
  explicit TempFile(const std::string& contents, const std::string& name = "input.yaml") {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("kubesched-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / name).string();
    std::ofstream(path_) << contents;
  }
  ~TempFile() { std::filesystem::remove_all(dir_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::filesystem::path dir_;
  std::string path_;
};

inline std::string SourcePath(const std::string& relative) {
  return std::string(KUBESCHED_SOURCE_DIR) + "/" + relative;
}

}  // namespace kubesched::testing

#pragma once

#include <fstream>
#include <stdexcept>
#include <string>

#include "absl/status/statusor.h"
#include "tests/testing/temp_dir.h"

namespace kubesched::testing {

// A file with the given contents in a fresh temporary directory, removed on destruction.
class TempFile {
 public:
  // A directory or file that cannot be made throws: Catch2 then fails the test with the
  // message, where a path left empty would let a test that expects a read error pass.
  explicit TempFile(const std::string& contents, const std::string& name = "input.yaml") {
    absl::StatusOr<std::string> dir = MakeTempDirectory("kubesched-test");
    if (!dir.ok()) throw std::runtime_error(std::string(dir.status().message()));
    dir_ = *std::move(dir);
    path_ = dir_ + "/" + name;
    std::ofstream out(path_);
    out << contents;
    if (!out) throw std::runtime_error("cannot write " + path_);
  }
  ~TempFile() { (void)RemoveTree(dir_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string dir_;
  std::string path_;
};

inline std::string SourcePath(const std::string& relative) {
  return std::string(KUBESCHED_SOURCE_DIR) + "/" + relative;
}

}  // namespace kubesched::testing

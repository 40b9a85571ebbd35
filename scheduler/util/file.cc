#include "scheduler/util/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kubesched::util {
namespace {

// Closes the descriptor on every return path.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

absl::Status SystemError(int error) {
  if (error == ENOENT) return absl::NotFoundError(std::strerror(error));
  return absl::InvalidArgumentError(std::strerror(error));
}

absl::Status TooLarge(size_t max_bytes) {
  return absl::InvalidArgumentError(absl::StrCat("larger than the limit of ", max_bytes, " bytes"));
}

}  // namespace

absl::StatusOr<std::string> ReadFileAtMost(const std::string& path, size_t max_bytes) {
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return SystemError(errno);
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return SystemError(errno);
  if (S_ISDIR(info.st_mode)) return absl::InvalidArgumentError("is a directory");
  // A regular file's size is known up front; devices and pipes report 0 and are read until the
  // cap, growing the buffer no further than the cap allows.
  if (S_ISREG(info.st_mode) && static_cast<uint64_t>(info.st_size) > max_bytes) {
    return TooLarge(max_bytes);
  }
  std::string contents;
  if (S_ISREG(info.st_mode)) contents.reserve(static_cast<size_t>(info.st_size));
  char chunk[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd.get(), chunk, sizeof(chunk));
    if (n == 0) return contents;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SystemError(errno);
    const size_t size = static_cast<size_t>(n);
    if (size > max_bytes - contents.size()) return TooLarge(max_bytes);
    if (contents.size() + size > contents.capacity()) {
      contents.reserve(
          std::min(std::max(2 * contents.capacity(), contents.size() + size), max_bytes));
    }
    contents.append(chunk, size);
  }
}

}  // namespace kubesched::util

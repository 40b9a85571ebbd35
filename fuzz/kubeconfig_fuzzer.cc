// libFuzzer target: the kubeconfig reader. It reads a path (relative certificate and token files
// resolve against the kubeconfig's folder), so each input is written to a file in a private
// temporary folder first.

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "scheduler/client/kubeconfig.h"

namespace {

const std::string& KubeconfigPath() {
  static const std::string path = [] {
    char dir[] = "/tmp/kubesched-fuzz-XXXXXX";
    if (::mkdtemp(dir) == nullptr) std::abort();
    return std::string(dir) + "/config";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A kubeconfig may name /dev/stdin as a file; reading it must not wait for a terminal.
  const int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) ::dup2(null, STDIN_FILENO);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = KubeconfigPath();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  static_cast<void>(kubesched::client::LoadKubeconfig(path, ""));
  return 0;
}

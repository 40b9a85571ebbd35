// libFuzzer target: the configuration reader (KubeSchedulerConfiguration with kubesched's
// sections) and the queue ConfigMap's document.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/config.h"
#include "config/queues.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static_cast<void>(kubesched::config::ParseConfiguration(text));
  static_cast<void>(kubesched::config::ParseQueuesDocument(text));
  return 0;
}

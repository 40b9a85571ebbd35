// libFuzzer target: the YAML object decoder (multi-document YAML as kubectl prints it) and the
// guarded YAML loader every configuration reader uses.

#include <cstddef>
#include <cstdint>
#include <string>

#include "scheduler/api/decode.h"
#include "scheduler/api/yaml_guard.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A leading comment keeps DecodeObjects off its JSON path: YAML is what this target reads.
  std::string text = "#\n";
  text.append(reinterpret_cast<const char*>(data), size);
  static_cast<void>(kubesched::api::DecodeObjects(text, "fuzz.yaml"));
  static_cast<void>(kubesched::api::LoadYamlDocuments(text));
  return 0;
}

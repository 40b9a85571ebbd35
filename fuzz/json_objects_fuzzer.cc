// libFuzzer target: the JSON object decoders (a List or an object as kubectl prints them, and the
// single-object decoders of the watch stream).

#include <cstddef>
#include <cstdint>
#include <string>

#include "scheduler/api/decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // DecodeObjects reads text as JSON when it starts with '{' or '['; the prefix keeps this target
  // on the JSON path whatever the input.
  std::string text = "[";
  text.append(reinterpret_cast<const char*>(data), size);
  text.push_back(']');
  static_cast<void>(kubesched::api::DecodeObjects(text, "fuzz.json"));
  const std::string object(reinterpret_cast<const char*>(data), size);
  static_cast<void>(kubesched::api::DecodeObjects(object, "fuzz.json"));
  static_cast<void>(kubesched::api::DecodePodJson(object));
  static_cast<void>(kubesched::api::DecodeNodeJson(object));
  return 0;
}

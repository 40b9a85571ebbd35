// libFuzzer target: label and node selectors decoded from JSON (metav1.LabelSelector,
// v1.NodeSelector, v1.NodeAffinity), then matched against labels taken from the selector itself,
// and the label key and value syntax checks on the raw text.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rapidjson/document.h"
#include "scheduler/api/decode.h"
#include "scheduler/api/decode_internal.h"
#include "scheduler/api/labels.h"
#include "scheduler/api/symbol.h"

namespace {

using kubesched::api::LabelSet;
using kubesched::api::Symbol;

// Labels that hit the selector's own keys and values, so that matching goes past the first miss.
LabelSet LabelsOf(const kubesched::api::LabelSelector& selector) {
  std::vector<std::pair<Symbol, Symbol>> pairs;
  for (const auto& requirement : selector.requirements) {
    const Symbol value =
        requirement.values.empty() ? kubesched::api::kEmptySymbol : requirement.values.front();
    pairs.emplace_back(requirement.key, value);
  }
  return LabelSet::FromPairs(std::move(pairs));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  kubesched::api::IsValidLabelKey(text);
  kubesched::api::IsValidLabelValue(text);
  static_cast<void>(kubesched::api::DecodeNodeAffinity(text));

  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (doc.HasParseError()) return 0;
  namespace internal = kubesched::api::internal;
  const auto selector = internal::DecodeLabelSelector(doc, internal::Path());
  if (selector.ok()) {
    selector->Matches(LabelSet());
    selector->Matches(LabelsOf(*selector));
  }
  const auto node_selector = internal::DecodeNodeSelector(doc, internal::Path());
  if (node_selector.ok()) node_selector->Matches(LabelSet(), "node-a");
  return 0;
}

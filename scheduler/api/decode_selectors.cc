// Decoding of label selectors, node selectors and affinity (see decode_internal.h).
//
// A selector that upstream's validation would reject is not a decode error: its requirement is
// kept with valid=false and matches nothing, which is what upstream's scheduler does with a
// selector that fails to convert.

#include <algorithm>
#include <string_view>
#include <vector>

#include "scheduler/api/decode_internal.h"
#include "scheduler/api/parse_internal.h"

namespace kubesched::api::internal {
namespace {

// A matchExpressions / matchFields entry as written, before validation.
struct RawRequirement {
  std::string_view key;
  std::string_view op;
  std::vector<std::string_view> values;
};

absl::StatusOr<RawRequirement> ReadRawRequirement(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  RawRequirement raw;
  for (auto [name, out] : {std::pair{"key", &raw.key}, std::pair{"operator", &raw.op}}) {
    const Json* field = Find(value, name);
    if (field == nullptr) continue;
    absl::StatusOr<std::string_view> text = AsString(*field, path.Field(name));
    if (!text.ok()) return text.status();
    *out = *text;
  }
  KUBESCHED_RETURN_IF_ERROR(
      ForEachElement(value, "values", path, [&](const Json& element, const Path& at) {
        absl::StatusOr<std::string_view> text = AsString(element, at);
        if (!text.ok()) return text.status();
        raw.values.push_back(*text);
        return absl::OkStatus();
      }));
  return raw;
}

std::optional<SelectorOperator> ParseOperator(std::string_view op, bool allow_numeric) {
  if (op == "In") return SelectorOperator::kIn;
  if (op == "NotIn") return SelectorOperator::kNotIn;
  if (op == "Exists") return SelectorOperator::kExists;
  if (op == "DoesNotExist") return SelectorOperator::kDoesNotExist;
  if (allow_numeric && op == "Gt") return SelectorOperator::kGt;
  if (allow_numeric && op == "Lt") return SelectorOperator::kLt;
  return std::nullopt;
}

// Upstream's labels.NewRequirement checks, per operator.
bool ValuesValid(SelectorOperator op, const std::vector<std::string_view>& values,
                 int64_t* number) {
  switch (op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn:
      return !values.empty() && std::all_of(values.begin(), values.end(), IsValidLabelValue);
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      return values.empty();
    case SelectorOperator::kGt:
    case SelectorOperator::kLt:
      return values.size() == 1 && ParseInt64(values[0], number);
  }
  return false;
}

// Label selectors take In/NotIn/Exists/DoesNotExist; node selectors also Gt/Lt.
Requirement CompileRequirement(const RawRequirement& raw, bool allow_numeric) {
  Requirement r;
  r.key = Intern(raw.key);
  const std::optional<SelectorOperator> op = ParseOperator(raw.op, allow_numeric);
  if (op.has_value()) r.op = *op;
  r.valid = op.has_value() && IsValidLabelKey(raw.key) && ValuesValid(r.op, raw.values, &r.number);
  r.values.reserve(raw.values.size());
  for (std::string_view v : raw.values) r.values.push_back(Intern(v));
  std::sort(r.values.begin(), r.values.end());
  r.values.erase(std::unique(r.values.begin(), r.values.end()), r.values.end());
  return r;
}

// Upstream accepts only metadata.name with In/NotIn and exactly one value.
FieldRequirement CompileFieldRequirement(const RawRequirement& raw) {
  FieldRequirement r;
  r.field = std::string(raw.key);
  const std::optional<SelectorOperator> op = ParseOperator(raw.op, /*allow_numeric=*/false);
  if (op.has_value()) r.op = *op;
  r.valid = raw.key == "metadata.name" && raw.values.size() == 1 &&
            (op == SelectorOperator::kIn || op == SelectorOperator::kNotIn);
  for (std::string_view v : raw.values) r.values.emplace_back(v);
  return r;
}

absl::Status ReadMatchLabels(const Json& object, const Path& path, LabelSelector* out) {
  const Json* labels = Find(object, "matchLabels");
  if (labels == nullptr) return absl::OkStatus();
  const Path field = path.Field("matchLabels");
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(*labels, field));
  for (const auto& member : labels->GetObject()) {
    const std::string_view key = View(member.name);
    absl::StatusOr<std::string_view> value = AsString(member.value, field.Field(key));
    if (!value.ok()) return value.status();
    Requirement r;
    r.key = Intern(key);
    r.values.push_back(Intern(*value));
    r.valid = IsValidLabelKey(key) && IsValidLabelValue(*value);
    out->requirements.push_back(std::move(r));
  }
  return absl::OkStatus();
}

absl::StatusOr<PodAffinityTerm> DecodePodAffinityTerm(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  PodAffinityTerm term;
  KUBESCHED_RETURN_IF_ERROR(
      ReadOptionalLabelSelector(value, "labelSelector", path, &term.label_selector));
  KUBESCHED_RETURN_IF_ERROR(ReadSymbols(value, "namespaces", path, &term.namespaces));
  KUBESCHED_RETURN_IF_ERROR(
      ReadOptionalLabelSelector(value, "namespaceSelector", path, &term.namespace_selector));
  std::string topology_key;
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "topologyKey", path, &topology_key));
  term.topology_key = Intern(topology_key);
  KUBESCHED_RETURN_IF_ERROR(ReadSymbols(value, "matchLabelKeys", path, &term.match_label_keys));
  KUBESCHED_RETURN_IF_ERROR(
      ReadSymbols(value, "mismatchLabelKeys", path, &term.mismatch_label_keys));
  return term;
}

absl::StatusOr<WeightedPodAffinityTerm> DecodeWeightedPodAffinityTerm(const Json& value,
                                                                      const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  WeightedPodAffinityTerm weighted;
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(value, "weight", path, &weighted.weight));
  const Json* term = Find(value, "podAffinityTerm");
  if (term != nullptr) {
    absl::StatusOr<PodAffinityTerm> decoded =
        DecodePodAffinityTerm(*term, path.Field("podAffinityTerm"));
    if (!decoded.ok()) return decoded.status();
    weighted.term = *std::move(decoded);
  }
  return weighted;
}

absl::StatusOr<PodAffinity> DecodePodAffinity(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  PodAffinity affinity;
  KUBESCHED_RETURN_IF_ERROR(ForEachElement(value, "requiredDuringSchedulingIgnoredDuringExecution",
                                           path, [&](const Json& element, const Path& at) {
                                             absl::StatusOr<PodAffinityTerm> term =
                                                 DecodePodAffinityTerm(element, at);
                                             if (!term.ok()) return term.status();
                                             affinity.required.push_back(*std::move(term));
                                             return absl::OkStatus();
                                           }));
  KUBESCHED_RETURN_IF_ERROR(ForEachElement(value, "preferredDuringSchedulingIgnoredDuringExecution",
                                           path, [&](const Json& element, const Path& at) {
                                             absl::StatusOr<WeightedPodAffinityTerm> term =
                                                 DecodeWeightedPodAffinityTerm(element, at);
                                             if (!term.ok()) return term.status();
                                             affinity.preferred.push_back(*std::move(term));
                                             return absl::OkStatus();
                                           }));
  return affinity;
}

absl::StatusOr<PreferredSchedulingTerm> DecodePreferredSchedulingTerm(const Json& value,
                                                                      const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  PreferredSchedulingTerm preferred;
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(value, "weight", path, &preferred.weight));
  const Json* preference = Find(value, "preference");
  if (preference != nullptr) {
    absl::StatusOr<NodeSelectorTerm> term =
        DecodeNodeSelectorTerm(*preference, path.Field("preference"));
    if (!term.ok()) return term.status();
    preferred.preference = *std::move(term);
  }
  return preferred;
}

// Decodes the optional object member `name` with `decode` into *out.
template <typename T, typename Decode>
absl::Status ReadOptional(const Json& object, std::string_view name, const Path& path,
                          Decode decode, std::optional<T>* out) {
  const Json* value = Find(object, name);
  if (value == nullptr) return absl::OkStatus();
  absl::StatusOr<T> decoded = decode(*value, path.Field(name));
  if (!decoded.ok()) return decoded.status();
  *out = *std::move(decoded);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LabelSelector> DecodeLabelSelector(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  LabelSelector selector;
  KUBESCHED_RETURN_IF_ERROR(ReadMatchLabels(value, path, &selector));
  KUBESCHED_RETURN_IF_ERROR(
      ForEachElement(value, "matchExpressions", path, [&](const Json& element, const Path& at) {
        absl::StatusOr<RawRequirement> raw = ReadRawRequirement(element, at);
        if (!raw.ok()) return raw.status();
        selector.requirements.push_back(CompileRequirement(*raw, /*allow_numeric=*/false));
        return absl::OkStatus();
      }));
  return selector;
}

absl::Status ReadOptionalLabelSelector(const Json& object, std::string_view name, const Path& path,
                                       std::optional<LabelSelector>* out) {
  return ReadOptional(object, name, path, DecodeLabelSelector, out);
}

absl::StatusOr<NodeSelectorTerm> DecodeNodeSelectorTerm(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  NodeSelectorTerm term;
  KUBESCHED_RETURN_IF_ERROR(
      ForEachElement(value, "matchExpressions", path, [&](const Json& element, const Path& at) {
        absl::StatusOr<RawRequirement> raw = ReadRawRequirement(element, at);
        if (!raw.ok()) return raw.status();
        term.match_expressions.push_back(CompileRequirement(*raw, /*allow_numeric=*/true));
        return absl::OkStatus();
      }));
  KUBESCHED_RETURN_IF_ERROR(
      ForEachElement(value, "matchFields", path, [&](const Json& element, const Path& at) {
        absl::StatusOr<RawRequirement> raw = ReadRawRequirement(element, at);
        if (!raw.ok()) return raw.status();
        term.match_fields.push_back(CompileFieldRequirement(*raw));
        return absl::OkStatus();
      }));
  return term;
}

absl::StatusOr<NodeSelector> DecodeNodeSelector(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  NodeSelector selector;
  KUBESCHED_RETURN_IF_ERROR(
      ForEachElement(value, "nodeSelectorTerms", path, [&](const Json& element, const Path& at) {
        absl::StatusOr<NodeSelectorTerm> term = DecodeNodeSelectorTerm(element, at);
        if (!term.ok()) return term.status();
        selector.terms.push_back(*std::move(term));
        return absl::OkStatus();
      }));
  return selector;
}

absl::StatusOr<NodeAffinity> DecodeNodeAffinityValue(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  NodeAffinity affinity;
  KUBESCHED_RETURN_IF_ERROR(ReadOptional(value, "requiredDuringSchedulingIgnoredDuringExecution",
                                         path, DecodeNodeSelector, &affinity.required));
  KUBESCHED_RETURN_IF_ERROR(ForEachElement(value, "preferredDuringSchedulingIgnoredDuringExecution",
                                           path, [&](const Json& element, const Path& at) {
                                             absl::StatusOr<PreferredSchedulingTerm> term =
                                                 DecodePreferredSchedulingTerm(element, at);
                                             if (!term.ok()) return term.status();
                                             affinity.preferred.push_back(*std::move(term));
                                             return absl::OkStatus();
                                           }));
  return affinity;
}

absl::StatusOr<Affinity> DecodeAffinity(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  Affinity affinity;
  KUBESCHED_RETURN_IF_ERROR(
      ReadOptional(value, "nodeAffinity", path, DecodeNodeAffinityValue, &affinity.node_affinity));
  KUBESCHED_RETURN_IF_ERROR(
      ReadOptional(value, "podAffinity", path, DecodePodAffinity, &affinity.pod_affinity));
  KUBESCHED_RETURN_IF_ERROR(
      ReadOptional(value, "podAntiAffinity", path, DecodePodAffinity, &affinity.pod_anti_affinity));
  return affinity;
}

}  // namespace kubesched::api::internal

#pragma once

// The pieces of a node-affinity template's keys and values, shared by the template compiler, the
// renderer and the policy decoder. Internal to policy/.
//
// A template string such as "pool-{{ .Pool }}" is the literal "pool-" followed by the hole Pool.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace kubesched::policy {

// Field names of the Kubernetes node-affinity shape the template is written in.
inline constexpr char kNodeAffinityField[] = "nodeAffinity";
inline constexpr char kRequiredField[] = "requiredDuringSchedulingIgnoredDuringExecution";
inline constexpr char kPreferredField[] = "preferredDuringSchedulingIgnoredDuringExecution";
inline constexpr char kTermsField[] = "nodeSelectorTerms";
inline constexpr char kExpressionsField[] = "matchExpressions";
inline constexpr char kFieldsField[] = "matchFields";

// Every hole gets this value when a template is checked at parse time. On its own it is a valid
// label key, label value, integer and node name, so a failure points at the text around the
// holes, which no args can repair.
inline constexpr std::string_view kPlaceholder = "0";

// "\"text\"", for messages.
std::string Quote(std::string_view text);
// InvalidArgument `policy "<policy>": <message>`.
absl::Status PolicyError(std::string_view policy, std::string_view message);

// An RFC 1123 label without the length limit: [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool IsDnsLabelText(std::string_view text);

// What a template string must render to.
enum class TextKind { kLabelKey, kLabelValue, kInteger, kFieldKey, kNodeName };

// "a valid label key": completes `"x" is not ...`.
std::string_view Expected(TextKind kind);
bool IsValidText(TextKind kind, std::string_view text);

inline constexpr int kLiteral = -1;

struct Segment {
  std::string literal;
  int hole = kLiteral;  // index into NodeAffinityTemplate::holes
};

// One key or value of the template.
struct TemplateText {
  std::string written;  // as in the policy, for messages
  std::vector<Segment> segments;
  bool has_holes = false;
  TextKind kind = TextKind::kLabelValue;
  std::string path;  // "nodeAffinity.....values[1]", for messages
};

// `text` without leading and trailing white space.
std::string_view TrimSpace(std::string_view text);

// Splits `text` into literal and hole segments, adding new hole names to `holes`. Errors have no
// path.
absl::Status SplitHoles(std::string_view text, std::vector<std::string>* holes, TemplateText* out);

// Appends `text` with its holes filled from `hole_values` (by hole index).
void AppendRendered(const TemplateText& text, absl::Span<const std::string_view> hole_values,
                    std::string* out);

}  // namespace kubesched::policy

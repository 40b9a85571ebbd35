#pragma once

// A policy's node-affinity template (DESIGN.md "Policies (per-pod)"): compiled once when the
// policy is parsed into literal and hole segments, and rendered per pod from its
// kubesched.io/policy-args, so that rendering parses no template text.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "config/yaml_reader.h"
#include "policy/template_text.h"
#include "scheduler/api/objects.h"

namespace kubesched::policy {

// The template in Kubernetes' shape, with TemplateText for keys and values.
struct RequirementTemplate {
  TemplateText key;
  std::string op;  // never a template: it decides what the key and values are
  std::vector<TemplateText> values;
};

struct TermTemplate {
  std::vector<RequirementTemplate> match_expressions;
  std::vector<RequirementTemplate> match_fields;
};

struct PreferredTemplate {
  int32_t weight = 0;
  TermTemplate preference;
};

class NodeAffinityTemplate {
 public:
  bool has_required = false;
  std::vector<TermTemplate> required;  // nodeSelectorTerms
  std::vector<PreferredTemplate> preferred;
  std::vector<std::string> holes;  // hole names by index, in order of first use
};

// Compiles the `nodeAffinity` field at `path` and checks it by rendering it once with every hole
// set to kPlaceholder, so a bad template never reaches rendering. Errors go to `reader`. Null
// when the field is absent or empty (`nodeAffinity: {}`), or on error.
std::shared_ptr<const NodeAffinityTemplate> CompileNodeAffinityTemplate(
    config::yaml::Reader& reader, const YAML::Node& node, std::string_view path);

// The template with its holes filled from the kubesched.io/policy-args text (empty counts as
// {}). Errors have no policy prefix: bad JSON, not an object of strings, a hole without a value,
// or a rendered key or value that is not valid.
absl::StatusOr<api::NodeAffinity> RenderTemplate(const NodeAffinityTemplate& affinity,
                                                 std::string_view args_json);

// What fills the holes: the placeholder at parse time, the pod's args at render time.
enum class Fill { kPlaceholders, kArgs };

// The template rendered with `hole_values` (by hole index), checked as `fill` asks.
absl::StatusOr<api::NodeAffinity> RenderWith(const NodeAffinityTemplate& affinity,
                                             absl::Span<const std::string_view> hole_values,
                                             Fill fill);

}  // namespace kubesched::policy

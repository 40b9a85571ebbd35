// DefaultPreemption's args: upstream's v1 JSON field names, defaults and validation, and
// kubesched's nonPreemptibleOverridePriority.

#include <string>

#include "absl/strings/str_cat.h"
#include "config/decode_internal.h"
#include "config/plugin_args_internal.h"
#include "config/yaml_reader.h"

namespace kubesched::config {
namespace {

using yaml::Field;
using yaml::Get;
using yaml::Reader;

// Upstream's ValidateDefaultPreemptionArgs, with its messages (field.Invalid's "Invalid value: v:
// ..."); the first error only, as every decoder here reports one.
void ValidateDefaultPreemptionArgs(Reader& r, const DefaultPreemptionArgs& args,
                                   std::string_view path) {
  const std::string percentage_path = Field(path, "minCandidateNodesPercentage");
  const std::string absolute_path = Field(path, "minCandidateNodesAbsolute");
  const std::string override_path = Field(path, "nonPreemptibleOverridePriority");
  const int32_t percentage = args.min_candidate_nodes_percentage;
  const int32_t absolute = args.min_candidate_nodes_absolute;
  if (percentage < 0 || percentage > 100) {
    r.Fail(percentage_path,
           absl::StrCat("Invalid value: ", percentage, ": not in valid range [0, 100]"));
  } else if (absolute < 0) {
    r.Fail(absolute_path,
           absl::StrCat("Invalid value: ", absolute, ": not in valid range [0, inf)"));
  } else if (percentage == 0 && absolute == 0) {
    r.Fail(percentage_path,
           "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute");
  } else if (args.non_preemptible_override_priority < 0) {
    // kubesched's: a negative override would let every pod preempt NonPreemptible pods.
    r.Fail(override_path,
           absl::StrCat("must not be negative, got ", args.non_preemptible_override_priority));
  }
}

}  // namespace

absl::StatusOr<PluginArgs> DecodeDefaultPreemptionArgs(const YAML::Node& node,
                                                       std::string_view path) {
  Reader r;
  DefaultPreemptionArgs args;
  if (!r.Map(node, path,
             {"apiVersion", "kind", "minCandidateNodesPercentage", "minCandidateNodesAbsolute",
              "nonPreemptibleOverridePriority"})) {
    return r.status();
  }
  CheckTypeMeta(r, node, path, "DefaultPreemptionArgs", /*required=*/false);
  r.Int32(Get(node, "minCandidateNodesPercentage"), Field(path, "minCandidateNodesPercentage"),
          &args.min_candidate_nodes_percentage);
  r.Int32(Get(node, "minCandidateNodesAbsolute"), Field(path, "minCandidateNodesAbsolute"),
          &args.min_candidate_nodes_absolute);
  r.Int32(Get(node, "nonPreemptibleOverridePriority"),
          Field(path, "nonPreemptibleOverridePriority"), &args.non_preemptible_override_priority);
  if (r.ok()) ValidateDefaultPreemptionArgs(r, args, path);
  if (!r.ok()) return r.status();
  return PluginArgs(args);
}

}  // namespace kubesched::config

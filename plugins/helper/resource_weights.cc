#include "plugins/helper/resource_weights.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "plugins/helper/args.h"

namespace kubesched::plugins::helper {

std::vector<config::ResourceWeight> DefaultResourceWeights() { return {{"cpu", 1}, {"memory", 1}}; }

absl::Status ValidateResourceWeights(std::string_view plugin, std::string_view path,
                                     const std::vector<config::ResourceWeight>& resources) {
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < resources.size(); ++i) {
    const config::ResourceWeight& r = resources[i];
    const std::string at = absl::StrCat(util::Absl(path), "[", i, "]");
    if (r.name.empty()) return ArgsError(plugin, absl::StrCat(at, ".name"), "must not be empty");
    if (!seen.insert(r.name).second) {
      return ArgsError(plugin, absl::StrCat(at, ".name"),
                       absl::StrCat("duplicate resource ", r.name));
    }
    if (r.weight < 1 || r.weight > 100) {
      return ArgsError(plugin, absl::StrCat(at, ".weight"), "must be in 1..100");
    }
  }
  return absl::OkStatus();
}

}  // namespace kubesched::plugins::helper

#include "scheduler/quota/model_names.h"

#include <string_view>

namespace kubesched::quota {

std::shared_ptr<const ModelNames> ModelNames::Build(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& models) {
  auto names = std::make_shared<ModelNames>();
  for (const auto& [model, patterns] : models) {
    const api::Symbol model_symbol = api::Intern(model);
    for (const std::string& pattern : patterns) {
      if (pattern.ends_with('*')) {
        names->prefixes_.emplace_back(pattern.substr(0, pattern.size() - 1), model_symbol);
      } else {
        names->exact_.emplace(api::Intern(pattern), model_symbol);
      }
    }
  }
  return names;
}

api::Symbol ModelNames::Resolve(api::Symbol value) const {
  if (auto it = exact_.find(value); it != exact_.end()) return it->second;
  if (prefixes_.empty()) return value;
  const std::string_view text = api::SymbolText(value);
  for (const auto& [prefix, model] : prefixes_) {
    if (text.starts_with(prefix)) return model;
  }
  return value;
}

}  // namespace kubesched::quota

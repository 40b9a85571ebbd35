#include "scheduler/quota/model_names.h"

#include <string_view>

namespace kubesched::quota {
namespace {

bool KeptInLabelValue(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

char Normalized(char c) { return KeptInLabelValue(c) ? c : '-'; }

// Whether NormalizeDeviceModel(text) starts with `prefix` (or equals it, when `whole`).
bool NormalizedMatches(std::string_view text, std::string_view prefix, bool whole) {
  if (text.size() < prefix.size() || (whole && text.size() != prefix.size())) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (Normalized(text[i]) != prefix[i]) return false;
  }
  return true;
}

}  // namespace

std::string NormalizeDeviceModel(std::string_view text) {
  std::string normalized(text);
  for (char& c : normalized) c = Normalized(c);
  return normalized;
}

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
        names->exact_texts_.emplace_back(pattern, model_symbol);
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

bool ModelNames::NamesDeviceModel(std::string_view text, api::Symbol model) const {
  // The decoder refuses overlapping patterns: a value matches one pattern at most, an exact value
  // before any prefix, as Resolve looks them up.
  for (const auto& [value, named] : exact_texts_) {
    if (NormalizedMatches(text, value, /*whole=*/true)) return named == model;
  }
  for (const auto& [prefix, named] : prefixes_) {
    if (NormalizedMatches(text, prefix, /*whole=*/false)) return named == model;
  }
  return !text.empty() && NormalizedMatches(text, api::SymbolText(model), /*whole=*/true);
}

}  // namespace kubesched::quota

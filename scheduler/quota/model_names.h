#pragma once

// Which GPU (or other) model a node's model label value names: the configured `models` map real
// label values ("NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-PCIE-*") to the names limits use ("A100",
// as in `nvidia.com/gpu.A100`); a value no model lists names itself.
//
// Immutable once built; shared (shared_ptr) by the tree and the admissions that outlive it.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "config/queues.h"
#include "scheduler/api/symbol.h"

namespace kubesched::quota {

class ModelNames {
 public:
  static std::shared_ptr<const ModelNames> Build(
      const std::vector<std::pair<std::string, std::vector<std::string>>>& models);

  // The model `value` names: the configured model one of whose patterns it matches, else itself.
  api::Symbol Resolve(api::Symbol value) const;
  // Whether a node whose label value is `value` (none: no label) is of `model`. No allocation: it
  // runs in Filter for pods that one model's limit holds back.
  bool Names(std::optional<api::Symbol> value, api::Symbol model) const {
    return value.has_value() && Resolve(*value) == model;
  }
  // Whether a DRA device whose model attribute reads `text` is of `model`: as Resolve would
  // answer for NormalizeDeviceModel(text), without building it (Filter calls it per device).
  bool NamesDeviceModel(std::string_view text, api::Symbol model) const;

 private:
  absl::flat_hash_map<api::Symbol, api::Symbol> exact_;
  std::vector<std::pair<std::string, api::Symbol>> exact_texts_;  // (value, model)
  std::vector<std::pair<std::string, api::Symbol>> prefixes_;     // (prefix, model)
};

// A DRA device's model attribute as a label value, so that `models` and typed keys read it as
// they read a node's model label: each character a label value may not hold (a space, a '/') is
// '-', as GPU feature discovery writes product names ("NVIDIA A100-SXM4-80GB" reads
// "NVIDIA-A100-SXM4-80GB").
std::string NormalizeDeviceModel(std::string_view text);

}  // namespace kubesched::quota

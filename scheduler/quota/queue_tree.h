#pragma once

// The compiled queue tree: the configured queues plus the ones created on demand for namespaces,
// addressed by index. Holds limits only; usage lives in QuotaTracker.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "config/queues.h"
#include "scheduler/api/resource.h"
#include "scheduler/api/symbol.h"
#include "scheduler/quota/budget_period.h"
#include "scheduler/quota/model_names.h"

namespace kubesched::quota {

inline constexpr char kRootQueue[] = "root";

// A resource whose usage is also counted per node model: nodes labelled `label_key=V` charge
// `<resource>.<V>` as well; so do DRA devices of the resource by their model attribute.
struct ModelResource {
  api::ResourceId resource = 0;
  api::Symbol label_key = api::kEmptySymbol;  // kEmptySymbol: DRA devices only
  std::string prefix;                         // "<resource>."
};

// A limit (max or budget) on a typed key, which only placements on that model's nodes charge.
struct TypedKey {
  api::ResourceId typed = 0;    // nvidia.com/gpu.A100
  api::ResourceId generic = 0;  // nvidia.com/gpu
  api::Symbol label_key = api::kEmptySymbol;
  api::Symbol label_value = api::kEmptySymbol;  // the model: A100 (see ModelNames)
};

struct QueueNode {
  std::string path;  // "root.prod.search"
  int parent = -1;
  int depth = 0;
  // Configured with children: takes no pods of its own.
  bool has_children = false;
  bool auto_created = false;
  api::ResourceList max;
  std::vector<api::ResourceId> limited;  // untyped resources with a max
  std::vector<TypedKey> typed_limited;   // typed keys with a max
  std::vector<config::BudgetLimit> budget;
  BudgetPeriod period;  // when `budget` resets
};

class QueueTree {
 public:
  // Index 0 is root. The config was validated by the decoder.
  static QueueTree Build(const config::QueuesConfig& config);

  const QueueNode& node(int index) const { return nodes_[index]; }
  size_t size() const { return nodes_.size(); }
  // -1 when no queue has this path.
  int Find(std::string_view path) const;
  // The deepest existing queue on `path` (root at least): where a pod naming a queue that does
  // not exist is counted.
  int DeepestExisting(std::string_view path) const;
  // Adds (or updates the max of) root.<...>.<name> under `parent`. Returns its index.
  int AddAutoQueue(int parent, std::string_view name, const api::ResourceList& max,
                   const std::vector<api::ResourceId>& limited);

  const std::vector<ModelResource>& model_resources() const { return models_; }
  // Which model a node's label value names (QueuesConfig::models).
  const ModelNames& model_names() const { return *model_names_; }
  const std::shared_ptr<const ModelNames>& shared_model_names() const { return model_names_; }
  // If `id` is `<resource>.<model>` for a model resource, the TypedKey.
  std::optional<TypedKey> AsTyped(api::ResourceId id) const;

 private:
  void AddSubtree(const config::QueueSpec& spec, int parent);

  std::vector<QueueNode> nodes_;
  absl::flat_hash_map<std::string, int> by_path_;
  std::vector<ModelResource> models_;
  std::shared_ptr<const ModelNames> model_names_ = ModelNames::Build({});
};

}  // namespace kubesched::quota

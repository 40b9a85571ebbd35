#include "scheduler/quota/queue_tree.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"

namespace kubesched::quota {

QueueTree QueueTree::Build(const config::QueuesConfig& config) {
  QueueTree tree;
  for (const auto& [resource, label] : config.model_labels) {
    tree.models_.push_back(
        {api::InternResource(resource), api::Intern(label), absl::StrCat(resource, ".")});
  }
  // DRA devices with a model have typed keys too, whether or not nodes label the resource.
  for (const config::DeviceResourceSpec& device : config.devices) {
    const api::ResourceId id = api::InternResource(device.resource);
    const bool known =
        std::any_of(tree.models_.begin(), tree.models_.end(),
                    [id](const ModelResource& model) { return model.resource == id; });
    if (device.model_attribute.empty() || known) continue;
    tree.models_.push_back({id, api::kEmptySymbol, absl::StrCat(device.resource, ".")});
  }
  tree.model_names_ = ModelNames::Build(config.models);
  QueueNode& root = tree.nodes_.emplace_back();
  root.path = std::string(kRootQueue);
  root.has_children = !config.tree.empty();
  tree.by_path_[root.path] = 0;
  for (const auto& spec : config.tree) tree.AddSubtree(spec, 0);
  return tree;
}

void QueueTree::AddSubtree(const config::QueueSpec& spec, int parent) {
  const int index = static_cast<int>(nodes_.size());
  QueueNode node;
  node.path = spec.path;
  node.parent = parent;
  node.depth = nodes_[parent].depth + 1;
  node.has_children = !spec.queues.empty();
  node.max = spec.max;
  for (api::ResourceId id : spec.limited) {
    if (auto typed = AsTyped(id); typed.has_value()) {
      node.typed_limited.push_back(*typed);
    } else {
      node.limited.push_back(id);
    }
  }
  node.budget = spec.budget;
  node.period = {spec.period, spec.align_to};
  nodes_.push_back(std::move(node));
  by_path_[spec.path] = index;
  for (const auto& child : spec.queues) AddSubtree(child, index);
}

int QueueTree::Find(std::string_view path) const {
  auto it = by_path_.find(util::Absl(path));
  return it == by_path_.end() ? -1 : it->second;
}

int QueueTree::DeepestExisting(std::string_view path) const {
  while (true) {
    if (int found = Find(path); found >= 0) return found;
    const size_t dot = path.rfind('.');
    if (dot == std::string_view::npos) return 0;
    path = path.substr(0, dot);
  }
}

int QueueTree::AddAutoQueue(int parent, std::string_view name, const api::ResourceList& max,
                            const std::vector<api::ResourceId>& limited) {
  const std::string path = absl::StrCat(nodes_[parent].path, ".", util::Absl(name));
  int index = Find(path);
  if (index < 0) {
    index = static_cast<int>(nodes_.size());
    QueueNode& node = nodes_.emplace_back();
    node.path = path;
    node.parent = parent;
    node.depth = nodes_[parent].depth + 1;
    node.auto_created = true;
    by_path_[path] = index;
  }
  QueueNode& node = nodes_[index];
  if (!node.auto_created) return index;  // a configured queue keeps its configured limits
  node.max = max;
  node.limited.clear();
  node.typed_limited.clear();
  for (api::ResourceId id : limited) {
    if (auto typed = AsTyped(id); typed.has_value()) {
      node.typed_limited.push_back(*typed);
    } else {
      node.limited.push_back(id);
    }
  }
  return index;
}

std::optional<TypedKey> QueueTree::AsTyped(api::ResourceId id) const {
  const std::string_view name = api::ResourceName(id);
  for (const auto& model : models_) {
    if (name.size() > model.prefix.size() && absl::StartsWith(util::Absl(name), model.prefix)) {
      return TypedKey{id, model.resource, model.label_key,
                      api::Intern(name.substr(model.prefix.size()))};
    }
  }
  return std::nullopt;
}

}  // namespace kubesched::quota

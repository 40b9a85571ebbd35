#include "scheduler/framework/label_columns.h"

#include <algorithm>

namespace kubesched::framework {
namespace {

api::Symbol ValueOn(const NodeInfo& node, api::Symbol key) {
  if (node.node() == nullptr) return api::kNoSuchSymbol;
  return node.node()->meta.labels.Get(key).value_or(api::kNoSuchSymbol);
}

void Fill(const std::vector<const NodeInfo*>& nodes, api::Symbol key,
          std::vector<api::Symbol>& column) {
  column.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) column[i] = ValueOn(*nodes[i], key);
}

}  // namespace

void KeptLabelColumns::Update(const Snapshot& snapshot, absl::Span<const api::Symbol> keys) {
  const std::vector<const NodeInfo*>& nodes = snapshot.nodes();
  if (!mark_.CatchUp(snapshot, &changed_)) {
    LabelColumns& columns = Mutable();
    for (size_t i = 0; i < columns.keys.size(); ++i)
      Fill(nodes, columns.keys[i], columns.values[i]);
  } else if (!changed_.empty()) {
    LabelColumns& columns = Mutable();
    for (const uint32_t position : changed_) {
      for (size_t i = 0; i < columns.keys.size(); ++i) {
        columns.values[i][position] = ValueOn(*nodes[position], columns.keys[i]);
      }
    }
  }
  for (const api::Symbol key : keys) {
    if (std::find(columns_->keys.begin(), columns_->keys.end(), key) != columns_->keys.end()) {
      continue;
    }
    if (columns_->keys.size() >= kMaxKeys) continue;
    LabelColumns& columns = Mutable();
    columns.keys.push_back(key);
    columns.values.emplace_back();
    Fill(nodes, key, columns.values.back());
  }
}

LabelColumns& KeptLabelColumns::Mutable() {
  if (columns_.use_count() > 1) columns_ = std::make_shared<LabelColumns>(*columns_);
  return *columns_;
}

}  // namespace kubesched::framework

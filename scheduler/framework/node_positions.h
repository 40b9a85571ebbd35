#pragma once

// A set of nodes named by their position in a snapshot (Snapshot::nodes()[i]), one bit each: how
// a plugin tells the core something of many nodes at once without naming them, and how the core
// asks about a node in the per-node loop without touching its NodeInfo.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kubesched::framework {

class NodePositions {
 public:
  // Empties the set and makes it cover `nodes` positions.
  void Reset(size_t nodes) {
    words_.assign((nodes + kBits - 1) / kBits, 0);
    size_ = nodes;
  }
  // `position` < size().
  void Add(size_t position) { words_[position / kBits] |= uint64_t{1} << (position % kBits); }
  bool Contains(size_t position) const {
    return ((words_[position / kBits] >> (position % kBits)) & 1) != 0;
  }
  // Adds every member of `other`, which covers as many positions.
  void AddAll(const NodePositions& other) {
    for (size_t i = 0; i < words_.size() && i < other.words_.size(); ++i) {
      words_[i] |= other.words_[i];
    }
  }
  // How many positions the set covers (members or not).
  size_t size() const { return size_; }

 private:
  static constexpr size_t kBits = 64;

  std::vector<uint64_t> words_;
  size_t size_ = 0;
};

}  // namespace kubesched::framework

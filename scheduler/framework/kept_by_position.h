#pragma once

// Per-node results kept from one pod to the next by snapshot position (the Filter phase's kept
// verdicts, DefaultPreemption's kept dry-run verdicts), each node's slot split into a key (what
// decides whether the result applies, with an `era`: 0 voids it) and the result itself.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "scheduler/framework/kept_result.h"
#include "scheduler/framework/snapshot.h"

namespace kubesched::framework {

// Brings `keys` and `values` up to date with `snapshot`: the slots of the nodes changed since
// `mark` are voided, or every slot is dropped when the mark cannot tell (SnapshotMark::CatchUp);
// then there is a slot for every node. `changed` is scratch.
template <typename Key, typename Value>
void CatchUpByPosition(const Snapshot& snapshot, SnapshotMark& mark, std::vector<uint32_t>& changed,
                       std::vector<Key>& keys, std::vector<Value>& values) {
  if (mark.CatchUp(snapshot, &changed)) {
    for (const uint32_t position : changed) {
      if (position < keys.size()) keys[position].era = 0;
    }
  } else {
    keys.clear();
    values.clear();
  }
  const size_t num_nodes = snapshot.nodes().size();
  if (keys.size() < num_nodes) {
    keys.resize(num_nodes);
    values.resize(num_nodes);
  }
}

}  // namespace kubesched::framework

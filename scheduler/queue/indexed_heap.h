#pragma once

// A binary heap of pointers that records each element's position in the element itself, so that
// any element can be removed or re-positioned in O(log n) without searching (upstream's heap with
// its key-to-index map, minus the map).
//
// Contract: T has a `size_t heap_index` member, which the heap owns while the element is in it.
// The heap does not own the elements; each must outlive its stay in the heap and be in at most
// one heap at a time. `Before(a, b)` is a strict weak order: true when `a` comes out first.
// Not thread-safe: the owner guards it. Header-only so that the order inlines into the sifts.

#include <cstddef>
#include <utility>
#include <vector>

namespace kubesched::queue {

template <typename T, typename Before>
class IndexedHeap {
 public:
  explicit IndexedHeap(Before before) : before_(std::move(before)) {}

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // The first element; the heap must not be empty.
  T* top() const { return heap_.front(); }
  // Every element, in heap (not sorted) order.
  const std::vector<T*>& items() const { return heap_; }

  void Push(T* item) {
    heap_.push_back(item);
    item->heap_index = heap_.size() - 1;
    SiftUp(item->heap_index);
  }
  // Removes and returns the first element; the heap must not be empty.
  T* Pop() {
    T* item = heap_.front();
    Erase(item);
    return item;
  }
  // Removes `item`, which must be in this heap.
  void Erase(T* item) {
    const size_t i = item->heap_index;
    T* last = heap_.back();
    heap_.pop_back();
    if (last == item) return;
    Place(i, last);
    Fix(last);
  }
  // Restores order after the item's key changed.
  void Fix(T* item) {
    SiftUp(item->heap_index);
    SiftDown(item->heap_index);
  }

 private:
  void Place(size_t i, T* item) {
    heap_[i] = item;
    item->heap_index = i;
  }
  void SiftUp(size_t i) {
    T* item = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!before_(item, heap_[parent])) break;
      Place(i, heap_[parent]);
      i = parent;
    }
    Place(i, item);
  }
  void SiftDown(size_t i) {
    T* item = heap_[i];
    const size_t n = heap_.size();
    while (true) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before_(heap_[child + 1], heap_[child])) ++child;
      if (!before_(heap_[child], item)) break;
      Place(i, heap_[child]);
      i = child;
    }
    Place(i, item);
  }

  std::vector<T*> heap_;
  Before before_;
};

}  // namespace kubesched::queue

// IndexedHeap: on random input, every sequence of push, pop, erase and fix hands elements out in
// the order a sorted reference gives, and each element's heap_index stays its position.

#include "scheduler/queue/indexed_heap.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace kubesched {
namespace {

struct Element {
  int key = 0;
  int id = 0;  // breaks ties, so that the order is total and the expected sequence unique
  size_t heap_index = 0;
};

struct SmallerKeyFirst {
  bool operator()(const Element* a, const Element* b) const {
    if (a->key != b->key) return a->key < b->key;
    return a->id < b->id;
  }
};

using Heap = queue::IndexedHeap<Element, SmallerKeyFirst>;
// The reference: the same elements, sorted by the same order.
using Reference = std::set<std::pair<int, int>>;  // (key, id)

std::pair<int, int> KeyOf(const Element* e) { return {e->key, e->id}; }

// Whether every element's heap_index is its slot and no child comes before its parent.
bool HeapIsConsistent(const Heap& heap) {
  const std::vector<Element*>& items = heap.items();
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i]->heap_index != i) return false;
    if (i > 0 && SmallerKeyFirst{}(items[i], items[(i - 1) / 2])) return false;
  }
  return true;
}

// Elements with keys drawn from a small range, so that equal keys are common.
std::vector<std::unique_ptr<Element>> RandomElements(std::mt19937& rng, int count) {
  std::uniform_int_distribution<int> key(0, count / 4);
  std::vector<std::unique_ptr<Element>> elements;
  for (int id = 0; id < count; ++id) {
    elements.push_back(std::make_unique<Element>(Element{key(rng), id, 0}));
  }
  return elements;
}

// Pops everything, checking each element against the reference's smallest.
void DrainAgainst(Heap& heap, Reference& reference) {
  while (!heap.empty()) {
    REQUIRE(heap.size() == reference.size());
    REQUIRE(KeyOf(heap.top()) == *reference.begin());
    REQUIRE(KeyOf(heap.Pop()) == *reference.begin());
    reference.erase(reference.begin());
  }
  REQUIRE(reference.empty());
}

TEST_CASE("an indexed heap pops random pushes in sorted order", "[queue]") {
  std::mt19937 rng(1);
  auto elements = RandomElements(rng, 500);
  Heap heap{SmallerKeyFirst{}};
  Reference reference;
  for (auto& e : elements) {
    heap.Push(e.get());
    reference.insert(KeyOf(e.get()));
  }
  REQUIRE(HeapIsConsistent(heap));
  DrainAgainst(heap, reference);
}

TEST_CASE("an indexed heap erases an element from any position", "[queue]") {
  std::mt19937 rng(2);
  auto elements = RandomElements(rng, 300);
  Heap heap{SmallerKeyFirst{}};
  Reference reference;
  for (auto& e : elements) {
    heap.Push(e.get());
    reference.insert(KeyOf(e.get()));
  }
  std::shuffle(elements.begin(), elements.end(), rng);
  for (size_t i = 0; i < elements.size() / 2; ++i) {
    heap.Erase(elements[i].get());
    reference.erase(KeyOf(elements[i].get()));
    REQUIRE(HeapIsConsistent(heap));
  }
  DrainAgainst(heap, reference);
}

TEST_CASE("an indexed heap reorders an element whose key changed after Fix", "[queue]") {
  std::mt19937 rng(3);
  auto elements = RandomElements(rng, 300);
  Heap heap{SmallerKeyFirst{}};
  Reference reference;
  for (auto& e : elements) {
    heap.Push(e.get());
    reference.insert(KeyOf(e.get()));
  }
  std::uniform_int_distribution<int> key(-50, 150);  // both ways: to the top and to the bottom
  std::uniform_int_distribution<size_t> pick(0, elements.size() - 1);
  for (int round = 0; round < 1000; ++round) {
    Element* e = elements[pick(rng)].get();
    reference.erase(KeyOf(e));
    e->key = key(rng);
    reference.insert(KeyOf(e));
    heap.Fix(e);
    REQUIRE(HeapIsConsistent(heap));
    REQUIRE(KeyOf(heap.top()) == *reference.begin());
  }
  DrainAgainst(heap, reference);
}

TEST_CASE("an indexed heap agrees with a sorted reference under random mixed operations",
          "[queue]") {
  std::mt19937 rng(4);
  auto elements = RandomElements(rng, 400);
  std::vector<Element*> outside;  // elements not in the heap
  for (auto& e : elements) outside.push_back(e.get());
  std::vector<Element*> inside;  // elements in the heap, in no particular order
  Heap heap{SmallerKeyFirst{}};
  Reference reference;
  std::uniform_int_distribution<int> operation(0, 3);
  std::uniform_int_distribution<int> key(0, 100);
  const auto take_random = [&rng](std::vector<Element*>& from) {
    std::uniform_int_distribution<size_t> pick(0, from.size() - 1);
    const size_t i = pick(rng);
    Element* e = from[i];
    from[i] = from.back();
    from.pop_back();
    return e;
  };
  for (int step = 0; step < 20000; ++step) {
    const int op = operation(rng);
    if (op == 0 && !outside.empty()) {
      Element* e = take_random(outside);
      heap.Push(e);
      reference.insert(KeyOf(e));
      inside.push_back(e);
    } else if (op == 1 && !heap.empty()) {
      Element* e = heap.Pop();
      REQUIRE(KeyOf(e) == *reference.begin());
      reference.erase(reference.begin());
      inside.erase(std::find(inside.begin(), inside.end(), e));
      outside.push_back(e);
    } else if (op == 2 && !inside.empty()) {
      Element* e = take_random(inside);
      heap.Erase(e);
      reference.erase(KeyOf(e));
      outside.push_back(e);
    } else if (op == 3 && !inside.empty()) {
      Element* e = inside[std::uniform_int_distribution<size_t>(0, inside.size() - 1)(rng)];
      reference.erase(KeyOf(e));
      e->key = key(rng);
      reference.insert(KeyOf(e));
      heap.Fix(e);
    }
    REQUIRE(heap.size() == reference.size());
    if (!heap.empty()) REQUIRE(KeyOf(heap.top()) == *reference.begin());
  }
  REQUIRE(HeapIsConsistent(heap));
  DrainAgainst(heap, reference);
}

}  // namespace
}  // namespace kubesched

#pragma once

// The walk that decode.cc (a whole parsed text) and decode_stream.cc (a file read item by item)
// share: documents, lists and items, each item decoded by its kind and each bad one recorded as a
// problem. Not part of the api contract.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "scheduler/api/decode.h"
#include "scheduler/api/decode_internal.h"

namespace kubesched::api::internal {

// One entry per kind the scheduler reads.
struct KindDecoder {
  std::string_view kind;
  bool namespaced;
  absl::StatusOr<Object> (*decode)(const Json&);
};

// The decoder of `kind`; null for a kind the scheduler does not read.
const KindDecoder* FindDecoder(std::string_view kind);

// "Kind ns/name", "Kind name" for a cluster-scoped kind, "Kind (no name)".
std::string Describe(std::string_view kind, bool namespaced, std::string_view ns,
                     std::string_view name);

// A string member of `object`, or "" when it is absent or not a string.
std::string_view StringMember(const Json& object, std::string_view name);

// Walks documents, lists and items, decoding each item and recording the bad ones. Decoded
// objects go to `sink` in input order. The sink is held by reference (a named callable, not a
// temporary) and, like `problems`, must outlive the collector.
class Collector {
 public:
  Collector(std::string_view source, absl::FunctionRef<void(Object&&)> sink,
            std::vector<DecodeProblem>* problems)
      : source_(source), sink_(sink), problems_(problems) {}

  // A whole document: a list, an array of items, or one item.
  void AddDocument(const Json& root);
  // A value found `depth` lists deep (0: a document's root): a list or an item.
  void AddItemOrList(const Json& value, int depth);

 private:
  static constexpr int kMaxListDepth = 8;

  static bool IsList(const Json& value);
  void AddItem(const Json& item);
  void AddProblem(const Json& item, const KindDecoder* decoder, std::string_view message);
  // "Pod ns/name" when the item has a kind and a name, else "item N (kind K)" or "item N".
  std::string DescribeItem(const Json& item, const KindDecoder* decoder) const;

  std::string_view source_;
  absl::FunctionRef<void(Object&&)> sink_;
  std::vector<DecodeProblem>* problems_;
  size_t items_seen_ = 0;  // 1-based number of the current item across all documents
};

}  // namespace kubesched::api::internal

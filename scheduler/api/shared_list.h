#pragma once

// Parts of an object that many objects hold alike, stored once. A cluster's pods come from a few
// workloads, so their containers and tolerations repeat: a pod holds them through SharedList, and
// the decoders give equal lists one vector (InternList). Copies of an object share its parts, and
// the first change through a copy gives the copy parts of its own (copy on write), so that a
// shared part is never written: reading one from several threads is as safe as reading a const
// std::vector.

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace kubesched::api {

// Reads as a const std::vector<T> (it converts to one); changes go through the members below that
// take a non-const list, each of which first gives the list a vector of its own unless it has
// one already. Mutating loops use mutable_get().
template <typename T>
class SharedList {
 public:
  using value_type = T;
  using const_iterator = typename std::vector<T>::const_iterator;

  SharedList() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): a list is assigned a vector or a brace list.
  SharedList(std::vector<T> items) {
    if (!items.empty()) Own(std::move(items));
  }
  SharedList(std::initializer_list<T> items) : SharedList(std::vector<T>(items)) {}
  // A vector others hold too (InternList): never written through this list.
  explicit SharedList(std::shared_ptr<const std::vector<T>> shared) : items_(std::move(shared)) {
    if (items_ != nullptr && items_->empty()) items_ = nullptr;
  }
  // A copy shares the vector; neither writes it from then on.
  SharedList(const SharedList& other) : items_(other.items_) {}
  SharedList& operator=(const SharedList& other) {
    items_ = other.items_;
    own_ = false;
    return *this;
  }
  SharedList(SharedList&& other) noexcept
      : items_(std::move(other.items_)), own_(std::exchange(other.own_, false)) {}
  SharedList& operator=(SharedList&& other) noexcept {
    items_ = std::move(other.items_);
    own_ = std::exchange(other.own_, false);
    return *this;
  }

  const std::vector<T>& get() const { return items_ != nullptr ? *items_ : Empty(); }
  // By content; lists that share their items are equal at once.
  friend bool operator==(const SharedList& a, const SharedList& b) {
    return a.items_ == b.items_ || a.get() == b.get();
  }
  // NOLINTNEXTLINE(google-explicit-constructor): reads as the vector it holds.
  operator const std::vector<T>&() const { return get(); }
  const_iterator begin() const { return get().begin(); }
  const_iterator end() const { return get().end(); }
  size_t size() const { return get().size(); }
  bool empty() const { return get().empty(); }
  const T& operator[](size_t i) const { return get()[i]; }
  const T& at(size_t i) const { return get().at(i); }
  const T& front() const { return get().front(); }
  const T& back() const { return get().back(); }

  // The list's own vector: copied first unless this list made it and nothing else holds it.
  std::vector<T>& mutable_get() {
    if (!own_ || items_.use_count() > 1) Own(items_ != nullptr ? *items_ : std::vector<T>());
    // This list made the vector non-const and holds it alone: writing it is sound.
    return const_cast<std::vector<T>&>(*items_);
  }
  T& operator[](size_t i) { return mutable_get()[i]; }
  T& at(size_t i) { return mutable_get().at(i); }
  T& front() { return mutable_get().front(); }
  T& back() { return mutable_get().back(); }
  void push_back(T item) { mutable_get().push_back(std::move(item)); }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    return mutable_get().emplace_back(std::forward<Args>(args)...);
  }
  void clear() {
    items_ = nullptr;
    own_ = false;
  }

  // Whether both hold the very same vector (equal lists that InternList gave one vector).
  bool SharesWith(const SharedList& other) const { return items_ == other.items_; }

 private:
  static const std::vector<T>& Empty() {
    static const std::vector<T> empty;
    return empty;
  }
  void Own(std::vector<T> items) {
    items_ = std::make_shared<std::vector<T>>(std::move(items));
    own_ = true;
  }

  std::shared_ptr<const std::vector<T>> items_;  // null when empty
  bool own_ = false;  // this list made `items_` and may write it while nothing else holds it
};

// An optional part held by pointer: an absent one costs a pointer instead of the part's size in
// every object, and copies share a present one. Reads as a const std::optional<T>; changes
// (emplace, or -> and * on a non-const one) give the holder a value of its own first.
template <typename T>
class SharedOptional {
 public:
  SharedOptional() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): assigned like std::optional.
  SharedOptional(std::nullopt_t /*none*/) {}
  // NOLINTNEXTLINE(google-explicit-constructor): assigned like std::optional.
  SharedOptional(T value) : value_(std::make_shared<T>(std::move(value))) {}

  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  const T& operator*() const { return *value_; }
  const T* operator->() const { return value_.get(); }
  const T& value() const { return *value_; }

  T& operator*() { return mutable_value(); }
  T* operator->() { return &mutable_value(); }
  template <typename... Args>
  T& emplace(Args&&... args) {
    value_ = std::make_shared<T>(std::forward<Args>(args)...);
    return const_cast<T&>(*value_);
  }
  void reset() { value_ = nullptr; }

  // Both absent, or both present with equal values (one shared value without comparing).
  friend bool operator==(const SharedOptional& a, const SharedOptional& b) {
    if (a.value_ == b.value_) return true;
    return a.has_value() && b.has_value() && *a.value_ == *b.value_;
  }

 private:
  // The value, copied first if it is shared. Precondition: has_value().
  T& mutable_value() {
    if (value_.use_count() > 1) value_ = std::make_shared<T>(*value_);
    // Sole owner of a value this holder created non-const: writing it is sound.
    return const_cast<T&>(*value_);
  }

  std::shared_ptr<const T> value_;
};

// The process's lists of T (api/shared_list.cc instantiates it for Container and Toleration):
// `items` as a SharedList whose vector every equal list interned before shares. A list is kept
// while some object holds it; the table forgets lists nobody holds as it grows. Thread-safe.
template <typename T>
SharedList<T> InternList(std::vector<T> items);

}  // namespace kubesched::api

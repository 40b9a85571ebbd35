#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace kubesched::runtime {

// Which Filter plugins of a profile a pod's PreFilter skipped (index i: filter_plugins()[i]). The
// plugins that run are kept as a bit mask so that the per-node loop visits only them: a plugin a
// pod skips costs that pod nothing per node. A profile has at most kMaxFilters Filter plugins
// (checked when it is built).
class FilterSkips {
 public:
  static constexpr size_t kMaxFilters = 64;

  FilterSkips() = default;
  // `count` plugins, none skipped.
  explicit FilterSkips(size_t count)
      : count_(count), run_(count >= kMaxFilters ? ~uint64_t{0} : (uint64_t{1} << count) - 1) {}

  size_t size() const { return count_; }
  bool operator[](size_t index) const { return ((run_ >> index) & 1) == 0; }
  void Set(size_t index, bool skipped) {
    const uint64_t bit = uint64_t{1} << index;
    run_ = skipped ? (run_ & ~bit) : (run_ | bit);
  }
  // Calls visit(index) for each plugin that runs, in profile order; stops at the first that
  // returns false.
  template <typename Visit>
  bool ForEachRunning(Visit&& visit) const {
    for (uint64_t bits = run_; bits != 0; bits &= bits - 1) {
      if (!visit(static_cast<size_t>(std::countr_zero(bits)))) return false;
    }
    return true;
  }
  bool NoneRuns() const { return run_ == 0; }
  // Bit i set: plugin i runs.
  uint64_t running_mask() const { return run_; }

 private:
  size_t count_ = 0;
  uint64_t run_ = 0;  // bit i set: plugin i runs
};

}  // namespace kubesched::runtime

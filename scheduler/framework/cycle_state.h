#pragma once

#include <memory>
#include <string_view>
#include <vector>

namespace kubesched::framework {

// Per-cycle data a plugin computes in PreFilter/PreScore and reads in Filter/Score.
class StateData {
 public:
  virtual ~StateData() = default;
  // Preemption simulates removals on a copy of the state.
  virtual std::unique_ptr<StateData> Clone() const = 0;
};

// The scratch space of one scheduling cycle (one pod). Slots are addressed by integer keys that
// each plugin allocates once, so reading state in the per-node loop is an index, not a string
// look-up.
//
// Threads: written only by the scheduling thread in PreFilter/PreScore/Reserve; read
// concurrently by Filter/Score workers, which must not write.
class CycleState {
 public:
  using Key = int;

  // Allocates a process-wide key. Call once per plugin type, e.g. from a function-local static.
  static Key AllocateKey(std::string_view name);

  void Write(Key key, std::unique_ptr<StateData> data);
  // The data under `key`, or nullptr. A key belongs to one plugin, which always stores the same
  // type T under it, so the cast is static (this runs in the per-node loop).
  template <typename T>
  const T* Read(Key key) const {
    if (key < 0 || static_cast<size_t>(key) >= slots_.size()) return nullptr;
    return static_cast<const T*>(slots_[key].get());
  }
  template <typename T>
  T* ReadMutable(Key key) {
    if (key < 0 || static_cast<size_t>(key) >= slots_.size()) return nullptr;
    return static_cast<T*>(slots_[key].get());
  }
  void Erase(Key key);
  std::unique_ptr<CycleState> Clone() const;

  // Whether this cycle's plugin calls are timed for scheduler_plugin_execution_duration_seconds
  // (set by the framework runtime for a sample of cycles, as upstream; clones are never timed).
  bool record_plugin_metrics() const { return record_plugin_metrics_; }
  void set_record_plugin_metrics(bool record) { record_plugin_metrics_ = record; }

  // A cycle that only looks (explain): every plugin judges the pod as it would, but changes
  // nothing outside this state: no quota held, no waiting pod allowed or rejected. Clones keep
  // it, so preemption's what-ifs during such a cycle look only too.
  bool dry_run() const { return dry_run_; }
  void set_dry_run(bool dry_run) { dry_run_ = dry_run; }

 private:
  std::vector<std::unique_ptr<StateData>> slots_;
  bool record_plugin_metrics_ = false;
  bool dry_run_ = false;
};

}  // namespace kubesched::framework

#pragma once

// A minimal volume controller for kubesched-testapi, off unless switched on (--volume-controller
// true, or POST /testapi/volume-controller {"enabled": true}), so that tests of volume binding
// have someone to finish what the scheduler starts, as the real PV controller and external
// provisioners do:
//   - a PV without a claimRef and without a phase (or Pending) becomes Available;
//   - a PV whose spec.claimRef names an existing claim that is free or names it back is bound:
//     the PV gets phase Bound (and the claim's UID in its claimRef), the claim spec.volumeName,
//     the pv.kubernetes.io/bind-completed annotation and phase Bound;
//   - a claim annotated volume.kubernetes.io/selected-node, without a volume, of a class with a
//     provisioner (not kubernetes.io/no-provisioner), gets a new PV "pvc-<claim uid>" of its size,
//     access modes and class, with node affinity for that node's kubernetes.io/hostname (and
//     topology.kubernetes.io/zone, when the node has one), bound to it as above.
//
// It reacts to every PV and claim change with a pass over all of them (test clusters are small);
// its own writes trigger one more pass, which finds nothing to do (a write that changes nothing
// sends no event).
//
// Threads: the passes run on the controller's own thread while it is enabled; SetEnabled and
// Reconcile may be called from any thread (Reconcile passes are serialized).

#include <memory>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "tests/testapi/store.h"

namespace kubesched::testapi {

class VolumeController {
 public:
  explicit VolumeController(Store* store) : store_(store) {}
  ~VolumeController();
  VolumeController(const VolumeController&) = delete;
  VolumeController& operator=(const VolumeController&) = delete;

  // Starts or stops the controller's thread; a start reconciles everything at once.
  void SetEnabled(bool enabled);
  bool enabled() const;

  // One pass over every PV and claim; returns the number of objects written.
  int Reconcile();

 private:
  void Run();

  Store* const store_;
  mutable absl::Mutex mu_;  // the thread's state and wake-ups
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool changed_ ABSL_GUARDED_BY(mu_) = false;
  absl::CondVar wake_;      // with mu_: changed_ or stop_ was set
  absl::Mutex control_mu_;  // SetEnabled calls, one at a time
  std::unique_ptr<std::thread> thread_ ABSL_GUARDED_BY(control_mu_);
  absl::Mutex pass_mu_;  // one pass at a time
};

}  // namespace kubesched::testapi

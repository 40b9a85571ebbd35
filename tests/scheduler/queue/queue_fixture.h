#pragma once

// What the scheduling queue's tests share: pods by name and a queue on a fake clock.

#include <cstdint>
#include <string>

#include "scheduler/queue/scheduling_queue.h"
#include "tests/testing/builders.h"

namespace kubesched::testing {

// A pending pod "default/<name>" of `priority`.
inline framework::PodInfoPtr QueuedPod(const std::string& name, int32_t priority = 0) {
  return framework::MakePodInfo(PodBuilder(name).Ptr(), priority);
}

struct QueueFixture {
  util::FakeClock clock;
  queue::SchedulingQueue queue{&clock, queue::QueueOptions{}};
};

}  // namespace kubesched::testing

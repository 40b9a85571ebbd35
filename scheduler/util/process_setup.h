#pragma once

// What every kubesched program sets up before its first lock.

namespace kubesched::util {

#ifdef NDEBUG
inline constexpr bool kOptimisedBuild = true;
#else
inline constexpr bool kOptimisedBuild = false;
#endif

// Debian's abseil is built without NDEBUG, so its Mutex keeps a graph of the order in which
// every lock is taken and aborts the process on an order that could deadlock. An optimised build
// turns that off, as upstream abseil's optimised builds do: the graph costs every lock a look-up
// (about 2 % of a scheduling run's samples at 50,000 nodes), and a scheduler in production must
// not die on a lock order that has not deadlocked. Other builds (the test suite's) keep the check,
// so that the tests still catch such an order.
void SetUpProcess(bool optimised = kOptimisedBuild);

}  // namespace kubesched::util

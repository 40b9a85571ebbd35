#include "scheduler/util/process_setup.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "absl/synchronization/mutex.h"

namespace kubesched::util {
namespace {

// Runs `body` in a child process and returns how it ended (waitpid's status): the deadlock check
// is process-wide, and a check that fires aborts the process.
template <typename Body>
int InChild(Body body) {
  const pid_t child = fork();
  if (child == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

// Two locks taken in both orders: an order that could deadlock, though it does not here.
void TakeLocksInBothOrders() {
  absl::Mutex first;
  absl::Mutex second;
  {
    absl::MutexLock outer(&first);
    absl::MutexLock inner(&second);
  }
  {
    absl::MutexLock outer(&second);
    absl::MutexLock inner(&first);
  }
}

TEST_CASE("an optimised build survives a lock order that could deadlock", "[util]") {
  const int status = InChild([] {
    SetUpProcess(/*optimised=*/true);
    TakeLocksInBothOrders();
  });
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace kubesched::util

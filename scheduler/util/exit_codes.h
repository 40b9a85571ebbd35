#pragma once

namespace kubesched::scheduler {

// Process exit codes, stated in --help.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure =
    1;  // an input file unreadable; run: cannot connect or lost the lease
inline constexpr int kExitUsage = 2;         // bad flags or a bad configuration
inline constexpr int kExitSkippedInput = 3;  // finished, but some input objects were skipped

}  // namespace kubesched::scheduler

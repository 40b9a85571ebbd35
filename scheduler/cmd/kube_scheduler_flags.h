#pragma once

// The flags a kube-scheduler manifest carries, for `kubesched run`: honoured where kubesched has
// the feature (--master, --leader-elect*, --logging-format, --feature-gates), accepted with a
// warning that names them where it has not, refused where accepting would mislead. kubesched's
// own flags (and the ones both share, such as --config and --kubeconfig) are cli.cc's.

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "scheduler/cmd/flags.h"
#include "scheduler/run/run.h"
#include "scheduler/util/log.h"

namespace kubesched::scheduler {

// The names ParseFlags must accept for these flags (--leader-elect and the ignored boolean flags
// are booleans).
ExtraFlags KubeSchedulerFlags();

// What the flags ask of the process itself, applied once they all parsed.
struct KubeSchedulerSettings {
  util::LogFormat log_format = util::LogFormat::kText;
  std::vector<std::string> warnings;  // to log once the log format is set
};

// Reads the flags into `options` and `settings`; false after printing the error (the flag named).
bool ReadKubeSchedulerFlags(const ParsedFlags& flags, RunOptions* options,
                            KubeSchedulerSettings* settings, std::ostream& err);

// --feature-gates "Name=bool,...": a malformed list is an error (as upstream's); a gate kubesched
// does not know, or one set to what kubesched does not do, adds a warning naming it, once.
absl::Status ParseFeatureGates(std::string_view text, std::vector<std::string>* warnings);

}  // namespace kubesched::scheduler

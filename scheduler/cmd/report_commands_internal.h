#pragma once

// What simulate's and explain's commands share: the configuration, --output, problems, and the
// live cluster's connection.

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "config/config.h"
#include "scheduler/api/decode.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/cmd/flags.h"

namespace kubesched::scheduler {

// --config FILE, checked; upstream defaults without it. nullopt after printing the error.
std::optional<config::Configuration> LoadConfigFlag(const ParsedFlags& flags, std::ostream& err);

// --config, or with a live cluster --config-map NS/NAME[:KEY] (read through `transport`); the two
// exclude each other. nullopt after printing the error.
std::optional<config::Configuration> ResolveConfigFlags(const ParsedFlags& flags,
                                                        client::HttpTransport* transport,
                                                        std::ostream& err);

// --output: "table" or "json"; nullopt (after printing the error) for anything else.
std::optional<bool> WantsJson(const ParsedFlags& flags, std::ostream& err);

// Lists the skipped objects on `err`; the exit code: ok, or kExitSkippedInput.
int ReportProblems(const std::vector<api::DecodeProblem>& problems, std::ostream& err);

// The live cluster of --kubeconfig/--context; null after printing the error.
std::unique_ptr<client::HttpTransport> ConnectFromFlags(const ParsedFlags& flags,
                                                        std::ostream& err);

}  // namespace kubesched::scheduler

#pragma once

// The command line's flag parser, with the rules of Go's pflag that kube-scheduler's users know:
// "--name value" and "--name=value"; a boolean flag is "--name" (true) or "--name=BOOL", and a
// bare boolean flag never takes the next argument as its value. "-v N", "-v=N", "-vN" and
// "--v=N" are the verbosity. Errors name the flag.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace kubesched::scheduler {

struct ParsedFlags {
  absl::flat_hash_map<std::string, std::string> values;
  bool help = false;
};

// Flags a command accepts beyond its own list: more that take a value, and the boolean ones.
struct ExtraFlags {
  std::vector<std::string> values;
  std::vector<std::string> booleans;
};

// Parses args[first..]; `allowed` and `extra.values` are the flags that take a value,
// `extra.booleans` the boolean flags. nullopt after printing the error: an unknown flag, a value
// missing, a positional argument.
std::optional<ParsedFlags> ParseFlags(const std::vector<std::string>& args, size_t first,
                                      const std::vector<std::string>& allowed, std::ostream& err,
                                      const ExtraFlags& extra = {});

std::optional<std::string> Get(const ParsedFlags& flags, const std::string& name);

// A boolean as Go's strconv.ParseBool reads it (1, t, T, TRUE, true, True, 0, f, F, FALSE, false,
// False); nullopt for anything else.
std::optional<bool> ParseGoBool(std::string_view text);

// --name BOOL; nullopt when absent; false (after printing) when malformed.
bool ParseBool(const ParsedFlags& flags, const std::string& name, std::optional<bool>* value,
               std::ostream& err);

// --name N, a non-negative integer; `value` unchanged when absent; false (after printing) when
// malformed.
bool ParseUint(const ParsedFlags& flags, const std::string& name, uint64_t* value,
               std::ostream& err);

// --threads N in 0..1024 (0: the CPU count).
bool ParseThreads(const ParsedFlags& flags, int* threads, std::ostream& err);

}  // namespace kubesched::scheduler

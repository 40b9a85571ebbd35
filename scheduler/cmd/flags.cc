#include "scheduler/cmd/flags.h"

#include <algorithm>

#include "absl/strings/numbers.h"

namespace kubesched::scheduler {
namespace {

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// "-v", "-v=N", "-vN": the one single-dash flag (kube-scheduler's verbosity shorthand).
std::optional<std::string> ShortVerbosity(const std::string& arg) {
  if (arg == "-v") return "v";
  if (arg.size() > 2 && arg.rfind("-v", 0) == 0 && arg[1] == 'v') {
    const std::string rest = arg.substr(2);
    if (rest[0] == '=') return "v" + rest;
    if (std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return "v=" + rest;
    }
  }
  return std::nullopt;
}

void ExplainPositional(const std::string& arg, const std::string& previous_bool,
                       std::ostream& err) {
  err << "error: unexpected argument \"" << arg << "\"";
  if (!previous_bool.empty() && ParseGoBool(arg).has_value()) {
    err << ": --" << previous_bool << " is a boolean flag and takes its value after \"=\" (--"
        << previous_bool << "=" << arg << ")";
  }
  err << "\n";
}

}  // namespace

std::optional<bool> ParseGoBool(std::string_view text) {
  for (std::string_view yes : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (text == yes) return true;
  }
  for (std::string_view no : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (text == no) return false;
  }
  return std::nullopt;
}

std::optional<ParsedFlags> ParseFlags(const std::vector<std::string>& args, size_t first,
                                      const std::vector<std::string>& allowed, std::ostream& err,
                                      const ExtraFlags& extra) {
  ParsedFlags flags;
  std::string previous_bool;  // a bare boolean flag just before, for a clearer error
  for (size_t i = first; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      flags.help = true;
      continue;
    }
    const std::optional<std::string> short_v = ShortVerbosity(arg);
    if (arg.rfind("--", 0) != 0 && !short_v.has_value()) {
      if (arg.size() > 1 && arg[0] == '-') {
        err << "error: unknown flag " << arg << "\n";
      } else {
        ExplainPositional(arg, previous_bool, err);
      }
      return std::nullopt;
    }
    previous_bool.clear();
    std::string name = short_v.has_value() ? *short_v : arg.substr(2);
    std::optional<std::string> value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const bool boolean = Contains(extra.booleans, name);
    if (!boolean && !Contains(allowed, name) && !Contains(extra.values, name)) {
      err << "error: unknown flag --" << name << "\n";
      return std::nullopt;
    }
    if (!value.has_value() && boolean) {
      value = "true";
      previous_bool = name;
    } else if (!value.has_value() && i + 1 < args.size()) {
      value = args[++i];
    } else if (!value.has_value()) {
      err << "error: flag --" << name << " needs a value\n";
      return std::nullopt;
    }
    flags.values[name] = *value;
  }
  return flags;
}

std::optional<std::string> Get(const ParsedFlags& flags, const std::string& name) {
  auto it = flags.values.find(name);
  if (it == flags.values.end()) return std::nullopt;
  return it->second;
}

bool ParseBool(const ParsedFlags& flags, const std::string& name, std::optional<bool>* value,
               std::ostream& err) {
  const auto text = Get(flags, name);
  if (!text.has_value()) return true;
  *value = ParseGoBool(*text);
  if (!value->has_value()) {
    err << "error: --" << name << " must be true or false, got \"" << *text << "\"\n";
    return false;
  }
  return true;
}

bool ParseUint(const ParsedFlags& flags, const std::string& name, uint64_t* value,
               std::ostream& err) {
  const auto text = Get(flags, name);
  if (!text.has_value()) return true;
  if (!absl::SimpleAtoi(*text, value)) {
    err << "error: --" << name << " must be a non-negative integer, got \"" << *text << "\"\n";
    return false;
  }
  return true;
}

// The most filter/score threads a flag may ask for: far above any machine's cores, and low enough
// that starting them cannot fail.
constexpr uint64_t kMaxThreads = 1024;

// --threads: 0 (the flag's default) picks the CPU count.
bool ParseThreads(const ParsedFlags& flags, int* threads, std::ostream& err) {
  uint64_t value = 0;
  if (!ParseUint(flags, "threads", &value, err)) return false;
  if (value > kMaxThreads) {
    err << "error: --threads must be in 0.." << kMaxThreads << " (0: the default), got " << value
        << "\n";
    return false;
  }
  *threads = static_cast<int>(value);
  return true;
}

}  // namespace kubesched::scheduler

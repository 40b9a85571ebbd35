#pragma once

// A strict reader of the Prometheus text format for tests: every line must be a comment (# HELP /
// # TYPE) or a sample `name{label="value",...} number`, or the whole text is rejected. Queries
// sum the samples whose labels include the given ones.

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kubesched::testing {

struct ScrapeSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

class Scrape {
 public:
  static absl::StatusOr<Scrape> Parse(std::string_view text) {
    Scrape scrape;
    int line_number = 0;
    for (absl::string_view line :
         absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
      ++line_number;
      if (line.empty()) continue;
      if (line[0] == '#') {
        const std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(' ', 3));
        if (parts.size() >= 4 && parts[1] == "TYPE") scrape.types_[parts[2]] = parts[3];
        continue;
      }
      ScrapeSample sample;
      if (!ParseSample(std::string_view(line.data(), line.size()), &sample)) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", line_number, " is not a sample: ", line));
      }
      scrape.samples_.push_back(std::move(sample));
    }
    return scrape;
  }

  // The sum of the samples named `name` whose labels include `labels`.
  double Value(const std::string& name,
               const std::map<std::string, std::string>& labels = {}) const {
    double sum = 0;
    for (const ScrapeSample& sample : samples_) {
      if (sample.name == name && Includes(sample.labels, labels)) sum += sample.value;
    }
    return sum;
  }
  // Whether a sample named `name` with these labels exists.
  bool Has(const std::string& name, const std::map<std::string, std::string>& labels = {}) const {
    for (const ScrapeSample& sample : samples_) {
      if (sample.name == name && Includes(sample.labels, labels)) return true;
    }
    return false;
  }
  // The label names of the samples named `name` (the `le` of buckets included).
  std::set<std::set<std::string>> LabelSets(const std::string& name) const {
    std::set<std::set<std::string>> sets;
    for (const ScrapeSample& sample : samples_) {
      if (sample.name != name) continue;
      std::set<std::string> names;
      for (const auto& [label, value] : sample.labels) names.insert(label);
      sets.insert(names);
    }
    return sets;
  }
  // The `le` bounds of a histogram's buckets with these labels, in order.
  std::vector<std::string> BucketBounds(
      const std::string& histogram, const std::map<std::string, std::string>& labels = {}) const {
    std::vector<std::string> bounds;
    for (const ScrapeSample& sample : samples_) {
      if (sample.name == histogram + "_bucket" && Includes(sample.labels, labels)) {
        bounds.push_back(sample.labels.at("le"));
      }
    }
    return bounds;
  }
  // "counter", "gauge", "histogram"...; "" when the family has no TYPE line.
  std::string Type(const std::string& family) const {
    auto it = types_.find(family);
    return it == types_.end() ? "" : it->second;
  }
  const std::vector<ScrapeSample>& samples() const { return samples_; }

 private:
  static bool Includes(const std::map<std::string, std::string>& labels,
                       const std::map<std::string, std::string>& wanted) {
    for (const auto& [name, value] : wanted) {
      auto it = labels.find(name);
      if (it == labels.end() || it->second != value) return false;
    }
    return true;
  }

  static bool IsNameChar(char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
  }

  static bool ParseSample(std::string_view line, ScrapeSample* sample) {
    size_t i = 0;
    while (i < line.size() && IsNameChar(line[i], i == 0)) ++i;
    if (i == 0) return false;
    sample->name = std::string(line.substr(0, i));
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        const size_t start = i;
        while (i < line.size() && IsNameChar(line[i], i == start)) ++i;
        if (i == start || i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"')
          return false;
        const std::string label(line.substr(start, i - start));
        i += 2;
        std::string value;
        while (i < line.size() && line[i] != '"') {
          if (line[i] == '\\' && i + 1 < line.size()) {
            ++i;
            value.push_back(line[i] == 'n' ? '\n' : line[i]);
          } else {
            value.push_back(line[i]);
          }
          ++i;
        }
        if (i >= line.size()) return false;
        ++i;  // closing quote
        sample->labels[label] = value;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) return false;
      ++i;  // closing brace
    }
    if (i >= line.size() || line[i] != ' ') return false;
    const std::string value(line.substr(i + 1));
    if (value == "+Inf" || value == "-Inf" || value == "Nan" || value == "NaN") {
      sample->value = value == "-Inf" ? -1e308 : 1e308;
      return true;
    }
    char* end = nullptr;
    sample->value = std::strtod(value.c_str(), &end);
    return end != value.c_str() && *end == '\0';
  }

  std::vector<ScrapeSample> samples_;
  std::map<std::string, std::string> types_;
};

}  // namespace kubesched::testing

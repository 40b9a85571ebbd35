#include "tests/testapi/faults.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kubesched::testapi {
namespace {

bool Matches(const std::string& pattern, std::string_view value) {
  return pattern.empty() || pattern == "*" || pattern == value;
}

bool RuleMatches(const FaultRule& rule, const RequestKind& request) {
  return Matches(rule.verb, request.verb) && (Matches(rule.resource, request.resource) ||
                                              Matches(rule.resource, request.qualified_resource));
}

absl::StatusOr<FaultRule> ParseRule(const rapidjson::Value& value, std::string_view list) {
  if (!value.IsObject()) {
    return absl::InvalidArgumentError(
        absl::StrCat("faults: ", std::string(list), " entries must be objects"));
  }
  FaultRule rule;
  if (value.HasMember("verb") && value["verb"].IsString()) rule.verb = value["verb"].GetString();
  if (value.HasMember("resource") && value["resource"].IsString()) {
    rule.resource = value["resource"].GetString();
  }
  if (value.HasMember("code") && value["code"].IsInt()) rule.code = value["code"].GetInt();
  if (value.HasMember("count") && value["count"].IsInt64()) rule.count = value["count"].GetInt64();
  if (value.HasMember("probability") && value["probability"].IsNumber()) {
    rule.probability = value["probability"].GetDouble();
  }
  if (value.HasMember("ms") && value["ms"].IsNumber()) {
    rule.latency = absl::Milliseconds(value["ms"].GetDouble());
  }
  if (list == "errors" && rule.code != 409 && rule.code != 429 && rule.code != 500 &&
      rule.code != 503) {
    return absl::InvalidArgumentError("faults: errors[].code must be 409, 429, 500 or 503");
  }
  return rule;
}

absl::Status ParseRules(const rapidjson::Value& doc, const char* name,
                        std::vector<FaultRule>* rules) {
  if (!doc.HasMember(name)) return absl::OkStatus();
  if (!doc[name].IsArray()) {
    return absl::InvalidArgumentError(absl::StrCat("faults: ", name, " must be an array"));
  }
  for (const auto& entry : doc[name].GetArray()) {
    auto rule = ParseRule(entry, name);
    if (!rule.ok()) return rule.status();
    rules->push_back(*std::move(rule));
  }
  return absl::OkStatus();
}

void WriteRules(const std::vector<FaultRule>& rules, const char* name, bool with_code,
                bool with_latency, rapidjson::Writer<rapidjson::StringBuffer>& writer) {
  writer.Key(name);
  writer.StartArray();
  for (const FaultRule& rule : rules) {
    writer.StartObject();
    writer.Key("verb");
    writer.String(rule.verb.c_str());
    writer.Key("resource");
    writer.String(rule.resource.c_str());
    if (with_code) {
      writer.Key("code");
      writer.Int(rule.code);
    }
    if (with_latency) {
      writer.Key("ms");
      writer.Int64(absl::ToInt64Milliseconds(rule.latency));
    } else {
      writer.Key("count");
      writer.Int64(rule.count);
      writer.Key("probability");
      writer.Double(rule.probability);
    }
    writer.EndObject();
  }
  writer.EndArray();
}

}  // namespace

absl::StatusOr<FaultConfig> ParseFaultConfig(std::string_view json) {
  rapidjson::Document doc;
  if (doc.Parse(json.data(), json.size()).HasParseError() || !doc.IsObject()) {
    return absl::InvalidArgumentError("faults: the configuration must be a JSON object");
  }
  FaultConfig config;
  if (doc.HasMember("watchCloseAfterEvents") && doc["watchCloseAfterEvents"].IsInt64()) {
    config.watch_close_after_events = doc["watchCloseAfterEvents"].GetInt64();
  }
  if (doc.HasMember("watchGone") && doc["watchGone"].IsObject()) {
    const auto& gone = doc["watchGone"];
    if (gone.HasMember("count") && gone["count"].IsInt64()) {
      config.watch_gone_count = gone["count"].GetInt64();
    }
    if (gone.HasMember("mode") && gone["mode"].IsString()) {
      std::string mode = gone["mode"].GetString();
      if (mode != "http" && mode != "event") {
        return absl::InvalidArgumentError("faults: watchGone.mode must be \"http\" or \"event\"");
      }
      config.watch_gone_as_event = mode == "event";
    }
  }
  for (auto [name, rules] :
       {std::pair{"errors", &config.errors}, std::pair{"latency", &config.latency},
        std::pair{"drops", &config.drops}}) {
    absl::Status status = ParseRules(doc, name, rules);
    if (!status.ok()) return status;
  }
  if (doc.HasMember("watchStall")) {
    if (!doc["watchStall"].IsArray()) {
      return absl::InvalidArgumentError("faults: watchStall must be a list of resources");
    }
    for (const auto& resource : doc["watchStall"].GetArray()) {
      if (!resource.IsString()) {
        return absl::InvalidArgumentError("faults: watchStall must be a list of resources");
      }
      config.watch_stall.emplace_back(resource.GetString(), resource.GetStringLength());
    }
  }
  if (doc.HasMember("seed")) {
    if (!doc["seed"].IsUint64()) {
      return absl::InvalidArgumentError("faults: seed must be a non-negative integer");
    }
    config.seed = doc["seed"].GetUint64();
  }
  return config;
}

std::string FaultConfigToJson(const FaultConfig& config) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("watchCloseAfterEvents");
  writer.Int64(config.watch_close_after_events);
  writer.Key("watchGone");
  writer.StartObject();
  writer.Key("count");
  writer.Int64(config.watch_gone_count);
  writer.Key("mode");
  writer.String(config.watch_gone_as_event ? "event" : "http");
  writer.EndObject();
  WriteRules(config.errors, "errors", true, false, writer);
  WriteRules(config.latency, "latency", false, true, writer);
  WriteRules(config.drops, "drops", false, false, writer);
  writer.Key("watchStall");
  writer.StartArray();
  for (const std::string& resource : config.watch_stall) writer.String(resource.c_str());
  writer.EndArray();
  if (config.seed.has_value()) {
    writer.Key("seed");
    writer.Uint64(*config.seed);
  }
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

void Faults::Set(FaultConfig config) {
  absl::MutexLock lock(&mu_);
  if (config.seed.has_value()) {
    std::seed_seq seed{static_cast<uint32_t>(*config.seed),
                       static_cast<uint32_t>(*config.seed >> 32)};
    bitgen_ = absl::BitGen(seed);
  }
  config_ = std::move(config);
}

FaultConfig Faults::Get() const {
  absl::MutexLock lock(&mu_);
  return config_;
}

bool Faults::Fires(FaultRule& rule, const RequestKind& request) {
  if (rule.count == 0 || !RuleMatches(rule, request)) return false;
  if (rule.probability < 1.0 && !absl::Bernoulli(bitgen_, rule.probability)) return false;
  if (rule.count > 0) --rule.count;
  return true;
}

std::optional<int> Faults::TakeError(const RequestKind& request) {
  absl::MutexLock lock(&mu_);
  for (FaultRule& rule : config_.errors) {
    if (Fires(rule, request)) return rule.code;
  }
  return std::nullopt;
}

bool Faults::TakeDrop(const RequestKind& request) {
  absl::MutexLock lock(&mu_);
  for (FaultRule& rule : config_.drops) {
    if (Fires(rule, request)) return true;
  }
  return false;
}

absl::Duration Faults::Latency(const RequestKind& request) const {
  absl::MutexLock lock(&mu_);
  for (const FaultRule& rule : config_.latency) {
    if (RuleMatches(rule, request)) return rule.latency;
  }
  return absl::ZeroDuration();
}

std::optional<bool> Faults::TakeWatchGone() {
  absl::MutexLock lock(&mu_);
  if (config_.watch_gone_count <= 0) return std::nullopt;
  --config_.watch_gone_count;
  return config_.watch_gone_as_event;
}

bool Faults::WatchStalled(std::string_view resource) const {
  absl::MutexLock lock(&mu_);
  return std::find(config_.watch_stall.begin(), config_.watch_stall.end(), resource) !=
         config_.watch_stall.end();
}

int64_t Faults::watch_close_after_events() const {
  absl::MutexLock lock(&mu_);
  return config_.watch_close_after_events;
}

}  // namespace kubesched::testapi

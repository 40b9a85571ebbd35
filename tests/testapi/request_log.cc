#include "tests/testapi/request_log.h"

#include <algorithm>

#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kubesched::testapi {
namespace {

bool IsWatch(std::string_view query) {
  while (!query.empty()) {
    const size_t end = std::min(query.find('&'), query.size());
    const std::string_view parameter = query.substr(0, end);
    if (parameter == "watch=true" || parameter == "watch=1") return true;
    query.remove_prefix(std::min(end + 1, query.size()));
  }
  return false;
}

}  // namespace

void RequestLog::Record(std::string_view authorization, std::string_view method,
                        std::string_view path, std::string_view query) {
  if (path.starts_with("/testapi/")) return;
  constexpr std::string_view kBearer = "Bearer ";
  std::string by;
  if (authorization.starts_with(kBearer)) by = authorization.substr(kBearer.size());
  absl::MutexLock lock(&mu_);
  ++counts_[Key(std::move(by), std::string(method), std::string(path), IsWatch(query))];
}

std::string RequestLog::Json() const {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("requests");
  writer.StartArray();
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, count] : counts_) {
      const auto& [by, method, path, watch] = key;
      writer.StartObject();
      writer.Key("by");
      writer.String(by.data(), static_cast<rapidjson::SizeType>(by.size()));
      writer.Key("method");
      writer.String(method.data(), static_cast<rapidjson::SizeType>(method.size()));
      writer.Key("path");
      writer.String(path.data(), static_cast<rapidjson::SizeType>(path.size()));
      writer.Key("watch");
      writer.Bool(watch);
      writer.Key("count");
      writer.Int64(count);
      writer.EndObject();
    }
  }
  writer.EndArray();
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

void RequestLog::Clear() {
  absl::MutexLock lock(&mu_);
  counts_.clear();
}

}  // namespace kubesched::testapi

#pragma once

// What configz.cc and configz_args.cc share: the JSON writer and its field helpers.

#include <string_view>

#include "config/config.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/serving/configz.h"

namespace kubesched::serving::internal {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

inline void Key(Writer& out, std::string_view key) {
  out.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
}

inline void String(Writer& out, std::string_view key, std::string_view value) {
  Key(out, key);
  out.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

// A plugin's args as an object of upstream's internal field names; null for a plugin without.
void WritePluginArgs(Writer& out, const config::PluginArgs& args);

}  // namespace kubesched::serving::internal

#pragma once

// The small JSON writing helpers simulate's and explain's reports share.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rapidjson/prettywriter.h"
#include "rapidjson/stringbuffer.h"
#include "scheduler/api/resource.h"
#include "scheduler/util/utf8.h"

namespace kubesched::scheduler::json_writer {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

// rapidjson copies invalid UTF-8 as it is; names read from a cluster file may hold any bytes, and
// the report must stay valid JSON.
inline void String(Writer& w, std::string_view s) {
  if (!util::IsValidUtf8(s)) {
    const std::string valid = util::ToValidUtf8(s);
    w.String(valid.data(), static_cast<rapidjson::SizeType>(valid.size()));
    return;
  }
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}
inline void OptionalString(Writer& w, const std::optional<std::string>& s) {
  if (s.has_value()) {
    String(w, *s);
  } else {
    w.Null();
  }
}
inline void Key(Writer& w, std::string_view key) { String(w, key); }

inline void Field(Writer& w, std::string_view key, int64_t value) {
  Key(w, key);
  w.Int64(value);
}
inline void Field(Writer& w, std::string_view key, double value) {
  Key(w, key);
  w.Double(value);
}
inline void Field(Writer& w, std::string_view key, std::string_view value) {
  Key(w, key);
  String(w, value);
}
inline void Field(Writer& w, std::string_view key, const std::optional<std::string>& value) {
  Key(w, key);
  OptionalString(w, value);
}

inline void Resources(Writer& w, const api::ResourceList& list) {
  w.StartObject();
  list.ForEachNonZero([&](api::ResourceId id, int64_t amount) {
    Key(w, api::ResourceName(id));
    String(w, api::FormatAmount(id, amount));
  });
  w.EndObject();
}

}  // namespace kubesched::scheduler::json_writer

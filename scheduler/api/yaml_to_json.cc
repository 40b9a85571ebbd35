#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "scheduler/api/parse_internal.h"
#include "scheduler/api/yaml_guard.h"
#include "scheduler/api/yaml_to_json_internal.h"
#include "scheduler/util/strings.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/mark.h"

namespace kubesched::api::internal {
namespace {

using Value = rapidjson::Value;

size_t DigitRun(std::string_view s, size_t i) {
  size_t n = 0;
  while (i + n < s.size() && s[i + n] >= '0' && s[i + n] <= '9') ++n;
  return n;
}

// The core schema's float pattern: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsCoreFloat(std::string_view s) {
  size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  const size_t int_digits = DigitRun(s, i);
  i += int_digits;
  size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    frac_digits = DigitRun(s, ++i);
    i += frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    const size_t exp_digits = DigitRun(s, i);
    if (exp_digits == 0) return false;
    i += exp_digits;
  }
  return i == s.size();
}

// 0o17 and 0x1F; values past uint64 stay strings.
bool ParseRadixInt(std::string_view s, Value* out) {
  if (s.size() < 3 || s[0] != '0' || (s[1] != 'o' && s[1] != 'x')) return false;
  uint64_t v = 0;
  const int base = s[1] == 'o' ? 8 : 16;
  const auto [end, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), v, base);
  if (ec != std::errc() || end != s.data() + s.size()) return false;
  if (v <= static_cast<uint64_t>(INT64_MAX)) {
    out->SetInt64(static_cast<int64_t>(v));
  } else {
    out->SetUint64(v);
  }
  return true;
}

bool ParseFloat(std::string_view s, Value* out) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  double d = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  // Out-of-range values stay strings rather than becoming infinities in the DOM.
  if (ec != std::errc() || end != s.data() + s.size()) return false;
  out->SetDouble(d);
  return true;
}

bool IsOneOf(std::string_view s, std::initializer_list<std::string_view> options) {
  for (std::string_view option : options) {
    if (s == option) return true;
  }
  return false;
}

// YAML 1.2 core-schema resolution of a plain scalar. Infinity and NaN stay strings: JSON has no
// such numbers.
Value ResolvePlain(const std::string& text, rapidjson::Document::AllocatorType& alloc) {
  Value v;
  if (IsOneOf(text, {"", "~", "null", "Null", "NULL"})) return v;
  if (IsOneOf(text, {"true", "True", "TRUE"})) return Value(true);
  if (IsOneOf(text, {"false", "False", "FALSE"})) return Value(false);
  int64_t i = 0;
  if (ParseInt64(text, &i)) return Value(static_cast<int64_t>(i));
  if (ParseRadixInt(text, &v)) return v;
  if (IsCoreFloat(text) && ParseFloat(text, &v)) return v;
  return Value(text.data(), static_cast<rapidjson::SizeType>(text.size()), alloc);
}

// Non-specific tags are "?" (plain) and "!" (quoted); explicit core tags resolve like plain
// scalars except !!str. Any other tag keeps the text.
bool ResolvesLikePlain(const std::string& tag) {
  return tag == "?" || IsOneOf(tag, {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                                     "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"});
}

// Builds JSON values from yaml-cpp's parse events. Containers under construction live on an
// explicit stack, so nesting depth costs heap, not C++ stack. The guard of ParseYamlEvents bounds
// what aliases may expand to and rejects aliases to incomplete anchors.
class JsonBuilder final : public YAML::EventHandler {
 public:
  explicit JsonBuilder(rapidjson::Document* out) : out_(out), alloc_(out->GetAllocator()) {
    out_->SetArray();
  }

  void OnDocumentStart(const YAML::Mark&) override {
    anchors_.clear();  // anchors are scoped to one document
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override {
    Complete(ExpectingKey() ? Value("null", alloc_) : Value(), anchor);
  }

  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) Fail("alias refers to an anchor that is not complete");
    Complete(Value(it->second, alloc_), YAML::NullAnchor);
  }

  void OnScalar(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                const std::string& text) override {
    if (ExpectingKey() || !ResolvesLikePlain(tag)) {
      const auto size = static_cast<rapidjson::SizeType>(text.size());
      Complete(Value(text.data(), size, alloc_), anchor);
    } else {
      Complete(ResolvePlain(text, alloc_), anchor);
    }
  }

  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(rapidjson::kArrayType, anchor);
  }
  void OnSequenceEnd() override { Close(); }

  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(rapidjson::kObjectType, anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    Value value;
    Value key;
    bool has_key = false;
    YAML::anchor_t anchor = YAML::NullAnchor;
  };

  [[noreturn]] static void Fail(std::string message) { throw YamlHandlerStop{std::move(message)}; }

  bool ExpectingKey() const {
    return !stack_.empty() && stack_.back().value.IsObject() && !stack_.back().has_key;
  }

  void Open(rapidjson::Type type, YAML::anchor_t anchor) {
    if (ExpectingKey()) Fail("mapping keys must be scalars");
    stack_.push_back(Frame{Value(type), Value(), false, anchor});
  }

  void Close() {
    if (stack_.empty()) Fail("unbalanced YAML events");
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    Complete(std::move(frame.value), frame.anchor);
  }

  // Places a finished value: as a document, an array element, a mapping key or a mapping value.
  void Complete(Value value, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = Value(value, alloc_);
    if (stack_.empty()) {
      out_->PushBack(value, alloc_);
      return;
    }
    Frame& top = stack_.back();
    if (top.value.IsArray()) {
      top.value.PushBack(value, alloc_);
    } else if (!top.has_key) {
      if (!value.IsString()) Fail("mapping keys must be scalars");
      top.key = std::move(value);
      top.has_key = true;
    } else {
      top.value.AddMember(top.key, value, alloc_);
      top.has_key = false;
    }
  }

  rapidjson::Document* out_;
  rapidjson::Document::AllocatorType& alloc_;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, Value> anchors_;
};

}  // namespace

absl::Status YamlToJson(std::string_view text, std::string_view source, rapidjson::Document* out) {
  JsonBuilder builder(out);
  YamlParseError error;
  if (ParseYamlEvents(text, builder, &error)) return absl::OkStatus();
  const std::string_view at = error.mark.is_null() ? ": " : " at ";
  return absl::InvalidArgumentError(
      absl::StrCat(util::Absl(source), ": invalid YAML", util::Absl(at), error.ToString()));
}

}  // namespace kubesched::api::internal

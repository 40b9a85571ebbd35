#include <algorithm>
#include <charconv>
#include <cstdint>
#include <exception>
#include <istream>
#include <streambuf>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "scheduler/api/parse_internal.h"
#include "scheduler/api/yaml_to_json_internal.h"
#include "scheduler/util/strings.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/exceptions.h"
#include "yaml-cpp/mark.h"
#include "yaml-cpp/parser.h"

namespace kubesched::api::internal {
namespace {

using Value = rapidjson::Value;

// Thrown by the event handler to stop yaml-cpp; caught in YamlToJson, never leaves this file.
struct ConversionError {
  YAML::Mark mark;
  std::string message;
};

// Reads the caller's text in place instead of copying it into a stringstream.
class MemoryStreamBuf : public std::streambuf {
 public:
  explicit MemoryStreamBuf(std::string_view text) {
    char* begin = const_cast<char*>(text.data());  // the get area is only read
    setg(begin, begin, begin + text.size());
  }
};

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
// explicit stack, so nesting depth costs heap, not C++ stack. Aliases are the one way to build
// more than the input spells out, so they are bounded twice: by a value budget (alias bombs) and
// by a depth limit (copying a value recurses over its depth).
class JsonBuilder final : public YAML::EventHandler {
 public:
  JsonBuilder(rapidjson::Document* out, size_t budget)
      : out_(out), alloc_(out->GetAllocator()), budget_(budget) {
    out_->SetArray();
  }

  void OnDocumentStart(const YAML::Mark& mark) override {
    mark_ = mark;
    anchors_.clear();  // anchors are scoped to one document
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    mark_ = mark;
    Charge(1);
    Complete(ExpectingKey() ? Value("null", alloc_) : Value(), anchor, {1, 1});
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    mark_ = mark;
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) Fail("alias refers to an anchor that is not complete");
    const Shape shape = it->second.shape;
    Charge(shape.size);
    CheckDepth(shape);
    Complete(Value(it->second.value, alloc_), YAML::NullAnchor, shape);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& text) override {
    mark_ = mark;
    Charge(1);
    if (ExpectingKey() || !ResolvesLikePlain(tag)) {
      const auto size = static_cast<rapidjson::SizeType>(text.size());
      Complete(Value(text.data(), size, alloc_), anchor, {1, 1});
    } else {
      Complete(ResolvePlain(text, alloc_), anchor, {1, 1});
    }
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, rapidjson::kArrayType, anchor);
  }
  void OnSequenceEnd() override { Close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, rapidjson::kObjectType, anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  // yaml-cpp stops at depth 2000 by itself; only aliases can nest deeper.
  static constexpr size_t kMaxDepth = 2048;

  // Number of values in a subtree and its height.
  struct Shape {
    size_t size = 0;
    size_t height = 0;
  };
  struct Frame {
    Value value;
    Value key;
    bool has_key = false;
    YAML::anchor_t anchor = YAML::NullAnchor;
    size_t start = 0;         // count_ when the container opened
    size_t child_height = 0;  // tallest child so far
  };
  struct Anchored {
    Value value;
    Shape shape;
  };

  [[noreturn]] void Fail(std::string message) { throw ConversionError{mark_, std::move(message)}; }

  // Counts `n` values added to the output.
  void Charge(size_t n) {
    count_ += n;
    Spend(n);
  }
  void Spend(size_t n) {
    spent_ += n;
    if (spent_ > budget_) Fail("document too large (alias expansion?)");
  }
  void CheckDepth(const Shape& shape) {
    if (stack_.size() + shape.height > kMaxDepth) Fail("nesting too deep");
  }

  bool ExpectingKey() const {
    return !stack_.empty() && stack_.back().value.IsObject() && !stack_.back().has_key;
  }

  void Open(const YAML::Mark& mark, rapidjson::Type type, YAML::anchor_t anchor) {
    mark_ = mark;
    if (ExpectingKey()) Fail("mapping keys must be scalars");
    const size_t start = count_;
    Charge(1);
    stack_.push_back(Frame{Value(type), Value(), false, anchor, start, 0});
  }

  void Close() {
    if (stack_.empty()) Fail("unbalanced YAML events");
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    Complete(std::move(frame.value), frame.anchor, {count_ - frame.start, frame.child_height + 1});
  }

  // Places a finished value: as a document, an array element, a mapping key or a mapping value.
  void Complete(Value value, YAML::anchor_t anchor, Shape shape) {
    if (anchor != YAML::NullAnchor) {
      Spend(shape.size);  // the copy kept for aliases
      anchors_[anchor] = Anchored{Value(value, alloc_), shape};
    }
    if (stack_.empty()) {
      out_->PushBack(value, alloc_);
      return;
    }
    Frame& top = stack_.back();
    top.child_height = std::max(top.child_height, shape.height);
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
  const size_t budget_;
  size_t count_ = 0;  // values in the output so far
  size_t spent_ = 0;  // values created so far, anchor copies included
  YAML::Mark mark_;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, Anchored> anchors_;
};

absl::Status YamlError(std::string_view source, const YAML::Mark& mark, std::string_view what) {
  if (mark.is_null()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: invalid YAML: %s", util::Absl(source), util::Absl(what)));
  }
  return absl::InvalidArgumentError(absl::StrFormat("%s: invalid YAML at line %d, column %d: %s",
                                                    util::Absl(source), mark.line + 1,
                                                    mark.column + 1, util::Absl(what)));
}

}  // namespace

absl::Status YamlToJson(std::string_view text, std::string_view source, rapidjson::Document* out) {
  // Without aliases a document has fewer values than characters; the budget only bites on alias
  // bombs, keeping memory proportional to the input.
  const size_t budget = 16 * text.size() + 4096;
  MemoryStreamBuf buffer(text);
  std::istream stream(&buffer);
  try {
    JsonBuilder builder(out, budget);
    YAML::Parser parser(stream);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const ConversionError& e) {
    return YamlError(source, e.mark, e.message);
  } catch (const YAML::Exception& e) {
    return YamlError(source, e.mark, e.msg);
  } catch (const std::exception& e) {
    return YamlError(source, YAML::Mark::null_mark(), e.what());
  }
  return absl::OkStatus();
}

}  // namespace kubesched::api::internal

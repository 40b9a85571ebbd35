#include "policy/template_text.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "scheduler/api/labels.h"
#include "scheduler/util/strings.h"

namespace kubesched::policy {

using util::Absl;

std::string Quote(std::string_view text) { return absl::StrCat("\"", Absl(text), "\""); }

absl::Status PolicyError(std::string_view policy, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("policy ", Quote(policy), ": ", Absl(message)));
}

namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

}  // namespace

bool IsDnsLabelText(std::string_view text) {
  if (text.empty() || !IsLowerAlnum(text.front()) || !IsLowerAlnum(text.back())) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

namespace {

// A node name, as upstream validates a matchFields metadata.name value: an RFC 1123 subdomain.
bool IsValidNodeName(std::string_view name) {
  constexpr size_t kMaxSubdomainLength = 253;
  if (name.empty() || name.size() > kMaxSubdomainLength) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    if (!IsDnsLabelText(name.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// Go's strconv.ParseInt(text, 10, 64), which upstream uses for Gt and Lt.
bool IsInteger(std::string_view text) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-') text.remove_prefix(1);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string_view Expected(TextKind kind) {
  switch (kind) {
    case TextKind::kLabelKey:
      return "a valid label key";
    case TextKind::kLabelValue:
      return "a valid label value";
    case TextKind::kInteger:
      return "an integer";
    case TextKind::kFieldKey:
      return "metadata.name (the only field matchFields take)";
    case TextKind::kNodeName:
      return "a valid node name";
  }
  return "valid";
}

bool IsValidText(TextKind kind, std::string_view text) {
  switch (kind) {
    case TextKind::kLabelKey:
      return api::IsValidLabelKey(text);
    case TextKind::kLabelValue:
      return api::IsValidLabelValue(text);
    case TextKind::kInteger:
      return IsInteger(text);
    case TextKind::kFieldKey:
      return text == "metadata.name";
    case TextKind::kNodeName:
      return IsValidNodeName(text);
  }
  return false;
}

namespace {

bool IsHoleNameStart(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool IsHoleNameChar(char c) { return IsHoleNameStart(c) || (c >= '0' && c <= '9'); }

bool IsHoleName(std::string_view name) {
  return !name.empty() && IsHoleNameStart(name.front()) &&
         std::all_of(name.begin(), name.end(), IsHoleNameChar);
}

int HoleIndex(std::string_view name, std::vector<std::string>* holes) {
  const auto it = std::find(holes->begin(), holes->end(), name);
  if (it != holes->end()) return static_cast<int>(it - holes->begin());
  holes->emplace_back(name);
  return static_cast<int>(holes->size() - 1);
}

}  // namespace

std::string_view TrimSpace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

absl::Status SplitHoles(std::string_view text, std::vector<std::string>* holes, TemplateText* out) {
  constexpr std::string_view kOpen = "{{";
  constexpr std::string_view kClose = "}}";
  size_t position = 0;
  while (position < text.size()) {
    const size_t open = text.find(kOpen, position);
    if (open != position) {
      out->segments.push_back({std::string(text.substr(position, open - position)), kLiteral});
    }
    if (open == std::string_view::npos) break;
    const size_t close = text.find(kClose, open + kOpen.size());
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("unterminated hole ", Quote(text.substr(open))));
    }
    const std::string_view hole = text.substr(open, close + kClose.size() - open);
    const std::string_view inside =
        TrimSpace(text.substr(open + kOpen.size(), close - open - kOpen.size()));
    if (inside.empty() || inside.front() != '.' || !IsHoleName(inside.substr(1))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad hole ", Quote(hole),
          ": want {{.Name}}, Name a letter or '_' followed by letters, digits or '_'"));
    }
    out->segments.push_back({std::string(), HoleIndex(inside.substr(1), holes)});
    out->has_holes = true;
    position = close + kClose.size();
  }
  return absl::OkStatus();
}

void AppendRendered(const TemplateText& text, absl::Span<const std::string_view> hole_values,
                    std::string* out) {
  for (const Segment& segment : text.segments) {
    if (segment.hole == kLiteral) {
      out->append(segment.literal);
    } else {
      out->append(hole_values[static_cast<size_t>(segment.hole)]);
    }
  }
}

}  // namespace kubesched::policy

#include "scheduler/api/yaml_guard.h"

#include <algorithm>
#include <exception>
#include <istream>
#include <optional>
#include <streambuf>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "yaml-cpp/depthguard.h"
#include "yaml-cpp/exceptions.h"
#include "yaml-cpp/parser.h"

namespace kubesched::api {
namespace {

// Reads the caller's text in place instead of copying it into a stringstream.
class MemoryStreamBuf : public std::streambuf {
 public:
  explicit MemoryStreamBuf(std::string_view text) {
    char* begin = const_cast<char*>(text.data());  // the get area is only read
    setg(begin, begin, begin + text.size());
  }
};

// Checks the event stream, then forwards each event to the real handler. Containers under
// construction live on an explicit stack, so nesting costs heap, not C++ stack.
class GuardedHandler final : public YAML::EventHandler {
 public:
  GuardedHandler(YAML::EventHandler& target, size_t budget) : target_(target), budget_(budget) {}

  const YAML::Mark& mark() const { return mark_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    mark_ = mark;
    // yaml-cpp 0.7's endless loop: every later document starts where this one did.
    if (documents_ > 0 && mark.pos == last_document_pos_) {
      Stop("unexpected ',' (a flow entry outside brackets)");
    }
    ++documents_;
    last_document_pos_ = mark.pos;
    anchors_.clear();  // anchors are scoped to one document
    target_.OnDocumentStart(mark);
  }
  void OnDocumentEnd() override { target_.OnDocumentEnd(); }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Leaf(mark, anchor);
    target_.OnNull(mark, anchor);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    mark_ = mark;
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) Stop("alias refers to an anchor that is not complete");
    const Shape shape = it->second;
    Charge(shape.size);
    if (stack_.size() + shape.height > kMaxDepth) Stop("nesting too deep");
    Complete(YAML::NullAnchor, shape);
    target_.OnAlias(mark, anchor);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& text) override {
    Leaf(mark, anchor);
    target_.OnScalar(mark, tag, anchor, text);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    Open(mark, anchor);
    target_.OnSequenceStart(mark, tag, anchor, style);
  }
  void OnSequenceEnd() override {
    Close();
    target_.OnSequenceEnd();
  }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    Open(mark, anchor);
    target_.OnMapStart(mark, tag, anchor, style);
  }
  void OnMapEnd() override {
    Close();
    target_.OnMapEnd();
  }

 private:
  // yaml-cpp 0.7 stops nesting at depth 500 by itself (DeepRecursion); only aliases can nest
  // deeper.
  static constexpr size_t kMaxDepth = 2048;

  // Number of values in a subtree and its height.
  struct Shape {
    size_t size = 0;
    size_t height = 0;
  };
  struct Frame {
    YAML::anchor_t anchor = YAML::NullAnchor;
    size_t start = 0;         // count_ when the container opened
    size_t child_height = 0;  // tallest child so far
  };

  [[noreturn]] static void Stop(std::string message) { throw YamlHandlerStop{std::move(message)}; }

  // Counts `n` values created by the consumer; anchored copies count again (Complete).
  void Charge(size_t n) {
    count_ += n;
    Spend(n);
  }
  void Spend(size_t n) {
    spent_ += n;
    if (spent_ > budget_) Stop("document too large (alias expansion?)");
  }

  void Leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    mark_ = mark;
    Charge(1);
    Complete(anchor, {1, 1});
  }

  void Open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    mark_ = mark;
    const size_t start = count_;
    Charge(1);
    stack_.push_back(Frame{anchor, start, 0});
  }

  void Close() {
    if (stack_.empty()) Stop("unbalanced YAML events");
    const Frame frame = stack_.back();
    stack_.pop_back();
    Complete(frame.anchor, {count_ - frame.start, frame.child_height + 1});
  }

  void Complete(YAML::anchor_t anchor, Shape shape) {
    if (anchor != YAML::NullAnchor) {
      Spend(shape.size);  // a consumer may keep a copy for aliases
      anchors_[anchor] = shape;
    }
    if (!stack_.empty()) {
      stack_.back().child_height = std::max(stack_.back().child_height, shape.height);
    }
  }

  YAML::EventHandler& target_;
  const size_t budget_;
  size_t count_ = 0;  // values in the output so far
  size_t spent_ = 0;  // values created so far, anchor copies included
  size_t documents_ = 0;
  int last_document_pos_ = 0;
  YAML::Mark mark_ = YAML::Mark::null_mark();
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, Shape> anchors_;
};

// Builds yaml-cpp nodes from events, as YAML::LoadAll does. The guard has already rejected
// aliases to incomplete anchors, so no node can contain itself.
//
// A node made on its own has its own memory, which is copied into a tree's memory when the node
// joins the tree. Built bottom-up, every subtree would be copied once per level above it; so each
// container joins one arena as it opens, and whatever is added to it later lands in the arena's
// memory directly, which makes joining the tree free.
class NodeBuilder final : public YAML::EventHandler {
 public:
  std::vector<YAML::Node> Take() { return std::move(documents_); }

  void OnDocumentStart(const YAML::Mark&) override { anchors_.clear(); }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override {
    Complete(YAML::Node(YAML::NodeType::Null), anchor);
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    Complete(anchors_.at(anchor), YAML::NullAnchor);
  }
  void OnScalar(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                const std::string& text) override {
    YAML::Node node(text);
    node.SetTag(tag);
    Complete(node, anchor);
  }

  void OnSequenceStart(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    Open(YAML::NodeType::Sequence, tag, anchor, style);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    Open(YAML::NodeType::Map, tag, anchor, style);
  }
  void OnMapEnd() override { Close(); }

 private:
  // YAML::Node's assignment writes through to the node assigned to, so keys and anchors are
  // only ever constructed, never assigned: a reused key would rename every earlier key.
  struct Frame {
    YAML::Node node;
    std::optional<YAML::Node> key;
    YAML::anchor_t anchor = YAML::NullAnchor;
  };

  void Open(YAML::NodeType::value type, const std::string& tag, YAML::anchor_t anchor,
            YAML::EmitterStyle::value style) {
    YAML::Node node(type);
    node.SetTag(tag);
    node.SetStyle(style);
    arena_.push_back(node);  // moves the node's memory into the arena's, while it is one node
    stack_.push_back(Frame{node, std::nullopt, anchor});
  }

  void Close() {
    if (stack_.empty()) throw YamlHandlerStop{"unbalanced YAML events"};
    const Frame frame = std::move(stack_.back());
    stack_.pop_back();
    Complete(frame.node, frame.anchor);
  }

  // Places a finished node: as a document, a sequence element, a mapping key or a mapping value.
  void Complete(const YAML::Node& node, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) {
      anchors_.erase(anchor);
      anchors_.emplace(anchor, node);
    }
    if (stack_.empty()) {
      documents_.push_back(node);
      return;
    }
    Frame& top = stack_.back();
    if (top.node.IsSequence()) {
      top.node.push_back(node);
    } else if (!top.key.has_value()) {
      top.key.emplace(node);
    } else {
      top.node.force_insert(*top.key, node);  // keeps repeated keys for the strict decoders
      top.key.reset();
    }
  }

  YAML::Node arena_{YAML::NodeType::Sequence};
  std::vector<YAML::Node> documents_;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, YAML::Node> anchors_;
};

}  // namespace

std::string YamlParseError::ToString() const {
  if (mark.is_null()) return message;
  // Marks are 0-based; editors count from 1.
  return absl::StrCat("line ", mark.line + 1, ", column ", mark.column + 1, ": ", message);
}

bool ParseYamlEvents(std::string_view text, YAML::EventHandler& handler, YamlParseError* error) {
  // Without aliases a document has fewer values than characters; the budget only bites on alias
  // bombs, keeping memory proportional to the input.
  GuardedHandler guard(handler, 16 * text.size() + 4096);
  try {
    MemoryStreamBuf buffer(text);
    std::istream stream(&buffer);
    YAML::Parser parser(stream);
    while (parser.HandleNextDocument(guard)) {
    }
    return true;
  } catch (const YamlHandlerStop& e) {
    *error = YamlParseError{guard.mark(), e.message};
  } catch (const YAML::DeepRecursion&) {
    // Its own message is "bad file", at the start of the text.
    *error = YamlParseError{guard.mark(), "nesting too deep"};
  } catch (const YAML::Exception& e) {
    *error = YamlParseError{e.mark, e.msg};
  } catch (const std::exception& e) {
    *error = YamlParseError{YAML::Mark::null_mark(), e.what()};
  }
  return false;
}

absl::StatusOr<std::vector<YAML::Node>> LoadYamlDocuments(std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("document is ", text.size(), " bytes, more than the limit of ", max_bytes));
  }
  NodeBuilder builder;
  YamlParseError error;
  if (!ParseYamlEvents(text, builder, &error)) {
    return absl::InvalidArgumentError(error.ToString());
  }
  return builder.Take();
}

}  // namespace kubesched::api

// DecodeFileQueue: a JSON list read from the file in slices and decoded one item at a time, so
// that a cluster dump of hundreds of MiB never sits in memory as text and parsed document beside
// its objects. Every other input (YAML, a single object, anything that does not parse) goes
// through DecodeFile, which gives the same objects and problems and reports errors with their
// line and column.

#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "rapidjson/document.h"
#include "rapidjson/filereadstream.h"
#include "rapidjson/reader.h"
#include "scheduler/api/decode.h"
#include "scheduler/api/decode_collector.h"

namespace kubesched::api {
namespace {

constexpr size_t kReadSlice = size_t{1} << 16;
// The parsed form of one item lives in this much reused memory (larger items spill over).
constexpr size_t kItemArena = size_t{1} << 16;

// SAX events of the whole file in; each item of the root's list (or the root array) out, built
// as a parsed value and handed to the collector, after which its memory is reused. What the
// root says besides its items is only read for its kind: the root is a list when it has items
// and its kind is absent or ends in "List", as the collector's own test. Returning false stops
// the parse: the input needs DecodeFile (see `fallback`).
class ItemStream {
 public:
  explicit ItemStream(internal::Collector* collector)
      : arena_(std::make_unique<char[]>(kItemArena)),
        pool_(arena_.get(), kItemArena),
        item_(&pool_),
        collector_(collector) {}

  // After a complete parse: whether the root turned out to be a list this stream decoded.
  bool RootWasList() const { return root_is_array_ || (items_started_ && kind_ != Kind::kNotList); }

  bool Null() {
    return Scalar(Token::kNull, [](auto& h) { return h.Null(); });
  }
  bool Bool(bool b) {
    return Scalar(Token::kOther, [b](auto& h) { return h.Bool(b); });
  }
  bool Int(int i) {
    return Scalar(Token::kOther, [i](auto& h) { return h.Int(i); });
  }
  bool Uint(unsigned u) {
    return Scalar(Token::kOther, [u](auto& h) { return h.Uint(u); });
  }
  bool Int64(int64_t i) {
    return Scalar(Token::kOther, [i](auto& h) { return h.Int64(i); });
  }
  bool Uint64(uint64_t u) {
    return Scalar(Token::kOther, [u](auto& h) { return h.Uint64(u); });
  }
  bool Double(double d) {
    return Scalar(Token::kOther, [d](auto& h) { return h.Double(d); });
  }
  bool RawNumber(const char* str, rapidjson::SizeType length, bool copy) {
    return Scalar(Token::kOther, [&](auto& h) { return h.RawNumber(str, length, copy); });
  }
  bool String(const char* str, rapidjson::SizeType length, bool copy) {
    if (!InItem() && !AtItemLevel() && expect_ == Expect::kKind) {
      kind_ = std::string_view(str, length).ends_with("List") ? Kind::kList : Kind::kNotList;
    }
    return Scalar(Token::kString, [&](auto& h) { return h.String(str, length, copy); });
  }
  bool Key(const char* str, rapidjson::SizeType length, bool copy) {
    if (InItem()) return item_.Key(str, length, copy);
    if (depth_ == 1 && !root_is_array_) {
      const std::string_view key(str, length);
      // The first member of each name counts, as a parsed document's look-up finds it.
      if (key == "kind" && !kind_seen_) {
        kind_seen_ = true;
        expect_ = Expect::kKind;
      } else if (key == "items" && !items_seen_) {
        items_seen_ = true;
        expect_ = Expect::kItems;
      }
    }
    return true;
  }
  bool StartObject() {
    return Open([](auto& h) { return h.StartObject(); }, false);
  }
  bool StartArray() {
    return Open([](auto& h) { return h.StartArray(); }, true);
  }
  bool EndObject(rapidjson::SizeType members) {
    return Close([members](auto& h) { return h.EndObject(members); });
  }
  bool EndArray(rapidjson::SizeType elements) {
    return Close([elements](auto& h) { return h.EndArray(elements); });
  }

 private:
  enum class Expect : uint8_t { kNothing, kKind, kItems };
  enum class Token : uint8_t { kNull, kString, kOther };
  enum class Kind : uint8_t { kAbsent, kList, kNotList };

  bool InItem() const { return item_depth_ > 0; }
  // Whether the next value is an item of the root's list (or of the root array).
  bool AtItemLevel() const { return (root_is_array_ && depth_ == 1) || (in_items_ && depth_ == 2); }

  // A scalar: part of an item, an item itself, or a member of the root. There a null member is
  // an absent one; a "kind" that is no string makes the root an item, and "items" that is no
  // array needs the collector's own problem or makes the root an item: both need DecodeFile.
  template <typename Event>
  bool Scalar(Token token, Event&& event) {
    if (InItem()) return event(item_);
    if (AtItemLevel()) return event(item_) && FinishItem();
    switch (std::exchange(expect_, Expect::kNothing)) {
      case Expect::kKind:
        return token != Token::kOther;
      case Expect::kItems:
        return false;
      case Expect::kNothing:
        return true;
    }
    return true;
  }

  template <typename Event>
  bool Open(Event&& event, bool array) {
    if (InItem() || AtItemLevel()) {
      ++item_depth_;
      return event(item_);
    }
    const Expect expected = std::exchange(expect_, Expect::kNothing);
    if (depth_ == 0) {
      root_is_array_ = array;
    } else if (expected == Expect::kKind) {
      return false;
    } else if (expected == Expect::kItems) {
      if (!array) return false;
      in_items_ = true;
      items_started_ = true;
    }
    ++depth_;
    return true;
  }

  template <typename Event>
  bool Close(Event&& event) {
    if (InItem()) {
      if (!event(item_)) return false;
      return --item_depth_ > 0 || FinishItem();
    }
    if (in_items_ && depth_ == 2) in_items_ = false;
    --depth_;
    return true;
  }

  // The item's events are all in: make it the document's value, decode it, reuse the memory.
  bool FinishItem() {
    auto done = [](auto& /*handler*/) { return true; };
    item_.Populate(done);
    collector_->AddItemOrList(item_, 1);
    item_.SetNull();
    pool_.Clear();
    return true;
  }

  std::unique_ptr<char[]> arena_;
  rapidjson::MemoryPoolAllocator<> pool_;
  rapidjson::Document item_;
  internal::Collector* collector_;
  int depth_ = 0;       // containers open outside the current item
  int item_depth_ = 0;  // containers open inside it
  bool root_is_array_ = false;
  bool in_items_ = false;
  bool items_seen_ = false;
  bool items_started_ = false;
  bool kind_seen_ = false;
  Expect expect_ = Expect::kNothing;
  Kind kind_ = Kind::kAbsent;
};

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

// Whether the file starts like JSON ('{' or '[' after spaces), as DecodeObjects tells JSON from
// YAML.
bool StartsLikeJson(std::FILE* file) {
  for (int c = std::fgetc(file); c != EOF; c = std::fgetc(file)) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{' || c == '[';
  }
  return false;
}

// The file decoded item by item; nullopt when it needs DecodeFile: not a regular file within the
// size limit, not JSON, not a list, or not parsing to the end of the file (a syntax error, a NUL
// byte).
std::optional<DecodedObjectQueue> StreamList(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) ||
      static_cast<uint64_t>(info.st_size) > kMaxObjectFileBytes) {
    return std::nullopt;
  }
  const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr || !StartsLikeJson(file.get())) return std::nullopt;
  std::rewind(file.get());
  DecodedObjectQueue queue;
  const auto keep = [&queue](Object&& object) { queue.objects.push_back(std::move(object)); };
  internal::Collector collector(path, keep, &queue.problems);
  ItemStream items(&collector);
  const auto slice = std::make_unique<char[]>(kReadSlice);
  rapidjson::FileReadStream in(file.get(), slice.get(), kReadSlice);
  rapidjson::Reader reader;
  const rapidjson::ParseResult parsed = reader.Parse<rapidjson::kParseIterativeFlag>(in, items);
  if (parsed.IsError() || in.Tell() != static_cast<size_t>(info.st_size) ||
      std::ferror(file.get()) != 0 || !items.RootWasList()) {
    return std::nullopt;
  }
  return queue;
}

}  // namespace

absl::StatusOr<DecodedObjectQueue> DecodeFileQueue(const std::string& path) {
  if (std::optional<DecodedObjectQueue> streamed = StreamList(path); streamed.has_value()) {
    return *std::move(streamed);
  }
  absl::StatusOr<DecodedObjects> decoded = DecodeFile(path);
  if (!decoded.ok()) return decoded.status();
  DecodedObjectQueue queue;
  for (Object& object : decoded->objects) queue.objects.push_back(std::move(object));
  queue.problems = std::move(decoded->problems);
  return queue;
}

}  // namespace kubesched::api

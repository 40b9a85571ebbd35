#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kubesched::cel {

enum class TokenKind : uint8_t {
  kEnd,
  kIdentifier,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kLeftParen,
  kRightParen,
  kLeftBracket,
  kRightBracket,
  kLeftBrace,
  kRightBrace,
  kDot,
  kComma,
  kColon,
  kQuestion,
  kNot,
  kAnd,
  kOr,
  kEqual,
  kNotEqual,
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  uint32_t position = 0;
  std::string_view text;  // as written
  std::string string;     // kString: the value with escapes resolved
  int64_t integer = 0;    // kInt
};

// Splits CEL source into tokens one at a time. Errors are InvalidArgument "line:column: ...".
class Lexer {
 public:
  explicit Lexer(std::string_view source) : source_(source) {}

  absl::StatusOr<Token> Next();

 private:
  void SkipSpaceAndComments();
  absl::StatusOr<Token> Number();
  absl::StatusOr<Token> Quoted(bool raw);
  absl::Status Escape(Token& token);
  Token Punctuation();

  std::string_view source_;
  size_t at_ = 0;
};

// "line:column" (both from 1) of a byte offset, as CEL reports positions.
std::string Position(std::string_view source, uint32_t offset);

// Concatenates views (Debian's abseil has its own string_view, so absl::StrCat takes no std one).
std::string Cat(std::initializer_list<std::string_view> pieces);

absl::Status ErrorAt(std::string_view source, uint32_t offset, std::string_view what);

}  // namespace kubesched::cel

#include "scheduler/cel/lexer.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "scheduler/util/status_macros.h"
#include "scheduler/util/strings.h"

namespace kubesched::cel {
namespace {

bool IsIdentifierStart(char c) {
  return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsIdentifierPart(char c) {
  return IsIdentifierStart(c) || absl::ascii_isdigit(static_cast<unsigned char>(c));
}

void AppendUtf8(std::string& out, uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// The escapes that stand for one character, or '\0' for the others.
char SimpleEscape(char kind) {
  switch (kind) {
    case 'a':
      return '\a';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'v':
      return '\v';
    case '\\':
    case '"':
    case '\'':
    case '`':
    case '?':
      return kind;
    default:
      return '\0';
  }
}

}  // namespace

std::string Cat(std::initializer_list<std::string_view> pieces) {
  size_t size = 0;
  for (const std::string_view piece : pieces) size += piece.size();
  std::string out;
  out.reserve(size);
  for (const std::string_view piece : pieces) out.append(piece);
  return out;
}

std::string Position(std::string_view source, uint32_t offset) {
  int line = 1;
  int column = 1;
  for (size_t i = 0; i < offset && i < source.size(); ++i) {
    if (source[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(source[i]) & 0xC0) != 0x80) {
      ++column;  // count code points, not the continuation bytes of UTF-8
    }
  }
  return absl::StrCat(line, ":", column);
}

absl::Status ErrorAt(std::string_view source, uint32_t offset, std::string_view what) {
  return absl::InvalidArgumentError(
      util::Absl(Cat({Position(source, offset), ": ", what, "; expression: ", source})));
}

void Lexer::SkipSpaceAndComments() {
  while (at_ < source_.size()) {
    const char c = source_[at_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      ++at_;
    } else if (c == '/' && at_ + 1 < source_.size() && source_[at_ + 1] == '/') {
      while (at_ < source_.size() && source_[at_] != '\n') ++at_;
    } else {
      return;
    }
  }
}

absl::StatusOr<Token> Lexer::Next() {
  SkipSpaceAndComments();
  Token token;
  token.position = static_cast<uint32_t>(at_);
  if (at_ >= source_.size()) return token;
  const char c = source_[at_];
  const bool has_next = at_ + 1 < source_.size();
  const char next = has_next ? source_[at_ + 1] : '\0';
  if ((c == 'r' || c == 'R') && (next == '"' || next == '\'')) {
    ++at_;
    return Quoted(/*raw=*/true);
  }
  if ((c == 'b' || c == 'B') && (next == '"' || next == '\'')) {
    ++at_;
    absl::StatusOr<Token> bytes = Quoted(/*raw=*/false);
    if (bytes.ok()) {
      bytes->kind = TokenKind::kBytes;
      bytes->position = token.position;
      bytes->text = source_.substr(token.position, at_ - token.position);
    }
    return bytes;
  }
  if (IsIdentifierStart(c)) {
    const size_t start = at_;
    while (at_ < source_.size() && IsIdentifierPart(source_[at_])) ++at_;
    token.kind = TokenKind::kIdentifier;
    token.text = source_.substr(start, at_ - start);
    return token;
  }
  if (absl::ascii_isdigit(static_cast<unsigned char>(c))) return Number();
  if (c == '"' || c == '\'') return Quoted(/*raw=*/false);
  return Punctuation();
}

absl::StatusOr<Token> Lexer::Number() {
  Token token;
  token.position = static_cast<uint32_t>(at_);
  const size_t start = at_;
  bool hex = false;
  if (source_[at_] == '0' && at_ + 1 < source_.size() &&
      (source_[at_ + 1] == 'x' || source_[at_ + 1] == 'X')) {
    hex = true;
    at_ += 2;
    while (at_ < source_.size() && absl::ascii_isxdigit(static_cast<unsigned char>(source_[at_])))
      ++at_;
  } else {
    while (at_ < source_.size() && absl::ascii_isdigit(static_cast<unsigned char>(source_[at_])))
      ++at_;
  }
  const std::string_view digits = source_.substr(start, at_ - start);
  token.kind = TokenKind::kInt;
  // A '.' or an exponent makes a double only when a digit follows ("1.size()" is an int's method).
  const auto digit_at = [&](size_t i) {
    return i < source_.size() && absl::ascii_isdigit(static_cast<unsigned char>(source_[i]));
  };
  const bool exponent =
      at_ < source_.size() && (source_[at_] == 'e' || source_[at_] == 'E') &&
      (digit_at(at_ + 1) ||
       ((at_ + 1 < source_.size() && (source_[at_ + 1] == '-' || source_[at_ + 1] == '+')) &&
        digit_at(at_ + 2)));
  if (!hex && ((at_ < source_.size() && source_[at_] == '.' && digit_at(at_ + 1)) || exponent)) {
    token.kind = TokenKind::kDouble;
    while (at_ < source_.size() && (IsIdentifierPart(source_[at_]) || source_[at_] == '.' ||
                                    ((source_[at_] == '-' || source_[at_] == '+') &&
                                     (source_[at_ - 1] == 'e' || source_[at_ - 1] == 'E')))) {
      ++at_;
    }
  } else if (at_ < source_.size() && (source_[at_] == 'u' || source_[at_] == 'U')) {
    token.kind = TokenKind::kUint;
    ++at_;
  }
  token.text = source_.substr(start, at_ - start);
  if (token.kind != TokenKind::kInt) return token;
  uint64_t magnitude = 0;
  const bool parsed = hex ? absl::SimpleHexAtoi(util::Absl(digits.substr(2)), &magnitude)
                          : absl::SimpleAtoi(util::Absl(digits), &magnitude);
  // One more than INT64_MAX is allowed here so that -9223372036854775808 can be written.
  if (!parsed || (hex && digits.size() == 2) ||
      magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) {
    return ErrorAt(source_, token.position, Cat({"invalid int literal '", token.text, "'"}));
  }
  token.integer = static_cast<int64_t>(magnitude);  // INT64_MIN for the one case; the parser checks
  return token;
}

absl::StatusOr<Token> Lexer::Quoted(bool raw) {
  Token token;
  token.kind = TokenKind::kString;
  token.position = static_cast<uint32_t>(raw ? at_ - 1 : at_);
  const char quote = source_[at_];
  const size_t start = token.position;
  if (source_.substr(at_, 3) == std::string_view(std::string(3, quote))) {
    return ErrorAt(source_, token.position, "triple-quoted strings are not supported");
  }
  ++at_;
  while (true) {
    if (at_ >= source_.size() || source_[at_] == '\n') {
      return ErrorAt(source_, token.position, "Syntax error: unterminated string literal");
    }
    const char c = source_[at_];
    if (c == quote) {
      ++at_;
      break;
    }
    if (c == '\\' && !raw) {
      KUBESCHED_RETURN_IF_ERROR(Escape(token));
      continue;
    }
    token.string += c;
    ++at_;
  }
  token.text = source_.substr(start, at_ - start);
  return token;
}

// Resolves the escape at at_ (a backslash) into token.string: CEL's simple escapes, \xHH,
// \uHHHH, \UHHHHHHHH and three-digit octal.
absl::Status Lexer::Escape(Token& token) {
  const uint32_t position = static_cast<uint32_t>(at_);
  if (at_ + 1 >= source_.size())
    return ErrorAt(source_, position, "Syntax error: unterminated escape");
  const char kind = source_[at_ + 1];
  at_ += 2;
  if (const char simple = SimpleEscape(kind); simple != '\0') {
    token.string += simple;
    return absl::OkStatus();
  }
  size_t digits = 0;
  int base = 16;
  if (kind == 'x' || kind == 'X') {
    digits = 2;
  } else if (kind == 'u') {
    digits = 4;
  } else if (kind == 'U') {
    digits = 8;
  } else if (kind >= '0' && kind <= '3') {
    digits = 2;
    base = 8;
    --at_;  // the first octal digit is part of the number
    ++digits;
  } else {
    return ErrorAt(source_, position,
                   Cat({"Syntax error: invalid escape '\\", std::string(1, kind), "'"}));
  }
  if (at_ + digits > source_.size())
    return ErrorAt(source_, position, "Syntax error: truncated escape");
  uint32_t code = 0;
  for (size_t i = 0; i < digits; ++i) {
    const char d = source_[at_ + i];
    int digit = -1;
    if (d >= '0' && d <= '9') digit = d - '0';
    if (base == 16 && d >= 'a' && d <= 'f') digit = d - 'a' + 10;
    if (base == 16 && d >= 'A' && d <= 'F') digit = d - 'A' + 10;
    if (digit < 0 || digit >= base)
      return ErrorAt(source_, position, "Syntax error: invalid escape digits");
    code = code * base + static_cast<uint32_t>(digit);
  }
  at_ += digits;
  if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
    return ErrorAt(source_, position, "Syntax error: escape is not a valid code point");
  }
  AppendUtf8(token.string, code);  // in a string, every numeric escape is a code point
  return absl::OkStatus();
}

Token Lexer::Punctuation() {
  Token token;
  token.position = static_cast<uint32_t>(at_);
  const std::string_view rest = source_.substr(at_);
  struct Spelling {
    std::string_view text;
    TokenKind kind;
  };
  // Two-character operators first, so that "<=" is not read as "<".
  static constexpr Spelling kSpellings[] = {
      {"&&", TokenKind::kAnd},        {"||", TokenKind::kOr},
      {"==", TokenKind::kEqual},      {"!=", TokenKind::kNotEqual},
      {"<=", TokenKind::kLessEqual},  {">=", TokenKind::kGreaterEqual},
      {"(", TokenKind::kLeftParen},   {")", TokenKind::kRightParen},
      {"[", TokenKind::kLeftBracket}, {"]", TokenKind::kRightBracket},
      {"{", TokenKind::kLeftBrace},   {"}", TokenKind::kRightBrace},
      {".", TokenKind::kDot},         {",", TokenKind::kComma},
      {":", TokenKind::kColon},       {"?", TokenKind::kQuestion},
      {"!", TokenKind::kNot},         {"<", TokenKind::kLess},
      {">", TokenKind::kGreater},     {"+", TokenKind::kPlus},
      {"-", TokenKind::kMinus},       {"*", TokenKind::kStar},
      {"/", TokenKind::kSlash},       {"%", TokenKind::kPercent},
  };
  for (const Spelling& spelling : kSpellings) {
    if (rest.substr(0, spelling.text.size()) == spelling.text) {
      token.kind = spelling.kind;
      token.text = rest.substr(0, spelling.text.size());
      at_ += spelling.text.size();
      return token;
    }
  }
  // An unknown character: the parser reports it by its text.
  token.kind = TokenKind::kEnd;
  token.text = rest.substr(0, 1);
  ++at_;
  return token;
}

}  // namespace kubesched::cel

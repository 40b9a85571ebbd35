#include "scheduler/util/utf8.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace kubesched::util {
namespace {

TEST_CASE("well-formed UTF-8 is valid and kept as it is", "[utf8]") {
  const std::vector<std::string> texts = {"",
                                          "plain",
                                          "gr\xC3\xBC\xC3\x9F",
                                          "\xE2\x82\xAC",
                                          "\xF0\x9F\x9A\x80",
                                          "\xF4\x8F\xBF\xBF",
                                          std::string("a\0b", 3)};
  for (const std::string& text : texts) {
    INFO(text);
    CHECK(IsValidUtf8(text));
    CHECK(ToValidUtf8(text) == text);
  }
}

TEST_CASE("ill-formed UTF-8 has each bad byte replaced by U+FFFD", "[utf8]") {
  struct Case {
    std::string in;
    std::string out;
  };
  const std::string r = "\xEF\xBF\xBD";
  for (const Case& c : std::vector<Case>{
           {"\xFF", r},                          // never a UTF-8 byte
           {"a\x80z", "a" + r + "z"},            // a lone continuation byte
           {"\xC3", r},                          // truncated at the end
           {"\xC0\xAF", r + r},                  // overlong '/'
           {"\xE0\x80\xAF", r + r + r},          // overlong, three bytes
           {"\xED\xA0\x80", r + r + r},          // a surrogate
           {"\xF4\x90\x80\x80", r + r + r + r},  // past U+10FFFF
           {"pod-\xE2\x82", "pod-" + r + r},     // truncated euro sign
       }) {
    CHECK_FALSE(IsValidUtf8(c.in));
    CHECK(ToValidUtf8(c.in) == c.out);
    CHECK(IsValidUtf8(ToValidUtf8(c.in)));
  }
}

}  // namespace
}  // namespace kubesched::util

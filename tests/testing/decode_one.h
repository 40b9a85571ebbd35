#pragma once

// The one object of kind T a decoder test's input holds, requiring that it decodes cleanly.

#include <catch2/catch.hpp>
#include <string>
#include <variant>

#include "scheduler/api/decode.h"

namespace kubesched::testing {

template <typename T>
T DecodeOne(const std::string& text) {
  auto decoded = api::DecodeObjects(text, "test");
  REQUIRE(decoded.ok());
  INFO((decoded->problems.empty() ? "" : decoded->problems.front().ToString()));
  REQUIRE(decoded->problems.empty());
  REQUIRE(decoded->objects.size() == 1);
  const T* typed = std::get_if<T>(&decoded->objects.front());
  REQUIRE(typed != nullptr);
  return *typed;
}

}  // namespace kubesched::testing

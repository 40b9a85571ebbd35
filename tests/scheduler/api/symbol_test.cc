#include <catch2/catch.hpp>

#include "scheduler/api/symbol.h"

TEST_CASE("interned symbols round-trip and are stable", "[api]") {
  const auto a = kubesched::api::Intern("zone");
  CHECK(kubesched::api::Intern("zone") == a);
  CHECK(kubesched::api::SymbolText(a) == "zone");
  CHECK(kubesched::api::FindSymbol("never-interned-text") == kubesched::api::kNoSuchSymbol);
}

#pragma once

// An ApiServer over a fresh in-memory store, with the real cluster's bootstrap objects, driven
// without HTTP: what the test API server's own tests share.

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "rapidjson/document.h"
#include "tests/testapi/faults.h"
#include "tests/testapi/routes.h"
#include "tests/testapi/store.h"

namespace kubesched::testapi {

inline rapidjson::Document Json(std::string_view text) {
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

struct ApiFixture {
  ApiFixture() : store(StoreOptions{}), api(&store, &faults, ApiServerOptions{}) {
    REQUIRE(api.Bootstrap().ok());
  }
  HttpResponse Call(std::string method, std::string target, std::string body = "",
                    std::string content_type = "application/json") {
    return api.Handle({.method = std::move(method),
                       .target = std::move(target),
                       .content_type = std::move(content_type),
                       .body = std::move(body)});
  }
  HttpResponse Get(std::string target) { return Call("GET", std::move(target)); }

  Store store;
  Faults faults;
  ApiServer api;
};

}  // namespace kubesched::testapi

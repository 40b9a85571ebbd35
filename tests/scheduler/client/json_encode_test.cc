#include "scheduler/client/json_encode.h"

#include <catch2/catch.hpp>
#include <string>

#include "rapidjson/document.h"

namespace kubesched::client {
namespace {

TEST_CASE("keys and strings that are not UTF-8 leave the document valid", "[client]") {
  JsonWriter writer;
  writer.BeginObject().Field("message", "node n\xff is full").Field("k\xc3", "v").EndObject();
  const std::string json = writer.str();
  CHECK(json == "{\"message\":\"node n\xEF\xBF\xBD is full\",\"k\xEF\xBF\xBD\":\"v\"}");
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(json.c_str());
  CHECK_FALSE(doc.HasParseError());
}

TEST_CASE("valid UTF-8 and escapes are written as rapidjson writes them", "[client]") {
  JsonWriter writer;
  writer.BeginObject().Field("name", "gr\xC3\xBC\xC3\x9F \"q\"\n").EndObject();
  CHECK(writer.str() == "{\"name\":\"gr\xC3\xBC\xC3\x9F \\\"q\\\"\\n\"}");
}

}  // namespace
}  // namespace kubesched::client

#pragma once

// The conformance vectors (tests/conformance/vectors/: upstream kube-scheduler's plugin test
// cases as JSON, see the README there) for the conformance tests. A vector file that is missing,
// unreadable or not a vector document fails the test, naming its path: a lost file must not pass
// as a file with no cases.

#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kubesched::testing {

inline std::string ConformanceVectorPath(const std::string& file) {
  return std::string(KUBESCHED_SOURCE_DIR) + "/tests/conformance/vectors/" + file;
}

// The parsed vector file `file` (e.g. "fit.json"): an object with a `cases` array.
inline std::unique_ptr<rapidjson::Document> LoadConformanceVectors(const std::string& file) {
  const std::string path = ConformanceVectorPath(file);
  std::ifstream in(path);
  if (!in) FAIL("conformance vector file " << path << " is missing or unreadable");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) FAIL("conformance vector file " << path << " could not be read");
  auto document = std::make_unique<rapidjson::Document>();
  document->Parse(text.str().c_str());
  if (document->HasParseError()) {
    FAIL("conformance vector file "
         << path << " is not JSON: " << rapidjson::GetParseError_En(document->GetParseError())
         << " at offset " << document->GetErrorOffset());
  }
  if (!document->IsObject() || !document->HasMember("cases") || !(*document)["cases"].IsArray() ||
      (*document)["cases"].Empty()) {
    FAIL("conformance vector file " << path << " has no \"cases\" array with cases");
  }
  return document;
}

inline std::string ToJson(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace kubesched::testing

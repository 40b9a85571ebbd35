#pragma once

// The end-to-end tests' own client of the test API server: a REST client with the kubeconfig
// kubesched uses, and the few calls the tests make. Failures are test failures (REQUIRE).

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>

#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/client/kubeconfig.h"
#include "scheduler/client/rest_client.h"
#include "tests/testapi/testapi_process.h"

namespace kubesched::testing {

class TestApiClient {
 public:
  explicit TestApiClient(const testapi::TestApiProcess& server) {
    client::ConnectionOptions options;
    options.kubeconfig_path = server.kubeconfig();
    options.qps = 0;
    auto connection = client::ResolveConnection(options);
    REQUIRE(connection.ok());
    auto rest = client::RestClient::Create(connection->rest);
    REQUIRE(rest.ok());
    rest_ = *std::move(rest);
  }

  client::HttpResponse Send(std::string method, std::string target, std::string body = "",
                            std::string content_type = "application/json") {
    client::HttpRequest request;
    request.method = std::move(method);
    request.target = std::move(target);
    request.body = std::move(body);
    request.content_type = std::move(content_type);
    auto response = rest_->Do(request);
    INFO(request.method << " " << request.target << ": " << response.status().message());
    REQUIRE(response.ok());
    return *response;
  }

  // POST to a collection; the object must be created (201).
  void Create(const std::string& collection, const std::string& json) {
    client::HttpResponse response = Send("POST", collection, json);
    INFO(response.body);
    REQUIRE(response.status == 201);
  }

  // Sets data key `key` of the ConfigMap at `path` to `value`, as `kubectl patch --type merge`
  // does; the update must be taken (200).
  void SetConfigMapData(const std::string& path, const std::string& key, const std::string& value) {
    rapidjson::Document patch(rapidjson::kObjectType);
    rapidjson::Value data(rapidjson::kObjectType);
    data.AddMember(rapidjson::Value(key.c_str(), patch.GetAllocator()),
                   rapidjson::Value(value.c_str(), patch.GetAllocator()), patch.GetAllocator());
    patch.AddMember("data", data, patch.GetAllocator());
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    patch.Accept(writer);
    client::HttpResponse response =
        Send("PATCH", path, buffer.GetString(), "application/merge-patch+json");
    INFO(response.body);
    REQUIRE(response.status == 200);
  }

  // GET of a JSON object, whatever the status (returned through `status`).
  rapidjson::Document Get(const std::string& target, int* status = nullptr) {
    client::HttpResponse response = Send("GET", target);
    if (status != nullptr) *status = response.status;
    return ParseObject(response);
  }

  // GET that must succeed (200).
  rapidjson::Document GetOk(const std::string& target) {
    client::HttpResponse response = Send("GET", target);
    INFO(response.body);
    REQUIRE(response.status == 200);
    return ParseObject(response);
  }

 private:
  static rapidjson::Document ParseObject(const client::HttpResponse& response) {
    rapidjson::Document json;
    json.Parse(response.body.data(), response.body.size());
    REQUIRE(json.IsObject());
    return json;
  }

  std::unique_ptr<client::RestClient> rest_;
};

// A JSON value's string, or "" when it is not a string.
inline std::string StringOf(const rapidjson::Value& value) {
  return value.IsString() ? std::string(value.GetString(), value.GetStringLength()) : "";
}

}  // namespace kubesched::testing

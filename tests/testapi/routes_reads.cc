// Reads: get and list, with label and field selectors, limit/continue and Table output.

#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tests/testapi/event_views.h"
#include "tests/testapi/routes_internal.h"
#include "tests/testapi/tables.h"

namespace kubesched::testapi {
namespace routes_internal {

absl::Status ParseSelectors(const ResourceType& type, const std::string& label_text,
                            const std::string& field_text, LabelSelector* labels,
                            FieldSelector* fields) {
  auto parsed_labels = LabelSelector::Parse(label_text);
  if (!parsed_labels.ok()) return parsed_labels.status();
  auto parsed_fields = FieldSelector::Parse(field_text);
  if (!parsed_fields.ok()) return parsed_fields.status();
  for (const auto& requirement : parsed_fields->requirements()) {
    if (!type.IsSelectableField(requirement.field)) {
      return absl::InvalidArgumentError(
          absl::StrCat("field label not supported: ", requirement.field));
    }
  }
  *labels = *std::move(parsed_labels);
  *fields = ToStoredSelector(type, *parsed_fields);
  return absl::OkStatus();
}

std::string ListJson(const ResourceType& type, const ListResult& result) {
  std::string body =
      absl::StrCat("{\"kind\":\"", type.list_kind(), "\",\"apiVersion\":\"", type.api_version(),
                   "\",\"metadata\":{\"resourceVersion\":\"", result.resource_version, "\"");
  if (!result.continue_token.empty()) {
    absl::StrAppend(&body, ",\"continue\":\"", result.continue_token, "\"");
  }
  if (result.remaining_item_count >= 0) {
    absl::StrAppend(&body, ",\"remainingItemCount\":", result.remaining_item_count);
  }
  body += "},\"items\":[";
  for (size_t i = 0; i < result.items.size(); ++i) {
    if (i > 0) body.push_back(',');
    body += Render(type, *result.items[i], TypeMeta::kOmit);
  }
  body += "]}";
  return body;
}

}  // namespace routes_internal

using routes_internal::ErrorResponse;
using routes_internal::JsonResponse;
using routes_internal::ListJson;
using routes_internal::ParseSelectors;
using routes_internal::StatusResponse;

HttpResponse ApiServer::Get(const Route& route) {
  auto object = store_->Get(StoredType(*route.type), route.namespace_name, route.name);
  if (!object.ok()) return ErrorResponse(object.status(), route.Details());
  if (WantsTable(route.accept)) {
    HttpResponse table = JsonResponse(200, TableJson(*route.type, {*object}, nullptr, absl::Now()));
    table.content_type = kTableContentType;
    return table;
  }
  return JsonResponse(200, Render(*route.type, **object, TypeMeta::kInclude));
}

HttpResponse ApiServer::List(const Route& route) {
  LabelSelector labels;
  FieldSelector fields;
  absl::Status status = ParseSelectors(*route.type, route.Param("labelSelector"),
                                       route.Param("fieldSelector"), &labels, &fields);
  if (!status.ok()) return ErrorResponse(status, {});
  ListOptions options{.namespace_name = route.namespace_name,
                      .labels = &labels,
                      .fields = &fields,
                      .continue_token = route.Param("continue")};
  if (std::string limit = route.Param("limit"); !limit.empty()) {
    if (!absl::SimpleAtoi(limit, &options.limit) || options.limit < 0) {
      return StatusResponse(400, "BadRequest", absl::StrCat("invalid limit: ", limit));
    }
  }
  auto result = store_->List(StoredType(*route.type), options);
  if (!result.ok()) return ErrorResponse(result.status(), {});
  if (WantsTable(route.accept)) {
    HttpResponse table =
        JsonResponse(200, TableJson(*route.type, result->items, &*result, absl::Now()));
    table.content_type = kTableContentType;
    return table;
  }
  return JsonResponse(200, ListJson(*route.type, *result));
}

}  // namespace kubesched::testapi

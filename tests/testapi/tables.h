#pragma once

// Content negotiation of kubesched-testapi: the media type of a request body, what an Accept
// header allows, and the server-side tables (meta.k8s.io/v1 Table) that `kubectl get` asks for
// with "Accept: application/json;as=Table;v=v1;g=meta.k8s.io". Pods, nodes, namespaces, config
// maps and events get the columns the real API prints for them (priority-1 columns are the ones `-o
// wide` adds); every other type gets the real API's default, Name and Created At. Rows carry the
// object's metadata (PartialObjectMetadata), the real API's default for includeObject.

#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "tests/testapi/resources.h"
#include "tests/testapi/store.h"

namespace kubesched::testapi {

inline constexpr std::string_view kTableContentType =
    "application/json;as=Table;v=v1;g=meta.k8s.io";

// "application/json" of "Application/JSON; charset=utf-8": lowercased, parameters dropped.
std::string MediaType(std::string_view content_type);

// Whether `accept` asks for a meta.k8s.io/v1 Table first (before plain JSON).
bool WantsTable(std::string_view accept);
// Whether the server can answer `accept` at all: empty, */*, application/*, or JSON (a Table
// included). Protobuf, CBOR and the like alone cannot be answered (406).
bool AcceptsJson(std::string_view accept);

// The Table of `items` (stored form) of `type`, aged against `now`.
std::string TableJson(const ResourceType& type, const std::vector<ObjectPtr>& items,
                      const ListResult* list, absl::Time now);

// The one-row Table of `object`, as a watch event carries it.
std::string TableJson(const ResourceType& type, const StoredObject& object, absl::Time now);

// Kubernetes' short human duration ("45s", "3m20s", "5h", "12d"), as in AGE columns.
std::string HumanDuration(absl::Duration age);

}  // namespace kubesched::testapi

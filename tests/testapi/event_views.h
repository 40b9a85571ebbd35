#pragma once

// Events are one storage with two views, as in the real API: core v1 Events are stored as written,
// and events.k8s.io/v1 Events are converted from and to that form on every read and write. An
// event created through either group is got, listed, watched, patched and deleted through both,
// with the same name and resourceVersion. Other types have one view, their stored form.
//
// Field correspondence (events.k8s.io/v1 -> core v1): regarding -> involvedObject, note -> message,
// reportingController -> reportingComponent, deprecatedSource -> source, deprecatedCount -> count,
// deprecatedFirstTimestamp/deprecatedLastTimestamp -> firstTimestamp/lastTimestamp; eventTime,
// series, reportingInstance, action, reason, related and type keep their names.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "rapidjson/document.h"
#include "tests/testapi/resources.h"
#include "tests/testapi/selectors.h"
#include "tests/testapi/store.h"

namespace kubesched::testapi {

// The type whose store holds `type`'s objects: core v1 Events for events.k8s.io/v1 Events, `type`
// itself otherwise. The Store only ever sees stored types.
const ResourceType& StoredType(const ResourceType& type);
// True when `type` is served from another type's storage.
bool IsView(const ResourceType& type);

// Converts an object written through `type` into the stored form, in place. kind and apiVersion are
// removed (the store keeps neither); members the conversion does not know are kept, at the end.
void ToStoredForm(const ResourceType& type, rapidjson::Value& object,
                  rapidjson::Document::AllocatorType& allocator);
// The inverse of ToStoredForm: a stored object in `type`'s form, without kind and apiVersion.
void ToViewForm(const ResourceType& type, rapidjson::Value& object,
                rapidjson::Document::AllocatorType& allocator);

enum class TypeMeta { kOmit, kInclude };
// The JSON `type` serves for a stored object: with kind/apiVersion for GET responses and watch
// events, without for list items. Core v1 Events without a source show reportingComponent and
// reportingInstance there, so that `kubectl describe` names the reporter of events written
// through events.k8s.io/v1 (which must leave deprecatedSource unset).
std::string Render(const ResourceType& type, const StoredObject& object, TypeMeta meta);
// The same for a stored object already parsed (kind/apiVersion, if any, are replaced).
std::string Render(const ResourceType& type, rapidjson::Document& stored, TypeMeta meta);

// The real API's validation of an events.k8s.io/v1 Event written through that group (view form;
// core v1 writes keep the legacy rules, which check nothing here). A create (`previous` null)
// needs eventTime, reportingController, reportingInstance, action and reason, type Normal or
// Warning, a note of at most 1024 bytes, a series with count >= 2 and lastObservedTime, and a
// regarding object in the event's namespace. An update checks only a series it sets or changes.
// OK for every other type; else Invalid (MarkInvalid):
// "Event.events.k8s.io \"<name>\" is invalid: <field>: <why>" (several in [..., ...]).
absl::Status ValidateWrite(const ResourceType& type, const rapidjson::Value& object,
                           const rapidjson::Value* previous);

// A field selector on `type` (already checked against its selectable fields) in terms of the
// stored type's fields: regarding.* -> involvedObject.*, reportingController -> reportingComponent.
FieldSelector ToStoredSelector(const ResourceType& type, const FieldSelector& selector);

// The value a field selector sees for a core v1 Event (ResourceType::field_value): the string at
// the field's path, except "source", which is source.component or, when that is empty,
// reportingComponent (the real API's fallback for events written through events.k8s.io).
std::string CoreEventFieldValue(const rapidjson::Value& event, std::string_view field);

}  // namespace kubesched::testapi

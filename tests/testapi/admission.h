#pragma once

// Admission in kubesched-testapi: the defaults and checks the real API applies to new objects that
// a scheduler depends on. Pods get the defaulted spec fields, priority admission (priorityClassName
// or the global default class resolved to spec.priority and spec.preemptionPolicy), the default
// not-ready/unreachable tolerations, requests defaulted from limits and status.qosClass;
// namespaces get their name label, the kubernetes finalizer and phase Active; priority classes
// need a value and get a default preemptionPolicy. A pod created with scheduling gates gets the
// PodScheduled=False condition with reason SchedulingGated.

#include "absl/status/status.h"
#include "rapidjson/document.h"
#include "tests/testapi/resources.h"
#include "tests/testapi/store.h"

namespace kubesched::testapi {

// Admits a new object of `type` in place; the store is read for priority classes. Pods keep the
// status they are given when `keep_status` (fixtures describing running pods). Errors carry the
// real API's codes: Invalid (MarkInvalid) or Forbidden (PermissionDenied).
absl::Status Admit(const Store& store, const ResourceType& type, rapidjson::Document& object,
                   bool keep_status);

absl::Status AdmitPod(const Store& store, rapidjson::Document& pod, bool keep_status);
// Whether a pod's spec carries scheduling gates (a non-empty spec.schedulingGates): such a pod is
// not ready for scheduling, and binding it is refused.
bool HasSchedulingGates(const rapidjson::Value& spec);
void AdmitNamespace(rapidjson::Document& ns);
absl::Status AdmitPriorityClass(rapidjson::Document& priority_class);

}  // namespace kubesched::testapi

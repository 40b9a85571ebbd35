#pragma once

// The Kubernetes API of kubesched-testapi: URL routing, authentication, discovery, the verbs on
// every served resource (with the real API's admission defaults that a scheduler depends on),
// pods/binding, watches, fault injection and request statistics. Transport-independent: it
// turns an HttpRequest into an HttpResponse, so tests can call it without a socket.
//
// Thread-safety: ApiServer::Handle may be called concurrently from any number of threads.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tests/testapi/faults.h"
#include "tests/testapi/http_server.h"
#include "tests/testapi/request_log.h"
#include "tests/testapi/reviews.h"
#include "tests/testapi/store.h"
#include "tests/testapi/volume_controller.h"

namespace kubesched::testapi {

struct ApiServerOptions {
  // Bearer tokens that authenticate. Authentication is required when this is non-empty or
  // `client_certificates_authenticate` is set; otherwise every request is allowed.
  std::vector<std::string> tokens{};
  bool client_certificates_authenticate = false;
  // How often a watch with allowWatchBookmarks=true gets a BOOKMARK (the real API: about 1 min).
  absl::Duration bookmark_interval = absl::Seconds(1);
  // A watch whose resourceVersion is too old gets, like the real API's watch cache, a 200
  // response with one ERROR event (code 410) when true; an HTTP 410 Status when false.
  bool expired_watch_as_event = false;
  // Default and maximum watch duration when the client sends no timeoutSeconds.
  absl::Duration default_watch_timeout = absl::Minutes(30);
  // Users of TokenReviews and decisions of SubjectAccessReviews (reviews.h).
  ReviewOptions reviews{};
  // Group versions not served ("resource.k8s.io/v1"), as the real API server's
  // --runtime-config=<group/version>=false: their paths answer 404 and discovery leaves them out.
  std::vector<std::string> disabled_api_versions{};
};

class ApiServer {
 public:
  ApiServer(Store* store, Faults* faults, ApiServerOptions options);

  // Creates what a fresh real cluster has: namespaces default, kube-system, kube-public,
  // kube-node-lease and the system-* priority classes (those missing only).
  absl::Status Bootstrap();
  // Creates the objects of a YAML or JSON text (several documents, or a List). Pods keep the
  // status they are given, so fixtures can describe running pods.
  absl::Status LoadObjects(std::string_view text, std::string_view source);

  HttpResponse Handle(const HttpRequest& request);

  // GET /testapi/stats.
  std::string StatsJson() const;

  // What GET/POST /testapi/volume-controller switches; null: those answer 404. Set before
  // serving.
  void set_volume_controller(VolumeController* controller) { volume_controller_ = controller; }

 private:
  struct Route;
  class WatchStream;

  // The public health and version paths, the refusal of an unauthenticated request, the
  // /testapi/ control endpoints and the review APIs; nullopt for every other path.
  std::optional<HttpResponse> HandleOutsideResources(const HttpRequest& request,
                                                     std::string_view path);
  // The resource route of /api/v1/... or /apis/<group>/<version>/...; nullopt when the path
  // names no served resource (a 404).
  std::optional<Route> ParseRoute(const HttpRequest& request,
                                  const std::vector<std::string>& segments,
                                  std::string_view query) const;
  // Counts the request and injects its latency fault, then dispatches it.
  HttpResponse HandleRoute(const HttpRequest& request, const Route& route);
  HttpResponse Dispatch(const HttpRequest& request, const Route& route);
  HttpResponse HandleControl(const HttpRequest& request, std::string_view path);
  HttpResponse HandleResource(const HttpRequest& request, const Route& route);
  HttpResponse Get(const Route& route);
  HttpResponse List(const Route& route);
  HttpResponse Watch(const Route& route);
  HttpResponse Create(const HttpRequest& request, const Route& route);
  HttpResponse Bind(const HttpRequest& request, const Route& route);
  HttpResponse Update(const HttpRequest& request, const Route& route);
  HttpResponse Patch(const HttpRequest& request, const Route& route);
  HttpResponse Delete(const HttpRequest& request, const Route& route);
  HttpResponse DeleteCollection(const Route& route);
  // Creates an object sent to `type` (converted to its stored form, then admitted).
  absl::StatusOr<ObjectPtr> CreateObject(const ResourceType& type, rapidjson::Document object,
                                         bool keep_status);
  void DeleteNamespaceContents(const std::string& namespace_name);
  bool Authenticated(const HttpRequest& request) const;
  void Count(const std::string& key);

  Store* const store_;
  Faults* const faults_;
  const ApiServerOptions options_;
  VolumeController* volume_controller_ = nullptr;

  mutable absl::Mutex stats_mu_;
  std::map<std::string, int64_t> request_counts_ ABSL_GUARDED_BY(stats_mu_);
  std::map<std::string, int64_t> stat_counters_ ABSL_GUARDED_BY(stats_mu_);
  std::map<std::string, int64_t> binds_by_pod_uid_ ABSL_GUARDED_BY(stats_mu_);
  // Every Binding handled, taken or refused, in order: the bearer token that sent it ("" without
  // one) and when (after any injected latency: when it acted).
  struct BindRecord {
    std::string by;
    absl::Time at;
  };
  std::vector<BindRecord> bind_log_ ABSL_GUARDED_BY(stats_mu_);
  RequestLog request_log_;  // GET /testapi/requests
};

}  // namespace kubesched::testapi

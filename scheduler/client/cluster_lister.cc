#include "scheduler/client/cluster_lister.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/client/informers.h"
#include "scheduler/client/metrics_poller.h"
#include "scheduler/client/reflector.h"

namespace kubesched::client {
namespace {

// Keeps the node metrics the poller delivers; every other kind comes through the reflectors.
class NodeMetricsCollector : public ClusterEventHandler {
 public:
  explicit NodeMetricsCollector(std::vector<api::Object>* objects) : objects_(objects) {}
  void OnPod(const Event<api::Pod>&) override {}
  void OnNode(const Event<api::Node>&) override {}
  void OnNamespace(const Event<api::Namespace>&) override {}
  void OnPriorityClass(const Event<api::PriorityClass>&) override {}
  void OnNodeMetrics(const Event<api::NodeMetrics>& event) override {
    if (event.type != EventType::kDeleted && event.object != nullptr) {
      objects_->push_back(*event.object);
    }
  }

 private:
  std::vector<api::Object>* objects_;
};

}  // namespace

absl::StatusOr<ListedCluster> ListCluster(HttpTransport* transport,
                                          const ClusterListOptions& options, std::stop_token stop) {
  ListedCluster listed;
  ReflectorOptions reflector_options;
  reflector_options.page_size = options.page_size;
  for (ResourceKind& kind : WatchedKinds(options.config_map_namespace)) {
    const std::string name = kind.kind;
    Reflector reflector(
        std::move(kind), transport,
        [&listed](const ObjectEvent& event) {
          if (event.type != EventType::kDeleted) listed.objects.push_back(*event.object);
        },
        reflector_options);
    if (absl::Status status = reflector.ListOnce(stop); !status.ok()) {
      return absl::Status(status.code(), absl::StrCat("listing ", name, "s: ", status.message()));
    }
    listed.decode_errors += reflector.Stats().decode_errors;
  }
  if (options.node_metrics) {
    NodeMetricsCollector collector(&listed.objects);
    // A cluster without metrics-server answers 404; scoring then uses requests, as in run.
    MetricsPoller(transport, &collector, absl::Minutes(1)).PollOnce().IgnoreError();
  }
  return listed;
}

}  // namespace kubesched::client

#include "scheduler/client/metrics_poller.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "scheduler/api/decode_value.h"
#include "scheduler/util/log.h"
#include "scheduler/util/sleep.h"

namespace kubesched::client {

MetricsPoller::MetricsPoller(HttpTransport* transport, ClusterEventHandler* handler,
                             absl::Duration interval)
    : transport_(transport), handler_(handler), interval_(interval) {}

MetricsPoller::~MetricsPoller() { Stop(); }

void MetricsPoller::Start() {
  if (started_) return;
  started_ = true;
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void MetricsPoller::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();  // ends Run's sleep at once
  thread_.join();
}

void MetricsPoller::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    PollOnce().IgnoreError();  // logged; the next interval retries
    util::SleepFor(stop, interval_);
  }
}

absl::Status MetricsPoller::PollOnce() {
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.polls;
  }
  HttpRequest request;
  request.target = std::string(kNodeMetricsPath);
  // One try per interval: the next poll is the retry, and a stale sample is worse than none.
  request.max_retries = 0;
  absl::StatusOr<HttpResponse> response = transport_->Do(request);
  absl::Status status =
      response.ok() ? StatusFromResponse(*response, "list node metrics") : response.status();
  if (status.ok()) status = Deliver(response->body);
  if (status.ok()) return status;
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.failures;
  }
  if (response.ok() && response->status == 404) {
    if (!logged_not_found_) {
      logged_not_found_ = true;
      util::LogInfo(
          "metrics.k8s.io/v1beta1 nodes not served (no metrics-server?); MostAvailable scores "
          "nodes by requests until samples arrive");
    }
    return status;
  }
  util::LogWarning(absl::StrCat("metrics poll failed, retrying in ",
                                absl::FormatDuration(interval_), ": ", status.message()));
  return status;
}

// Decodes the NodeMetricsList and delivers every item; items that do not decode are logged and
// skipped, so one bad node does not hide the others.
absl::Status MetricsPoller::Deliver(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return absl::InvalidArgumentError(
        absl::StrCat("node metrics list is not a JSON object: ",
                     rapidjson::GetParseError_En(doc.GetParseError())));
  }
  auto items = doc.FindMember("items");
  if (items == doc.MemberEnd() || !(items->value.IsArray() || items->value.IsNull())) {
    return absl::InvalidArgumentError("node metrics list has no items array");
  }
  absl::flat_hash_map<std::string, std::shared_ptr<const api::NodeMetrics>> seen;
  if (items->value.IsArray()) {
    for (const rapidjson::Value& item : items->value.GetArray()) {
      absl::StatusOr<api::Object> decoded = api::DecodeObjectValue(item, "NodeMetrics");
      if (!decoded.ok()) {
        util::LogWarning(absl::StrCat("skipping node metrics item: ", decoded.status().message()));
        continue;
      }
      auto sample =
          std::make_shared<const api::NodeMetrics>(std::get<api::NodeMetrics>(*std::move(decoded)));
      auto previous = last_.find(sample->meta.name);
      Event<api::NodeMetrics> event;
      event.type = previous == last_.end() ? EventType::kAdded : EventType::kModified;
      if (previous != last_.end()) event.old_object = previous->second;
      event.object = sample;
      handler_->OnNodeMetrics(event);
      seen[sample->meta.name] = std::move(sample);
    }
  }
  for (const auto& [name, sample] : last_) {
    if (!seen.contains(name)) handler_->OnNodeMetrics({EventType::kDeleted, nullptr, sample});
  }
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.samples += static_cast<int64_t>(seen.size());
  }
  last_ = std::move(seen);
  return absl::OkStatus();
}

MetricsPollerStats MetricsPoller::Stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

}  // namespace kubesched::client

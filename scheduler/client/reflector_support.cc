// The reflector's requests, relist and rejection bookkeeping, and backoff (reflector.h).

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "scheduler/client/reflector.h"
#include "scheduler/util/log.h"
#include "scheduler/util/strings.h"

namespace kubesched::client {
namespace {

using util::Absl;

// A zero backoff would turn every retry loop into a busy loop.
constexpr absl::Duration kMinimumBackoff = absl::Milliseconds(1);

}  // namespace

std::string_view RelistReasonName(RelistReason reason) {
  switch (reason) {
    case RelistReason::kExpired:
      return "expired";
    case RelistReason::kTooLarge:
      return "too_large";
    case RelistReason::kBookmarkWentBack:
      return "bookmark_went_back";
    case RelistReason::kResync:
      return "resync";
  }
  return "expired";
}

// --- Requests -----------------------------------------------------------------------------------

std::string Reflector::SelectorQuery() const {
  std::string query;
  if (!kind_.field_selector.empty()) {
    absl::StrAppend(&query, "fieldSelector=", UrlEncodeQueryValue(kind_.field_selector));
  }
  if (!kind_.label_selector.empty()) {
    absl::StrAppend(&query, query.empty() ? "" : "&",
                    "labelSelector=", UrlEncodeQueryValue(kind_.label_selector));
  }
  return query;
}

std::string Reflector::ListTarget(std::string_view continue_token, bool paginate) const {
  std::vector<std::string> parameters;
  if (std::string selectors = SelectorQuery(); !selectors.empty()) {
    parameters.push_back(std::move(selectors));
  }
  if (paginate) parameters.push_back(absl::StrCat("limit=", options_.page_size));
  if (!continue_token.empty()) {
    parameters.push_back(absl::StrCat("continue=", UrlEncodeQueryValue(continue_token)));
  }
  if (parameters.empty()) return kind_.list_path;
  return absl::StrCat(kind_.list_path, "?", util::Join(parameters, "&"));
}

std::string Reflector::WatchTarget() {
  const int64_t min_seconds = absl::ToInt64Seconds(options_.watch_timeout_min);
  const int64_t max_seconds = absl::ToInt64Seconds(options_.watch_timeout_max);
  int64_t timeout_seconds = max_seconds > min_seconds
                                ? absl::Uniform<int64_t>(random_, min_seconds, max_seconds)
                                : min_seconds;
  if (options_.resync_interval > absl::ZeroDuration()) {
    // The watch ends when the resync is due, so the relist is not late by a whole watch.
    const absl::Duration until_resync = last_list_ + options_.resync_interval - clock_->Now();
    timeout_seconds =
        std::clamp<int64_t>(absl::ToInt64Seconds(absl::Ceil(until_resync, absl::Seconds(1))), 1,
                            std::max<int64_t>(timeout_seconds, 1));
  }
  std::string target = absl::StrCat(kind_.list_path, "?");
  if (std::string selectors = SelectorQuery(); !selectors.empty()) {
    absl::StrAppend(&target, selectors, "&");
  }
  absl::StrAppend(&target, "watch=true&resourceVersion=", UrlEncodeQueryValue(resource_version_),
                  "&allowWatchBookmarks=true&timeoutSeconds=", timeout_seconds);
  return target;
}

// --- Bookkeeping ------------------------------------------------------------------------------

void Reflector::Deliver(EventType type, std::shared_ptr<const api::Object> old_object,
                        std::shared_ptr<const api::Object> object) {
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.events;
  }
  sink_(ObjectEvent{type, std::move(old_object), std::move(object)});
}

void Reflector::CountDecodeError(std::string_view what) {
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.decode_errors;
  }
  util::LogWarning(absl::StrCat(kind_.kind, " reflector: skipped: ", Absl(what)));
}

void Reflector::RejectObject(const std::string& key, std::string_view resource_version,
                             std::string_view what) {
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.decode_errors;
  }
  if (!key.empty()) {
    auto [it, inserted] = rejected_versions_.try_emplace(key, resource_version);
    if (!inserted && it->second == resource_version) return;  // this version was logged
    it->second = std::string(resource_version);
  }
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.rejected_objects;
  }
  util::LogWarning(absl::StrCat(kind_.kind, " reflector: rejected: ", Absl(what)));
}

bool Reflector::ResyncDue() const {
  return options_.resync_interval > absl::ZeroDuration() &&
         clock_->Now() - last_list_ >= options_.resync_interval;
}

void Reflector::CountRelist(RelistReason reason, std::string_view detail) {
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.relists;
    ++stats_.relists_by_reason[static_cast<size_t>(reason)];
  }
  const std::string message =
      absl::StrCat(kind_.kind, " reflector: listing ", kind_.list_path, " again (",
                   Absl(RelistReasonName(reason)), "): ", Absl(detail));
  // A server ahead of or behind what it showed before lost state: worth an operator's look.
  if (reason == RelistReason::kTooLarge || reason == RelistReason::kBookmarkWentBack) {
    util::LogWarning(message);
  } else {
    util::LogInfo(message);
  }
}

void Reflector::SetResourceVersion(std::string resource_version) {
  resource_version_ = std::move(resource_version);
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.last_resource_version = resource_version_;
}

void Reflector::LogDistinct(std::string_view message) {
  if (message == last_logged_failure_) return;
  last_logged_failure_ = std::string(message);
  util::LogWarning(message);
}

absl::Duration Reflector::InitialBackoff() const {
  return std::max(options_.backoff_initial, kMinimumBackoff);
}

absl::Duration Reflector::NextBackoff() {
  const double stretch = 1.0 + options_.backoff_jitter * absl::Uniform<double>(random_, 0.0, 1.0);
  const absl::Duration max = std::max(options_.backoff_max, kMinimumBackoff);
  const absl::Duration wait = std::min(current_backoff_ * stretch, max);
  current_backoff_ = std::min(current_backoff_ * 2, max);
  return wait;
}

}  // namespace kubesched::client

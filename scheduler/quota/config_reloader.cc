#include "scheduler/quota/config_reloader.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/util/log.h"

namespace kubesched::quota {

void QueueConfigReloader::Reload(const api::ConfigMap& map, bool deleted) {
  const config::ObjectRef& ref = file_queues_.config_map;
  if (!ref.Names(map.meta.namespace_name, map.meta.name)) return;
  const std::string source = absl::StrCat("ConfigMap ", ref.namespace_name, "/", ref.name);
  bool check = false;
  if (deleted) {
    util::LogInfo(absl::StrCat(source, " deleted: the configuration file's queues apply"));
    tracker_->SetConfig(file_queues_);
    absl::MutexLock lock(&mu_);
    source_.reset();
    check = nodes_known_;
  } else {
    auto text = map.data.find(std::string(config::kQueuesConfigMapKey));
    absl::StatusOr<config::QueuesConfig> parsed =
        text == map.data.end()
            ? absl::InvalidArgumentError(absl::StrCat("no data key ", config::kQueuesConfigMapKey))
            : config::ParseQueuesDocument(text->second);
    if (!parsed.ok()) {
      const std::string error = absl::StrCat(source,
                                             ": queue configuration rejected, the last good "
                                             "one stays in force: ",
                                             parsed.status().message());
      util::LogWarning(error);
      {
        absl::MutexLock lock(&mu_);
        ++reloads_.rejected;
        reloads_.last_error = error;
      }
      if (warn_) warn_(map.meta, kQueueConfigRejectedReason, error);
      return;
    }
    // Where the ConfigMap lives, where the ledger goes and which devices count stay the file's
    // business.
    parsed->config_map = file_queues_.config_map;
    parsed->devices = file_queues_.devices;
    parsed->ledger = file_queues_.ledger;
    parsed->ledger_interval = file_queues_.ledger_interval;
    tracker_->SetConfig(*std::move(parsed));
    util::LogInfo(absl::StrCat(source, ": queue configuration applied"));
    absl::MutexLock lock(&mu_);
    ++reloads_.applied;
    source_ = map.meta;
    check = nodes_known_;
  }
  if (check) CheckTypedLimits();
}

std::vector<UnmatchedTypedLimit> QueueConfigReloader::CheckTypedLimits() {
  std::optional<api::ObjectMeta> source;
  {
    absl::MutexLock lock(&mu_);
    nodes_known_ = true;
    source = source_;
  }
  std::vector<UnmatchedTypedLimit> unmatched = tracker_->UnmatchedTypedLimits();
  if (unmatched.empty()) return unmatched;
  std::vector<std::string> messages;
  for (const UnmatchedTypedLimit& limit : unmatched) {
    messages.push_back(limit.Message());
    util::LogWarning(messages.back());
  }
  // One Event for them all: per-object rate limits would drop all but the first few.
  if (source.has_value() && warn_) {
    warn_(*source, kTypedLimitMatchesNoNodeReason, absl::StrJoin(messages, "; "));
  }
  return unmatched;
}

config::ConfigReloads QueueConfigReloader::reloads() const {
  absl::MutexLock lock(&mu_);
  return reloads_;
}

}  // namespace kubesched::quota

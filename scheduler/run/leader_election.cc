#include "scheduler/run/leader_election.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/client/json_encode.h"
#include "scheduler/util/log.h"
#include "scheduler/util/sleep.h"
#include "scheduler/util/status_macros.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {

namespace {

// client-go's JitterFactor: the acquire period is retry_period * [1, 2.2).
constexpr double kJitterFactor = 1.2;
// The shortest request deadline near the end of a renew round.
constexpr absl::Duration kMinRequestTimeout = absl::Milliseconds(100);

std::string StringMember(const rapidjson::Value& object, const char* name) {
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

int64_t IntMember(const rapidjson::Value& object, const char* name) {
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsInt64()) return 0;
  return it->value.GetInt64();
}

absl::StatusOr<rapidjson::Document> ParseObject(const std::string& body, std::string_view what) {
  rapidjson::Document document;
  document.Parse(body.data(), body.size());
  if (document.HasParseError() || !document.IsObject()) {
    return absl::InternalError(
        absl::StrCat("unreadable ", util::Absl(what), ": not a JSON object"));
  }
  return document;
}

std::string Serialize(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string RandomUuid() {
  absl::BitGen random;
  std::array<uint8_t, 16> bytes;
  for (uint8_t& byte : bytes) byte = absl::Uniform<uint8_t>(random);
  bytes[6] = static_cast<uint8_t>((bytes[6] & 0x0F) | 0x40);  // version 4
  bytes[8] = static_cast<uint8_t>((bytes[8] & 0x3F) | 0x80);  // RFC 4122 variant
  std::string uuid;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) uuid.push_back('-');
    absl::StrAppendFormat(&uuid, "%02x", bytes[i]);
  }
  return uuid;
}

}  // namespace

absl::Status ValidateLeaderElectionConfig(const LeaderElectionConfig& config) {
  KUBESCHED_RETURN_IF_ERROR(client::ValidatePathSegment("lease namespace", config.namespace_name));
  KUBESCHED_RETURN_IF_ERROR(client::ValidatePathSegment("lease name", config.name));
  if (config.retry_period <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("leader election: retryPeriod must be positive");
  }
  if (config.renew_deadline <= config.retry_period * kJitterFactor) {
    return absl::InvalidArgumentError(
        "leader election: renewDeadline must be greater than retryPeriod*1.2");
  }
  if (config.lease_duration <= config.renew_deadline) {
    return absl::InvalidArgumentError(
        "leader election: leaseDuration must be greater than renewDeadline");
  }
  if (config.lease_duration < absl::Seconds(1)) {
    return absl::InvalidArgumentError("leader election: leaseDuration must be at least 1s");
  }
  return absl::OkStatus();
}

std::string DefaultLeaderIdentity() {
  std::array<char, 256> hostname{};
  if (gethostname(hostname.data(), hostname.size() - 1) != 0 || hostname[0] == '\0') {
    return RandomUuid();
  }
  return absl::StrCat(hostname.data(), "_", RandomUuid());
}

LeaderElector::LeaderElector(client::HttpTransport* transport, LeaderElectionConfig config,
                             const util::Clock* clock, WaitFn wait)
    : transport_(transport),
      config_(std::move(config)),
      clock_(clock != nullptr ? clock : &real_clock_),
      wait_(std::move(wait)) {
  if (config_.identity.empty()) config_.identity = DefaultLeaderIdentity();
}

void LeaderElector::Run(std::stop_token stop, const LeaderCallbacks& callbacks) {
  util::LogInfo(absl::StrCat("leader election: ", config_.identity, " campaigning for lease ",
                             config_.namespace_name, "/", config_.name));
  const auto report_status = [&callbacks](bool leading) {
    if (callbacks.on_leading_status) callbacks.on_leading_status(leading);
  };
  report_status(false);
  if (!Acquire(stop, callbacks)) return;
  util::LogInfo(absl::StrCat("leader election: ", config_.identity, " acquired lease ",
                             config_.namespace_name, "/", config_.name),
                {util::KObj("lease", config_.namespace_name, config_.name),
                 util::KV("identity", config_.identity)});
  leading_.store(true, std::memory_order_release);
  report_status(true);
  if (callbacks.on_started_leading) callbacks.on_started_leading();
  RenewUntilLost(stop, callbacks);
  leading_.store(false, std::memory_order_release);
  report_status(false);
  if (!stop.stop_requested()) {
    util::LogWarning(
        absl::StrCat("leader election: failed to renew lease ", config_.namespace_name, "/",
                     config_.name, " within ", absl::FormatDuration(config_.renew_deadline)),
        {util::KObj("lease", config_.namespace_name, config_.name)});
  }
  // As client-go, also after a failed renewal: if the server still names us, the next leader
  // need not wait out the lease. A no-op when someone else holds it.
  if (config_.release_on_cancel) {
    absl::Status released = Release();
    if (!released.ok()) {
      util::LogWarning(absl::StrCat("leader election: release failed: ", released.message()));
    }
  }
  if (callbacks.on_stopped_leading) callbacks.on_stopped_leading();
}

bool LeaderElector::Acquire(const std::stop_token& stop, const LeaderCallbacks& callbacks) {
  while (!stop.stop_requested()) {
    const bool acquired = TryAcquireOrRenew(config_.renew_deadline) == Attempt::kHeld;
    ReportLeaderChange(callbacks);
    if (acquired) return true;
    if (!Wait(JitteredRetryPeriod(), stop)) return false;
  }
  return false;
}

void LeaderElector::RenewUntilLost(const std::stop_token& stop, const LeaderCallbacks& callbacks) {
  while (Wait(config_.retry_period, stop)) {
    // A round of attempts must succeed within renew_deadline of its start; requests share that
    // budget, so that we give up before other candidates consider the lease expired.
    const absl::Time round_start = clock_->Now();
    while (true) {
      const absl::Duration remaining = config_.renew_deadline - (clock_->Now() - round_start);
      const Attempt attempt = TryAcquireOrRenew(std::max(remaining, kMinRequestTimeout));
      ReportLeaderChange(callbacks);
      if (attempt == Attempt::kHeld) break;
      if (attempt == Attempt::kHeldByOther) {
        util::LogWarning(absl::StrCat("leader election: lease ", config_.namespace_name, "/",
                                      config_.name, " is held by ", LeaderIdentity(),
                                      "; giving up leadership at once"));
        return;
      }
      const absl::Duration left = config_.renew_deadline - (clock_->Now() - round_start);
      if (left <= absl::ZeroDuration()) return;  // lost
      if (!Wait(std::min(config_.retry_period, left), stop)) return;
    }
  }
}

bool LeaderElector::RenewedWithin(absl::Duration window) const {
  if (!IsLeader()) return false;
  const absl::Time renewed =
      absl::FromUnixNanos(last_renewal_unix_nanos_.load(std::memory_order_acquire));
  return clock_->Now() - renewed < window;
}

LeaderElector::Attempt LeaderElector::TryAcquireOrRenew(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  Record desired{config_.identity, absl::ToInt64Seconds(config_.lease_duration),
                 client::FormatMicroTime(now), client::FormatMicroTime(now), 0};

  absl::StatusOr<Record> current = GetLease(timeout);
  if (!current.ok()) {
    if (!absl::IsNotFound(current.status())) {
      util::LogWarning(absl::StrCat("leader election: ", current.status().message()));
      return Attempt::kFailed;
    }
    absl::Status created = CreateLease(desired, timeout);
    if (!created.ok()) {
      util::LogWarning(absl::StrCat("leader election: ", created.message()));
      return Attempt::kFailed;
    }
    Observe(desired, now);
    last_renewal_unix_nanos_.store(absl::ToUnixNanos(now), std::memory_order_release);
    return Attempt::kHeld;
  }

  // Expiry is judged from when we saw the record change, not from its renewTime.
  if (!observed_.has_value() || *observed_ != *current) Observe(*current, now);
  const bool held_by_other = !current->holder.empty() && !ObservedHolderIsUs();
  if (held_by_other && observed_time_ + absl::Seconds(current->lease_duration_seconds) > now) {
    return Attempt::kHeldByOther;
  }

  if (ObservedHolderIsUs()) {
    desired.acquire_time = current->acquire_time;
    desired.lease_transitions = current->lease_transitions;
  } else {
    desired.lease_transitions = current->lease_transitions + 1;
  }
  absl::Status updated = UpdateLease(desired, timeout);
  if (!updated.ok()) {  // 409: another candidate won the race
    util::LogWarning(absl::StrCat("leader election: ", updated.message()));
    return Attempt::kFailed;
  }
  Observe(desired, now);
  last_renewal_unix_nanos_.store(absl::ToUnixNanos(now), std::memory_order_release);
  return Attempt::kHeld;
}

absl::Status LeaderElector::Release() {
  absl::MutexLock lock(&mu_);
  if (!ObservedHolderIsUs()) return absl::OkStatus();
  const absl::Time now = clock_->Now();
  const Record released{"", 1, client::FormatMicroTime(now), client::FormatMicroTime(now),
                        observed_->lease_transitions};
  KUBESCHED_RETURN_IF_ERROR(UpdateLease(released, config_.renew_deadline));
  Observe(released, now);
  return absl::OkStatus();
}

std::string LeaderElector::LeaderIdentity() const {
  absl::MutexLock lock(&holder_mu_);
  return observed_holder_;
}

void LeaderElector::ReportLeaderChange(const LeaderCallbacks& callbacks) {
  std::string holder = LeaderIdentity();
  if (holder == reported_leader_) return;
  reported_leader_ = std::move(holder);
  if (callbacks.on_new_leader) callbacks.on_new_leader(reported_leader_);
}

void LeaderElector::Observe(const Record& record, absl::Time now) {
  observed_ = record;
  observed_time_ = now;
  absl::MutexLock lock(&holder_mu_);
  observed_holder_ = record.holder;
}

bool LeaderElector::ObservedHolderIsUs() const {
  return observed_.has_value() && observed_->holder == config_.identity;
}

std::string LeaderElector::LeasesPath() const {
  return absl::StrCat("/apis/coordination.k8s.io/v1/namespaces/", config_.namespace_name,
                      "/leases");
}

std::string LeaderElector::LeasePath() const {
  return absl::StrCat(LeasesPath(), "/", config_.name);
}

absl::StatusOr<client::HttpResponse> LeaderElector::Send(std::string method, std::string target,
                                                         std::string body,
                                                         absl::Duration timeout) const {
  client::HttpRequest request;
  request.method = std::move(method);
  request.target = std::move(target);
  if (!body.empty()) request.content_type = "application/json";
  request.body = std::move(body);
  request.max_retries = 0;
  request.timeout = timeout;
  return transport_->Do(request);
}

absl::StatusOr<LeaderElector::Record> LeaderElector::GetLease(absl::Duration timeout) {
  absl::StatusOr<client::HttpResponse> response = Send("GET", LeasePath(), "", timeout);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return client::StatusFromResponse(*response, absl::StrCat("getting lease ", LeasePath()));
  }
  absl::StatusOr<rapidjson::Document> lease = ParseObject(response->body, "lease");
  if (!lease.ok()) return lease.status();
  Record record;
  auto spec = lease->FindMember("spec");
  if (spec != lease->MemberEnd() && spec->value.IsObject()) {
    record.holder = StringMember(spec->value, "holderIdentity");
    record.lease_duration_seconds = IntMember(spec->value, "leaseDurationSeconds");
    record.acquire_time = StringMember(spec->value, "acquireTime");
    record.renew_time = StringMember(spec->value, "renewTime");
    record.lease_transitions = IntMember(spec->value, "leaseTransitions");
  }
  cached_lease_ = std::move(response->body);
  return record;
}

namespace {

// The Lease spec of `record`, written into `json` as an object.
void WriteLeaseSpec(client::JsonWriter& json, const std::string& holder, int64_t duration_seconds,
                    const std::string& acquire_time, const std::string& renew_time,
                    int64_t transitions) {
  json.BeginObject()
      .Field("holderIdentity", holder)
      .Field("leaseDurationSeconds", duration_seconds);
  if (!acquire_time.empty()) json.Field("acquireTime", acquire_time);
  if (!renew_time.empty()) json.Field("renewTime", renew_time);
  json.Field("leaseTransitions", transitions).EndObject();
}

}  // namespace

absl::Status LeaderElector::CreateLease(const Record& record, absl::Duration timeout) {
  client::JsonWriter json;
  json.BeginObject()
      .Field("apiVersion", "coordination.k8s.io/v1")
      .Field("kind", "Lease")
      .Key("metadata")
      .BeginObject()
      .Field("name", config_.name)
      .Field("namespace", config_.namespace_name)
      .EndObject()
      .Key("spec");
  WriteLeaseSpec(json, record.holder, record.lease_duration_seconds, record.acquire_time,
                 record.renew_time, record.lease_transitions);
  json.EndObject();
  absl::StatusOr<client::HttpResponse> response = Send("POST", LeasesPath(), json.str(), timeout);
  if (!response.ok()) return response.status();
  if (response->status != 200 && response->status != 201) {
    return client::StatusFromResponse(*response, absl::StrCat("creating lease ", LeasePath()));
  }
  return CacheLeaseObject(response->body);
}

absl::Status LeaderElector::UpdateLease(const Record& record, absl::Duration timeout) {
  // PUT back the object we read, spec replaced: its metadata carries the resourceVersion that
  // makes the update conditional, and labels or annotations others set are kept.
  absl::StatusOr<rapidjson::Document> lease = ParseObject(cached_lease_, "cached lease");
  if (!lease.ok()) return lease.status();
  client::JsonWriter spec_json;
  WriteLeaseSpec(spec_json, record.holder, record.lease_duration_seconds, record.acquire_time,
                 record.renew_time, record.lease_transitions);
  absl::StatusOr<rapidjson::Document> spec = ParseObject(spec_json.str(), "lease spec");
  if (!spec.ok()) return spec.status();
  rapidjson::Value spec_value(static_cast<const rapidjson::Value&>(*spec), lease->GetAllocator());
  lease->RemoveMember("spec");
  lease->AddMember("spec", spec_value, lease->GetAllocator());

  absl::StatusOr<client::HttpResponse> response =
      Send("PUT", LeasePath(), Serialize(*lease), timeout);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return client::StatusFromResponse(*response, absl::StrCat("updating lease ", LeasePath()));
  }
  return CacheLeaseObject(response->body);
}

absl::Status LeaderElector::CacheLeaseObject(const std::string& body) {
  absl::StatusOr<rapidjson::Document> lease = ParseObject(body, "lease in the response");
  if (!lease.ok()) return lease.status();
  cached_lease_ = body;
  return absl::OkStatus();
}

bool LeaderElector::Wait(absl::Duration duration, const std::stop_token& stop) const {
  if (stop.stop_requested()) return false;
  if (wait_) return wait_(duration, stop);
  return util::SleepFor(stop, duration);
}

absl::Duration LeaderElector::JitteredRetryPeriod() const {
  absl::BitGen random;
  return config_.retry_period * (1.0 + absl::Uniform(random, 0.0, kJitterFactor));
}

}  // namespace kubesched::scheduler

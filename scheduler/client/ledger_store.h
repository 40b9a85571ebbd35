#pragma once

// Keeps the queue budget ledger (quota::Ledger) in a ConfigMap, under the data key "ledger.json"
// (see scheduler/quota/ledger_json.h for the format). `kubesched run`'s leader reads it once when
// it starts leading and writes it periodically and on shutdown.
//
// Thread-safe: stateless apart from the transport. Synchronous: call it from a background thread,
// never the scheduling thread.

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/quota/quota_tracker.h"

namespace kubesched::client {

class LedgerStore {
 public:
  // `timeout` bounds each request (with the transport's retries).
  explicit LedgerStore(HttpTransport* transport, absl::Duration timeout = absl::Seconds(10))
      : transport_(transport), timeout_(timeout) {}

  // The ledger in ConfigMap namespace_name/name; nullopt when the ConfigMap does not exist (404).
  // A ConfigMap without the "ledger.json" key, or whose ledger does not decode, is an
  // InvalidArgument error naming the ConfigMap; transport and HTTP errors are returned as they are.
  absl::StatusOr<std::optional<quota::Ledger>> Read(std::string_view namespace_name,
                                                    std::string_view name);

  // Stores `ledger`: a JSON merge patch of the ConfigMap's "ledger.json" key (other keys, labels
  // and annotations are kept); when the ConfigMap does not exist yet, creates it (and if another
  // writer created it meanwhile, patches it after all).
  absl::Status Write(std::string_view namespace_name, std::string_view name,
                     const quota::Ledger& ledger);

  // The request bodies, for tests.
  static std::string PatchBody(std::string_view ledger_json);
  static std::string CreateBody(std::string_view namespace_name, std::string_view name,
                                std::string_view ledger_json);

 private:
  absl::StatusOr<HttpResponse> Send(std::string method, std::string target, std::string body,
                                    std::string content_type) const;

  HttpTransport* transport_;
  absl::Duration timeout_;
};

}  // namespace kubesched::client

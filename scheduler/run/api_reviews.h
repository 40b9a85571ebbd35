#pragma once

// The secure port's reviews made against the API server: a TokenReview
// (authentication.k8s.io/v1) on the authentication connection and a SubjectAccessReview
// (authorization.k8s.io/v1) on the authorization one, each one POST with a timeout. Called on
// the secure server's worker threads, never on the scheduling thread.

#include "absl/time/time.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/serving/delegated_auth.h"

namespace kubesched::scheduler {

class ApiReviewClient : public serving::ReviewClient {
 public:
  // The transports must outlive this object; they may be the same one.
  ApiReviewClient(client::HttpTransport* authentication, client::HttpTransport* authorization,
                  absl::Duration timeout = absl::Seconds(10));

  absl::StatusOr<serving::TokenReviewResult> ReviewToken(const std::string& token) override;
  absl::StatusOr<serving::AccessReviewResult> ReviewAccess(
      const serving::AccessRequest& request) override;

 private:
  client::HttpTransport* const authentication_;
  client::HttpTransport* const authorization_;
  const absl::Duration timeout_;
};

}  // namespace kubesched::scheduler

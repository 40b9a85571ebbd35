#pragma once

// Every request kubesched-testapi was sent, for tests that check what a client calls (the RBAC
// test of deploy/): who sent it (its bearer token), the method, the path without the query, and
// whether it was a watch, each with a count. Served as GET /testapi/requests:
//   {"requests":[{"by":"TOKEN","method":"GET","path":"/api/v1/pods","watch":true,"count":2},...]}
// and emptied with the statistics (POST /testapi/stats/reset). Paths under /testapi/ (the test
// server's own controls) are not recorded.
//
// Thread-safety: all methods may be called from any thread.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "absl/synchronization/mutex.h"

namespace kubesched::testapi {

class RequestLog {
 public:
  // `authorization` is the request's Authorization header, `query` its query string.
  void Record(std::string_view authorization, std::string_view method, std::string_view path,
              std::string_view query);
  std::string Json() const;
  void Clear();

 private:
  using Key = std::tuple<std::string, std::string, std::string, bool>;  // by, method, path, watch
  mutable absl::Mutex mu_;
  std::map<Key, int64_t> counts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubesched::testapi

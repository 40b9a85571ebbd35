#pragma once

// Certificates generated at test time (OpenSSL, in memory), so no key material is committed:
// a CA, a server certificate for 127.0.0.1 / localhost signed by it, a client certificate signed
// by it, and an unrelated CA for "wrong CA" tests. All PEM text.

#include <string>

#include "absl/status/statusor.h"

namespace kubesched::testing {

struct TestCertificates {
  std::string ca_cert_pem{};
  std::string server_cert_pem{};  // SAN: IP 127.0.0.1, DNS localhost
  std::string server_key_pem{};
  std::string client_cert_pem{};  // CN kubesched-test-client
  std::string client_key_pem{};
  std::string other_ca_cert_pem{};  // a CA that signed nothing here
};

// Generates a fresh set (EC P-256 keys, valid from one hour ago for one day).
absl::StatusOr<TestCertificates> GenerateTestCertificates();

// Writes the set as files ca.crt, server.crt, server.key, client.crt, client.key, other-ca.crt in
// `dir` (created if needed).
absl::Status WriteTestCertificates(const TestCertificates& certs, const std::string& dir);

}  // namespace kubesched::testing

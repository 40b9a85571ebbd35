#pragma once

// The serving certificate of the secure port: the files given with --tls-cert-file and
// --tls-private-key-file, or, without them, a certificate made in memory at start as
// kube-scheduler makes it (a one-year CA "localhost-ca@<unix time>" that signs a serving
// certificate "localhost@<unix time>" for DNS localhost and IP 127.0.0.1; RSA 2048).

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kubesched::serving {

struct ServingCertificate {
  std::string chain_pem;  // the serving certificate first, then any intermediates (or its CA)
  std::string key_pem;    // its private key
};

struct SelfSignedRequest {
  std::string host = "localhost";  // the CN's stem; a DNS SAN, or an IP SAN when it is one
  std::vector<std::string> ip_addresses = {"127.0.0.1"};
  std::vector<std::string> dns_names;
  absl::Time now = absl::Now();
};

// A fresh CA and a serving certificate it signed, valid from an hour before `now` for a year.
// Internal on an OpenSSL failure (its reason in the message).
absl::StatusOr<ServingCertificate> GenerateSelfSigned(const SelfSignedRequest& request);

// Reads a PEM certificate chain and its private key. InvalidArgument naming the flag and the file
// when one cannot be read, holds no PEM certificate or key, or the key does not match the
// certificate.
absl::StatusOr<ServingCertificate> LoadCertificateFiles(const std::string& cert_file,
                                                        const std::string& key_file);

// Checks that `key_pem` is the private key of the first certificate of `chain_pem`.
// InvalidArgument saying which part is wrong.
absl::Status CheckCertificateMatchesKey(std::string_view chain_pem, std::string_view key_pem);

}  // namespace kubesched::serving

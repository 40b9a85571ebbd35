#include "scheduler/serving/certificate.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/util/file.h"
#include "scheduler/util/strings.h"

namespace kubesched::serving {
namespace {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using ExtensionPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free>>;
using BignumPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;

// OpenSSL's queued reasons, joined; the queue is emptied so they do not surface later elsewhere.
std::string OpenSslReasons() {
  std::string detail;
  while (unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof(buffer));
    if (!detail.empty()) detail += "; ";
    detail += buffer;
  }
  return detail.empty() ? "unknown OpenSSL error" : detail;
}

absl::Status OpenSslError(std::string_view what) {
  return absl::InternalError(
      absl::StrCat("self-signed certificate: ", util::Absl(what), ": ", OpenSslReasons()));
}

constexpr int kRsaBits = 2048;  // as kube-scheduler's

absl::StatusOr<PkeyPtr> GenerateRsaKey() {
  PkeyPtr key(EVP_RSA_gen(kRsaBits));
  if (!key) return OpenSslError("EVP_RSA_gen");
  return key;
}

absl::Status SetRandomSerial(X509* cert) {
  BignumPtr serial(BN_new());
  // 63 random bits, never zero: unique enough and within RFC 5280's 20 octets.
  if (!serial || BN_rand(serial.get(), 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ODD) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert)) == nullptr) {
    return OpenSslError("serial number");
  }
  return absl::OkStatus();
}

absl::Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtensionPtr extension(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!extension || X509_add_ext(cert, extension.get(), -1) != 1) {
    return OpenSslError(absl::StrCat("extension ", value));
  }
  return absl::OkStatus();
}

struct CertificateSpec {
  std::string common_name;
  bool is_ca = false;
  std::string subject_alt_names;  // openssl.cnf syntax; empty for the CA
};

absl::StatusOr<X509Ptr> MakeCertificate(const CertificateSpec& spec, absl::Time now, EVP_PKEY* key,
                                        X509* issuer, EVP_PKEY* issuer_key) {
  X509Ptr cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1) return OpenSslError("X509_new");
  if (absl::Status status = SetRandomSerial(cert.get()); !status.ok()) return status;
  // Valid from an hour ago, against clock skew, for a year.
  time_t valid_from = absl::ToTimeT(now - absl::Hours(1));
  if (X509_time_adj_ex(X509_getm_notBefore(cert.get()), 0, 0, &valid_from) == nullptr ||
      X509_time_adj_ex(X509_getm_notAfter(cert.get()), 365, 0, &valid_from) == nullptr ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return OpenSslError("validity");
  }
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(spec.common_name.c_str()),
                                 -1, -1, 0) != 1) {
    return OpenSslError("subject");
  }
  X509* signer = issuer != nullptr ? issuer : cert.get();
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(signer)) != 1) {
    return OpenSslError("issuer");
  }
  std::vector<std::pair<int, std::string>> extensions;
  if (spec.is_ca) {
    extensions = {{NID_basic_constraints, "critical,CA:TRUE"},
                  {NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign"}};
  } else {
    extensions = {{NID_basic_constraints, "critical,CA:FALSE"},
                  {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                  {NID_ext_key_usage, "serverAuth"}};
    if (!spec.subject_alt_names.empty()) {
      extensions.emplace_back(NID_subject_alt_name, spec.subject_alt_names);
    }
  }
  for (const auto& [nid, value] : extensions) {
    if (absl::Status status = AddExtension(cert.get(), signer, nid, value); !status.ok()) {
      return status;
    }
  }
  if (X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) <= 0) {
    return OpenSslError("X509_sign");
  }
  return cert;
}

absl::StatusOr<std::string> CertificatePem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return OpenSslError("PEM_write_bio_X509");
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

absl::StatusOr<std::string> KeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return OpenSslError("PEM_write_bio_PrivateKey");
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

// "DNS:localhost,IP:127.0.0.1": the host (as an IP or a name) and the alternate names.
std::string SubjectAltNames(const SelfSignedRequest& request) {
  std::vector<std::string> names;
  unsigned char ip[sizeof(in6_addr)];
  const bool host_is_ip = inet_pton(AF_INET, request.host.c_str(), ip) == 1 ||
                          inet_pton(AF_INET6, request.host.c_str(), ip) == 1;
  std::vector<std::string> ips = request.ip_addresses;
  std::vector<std::string> dns = request.dns_names;
  (host_is_ip ? ips : dns).insert((host_is_ip ? ips : dns).begin(), request.host);
  for (const std::string& name : dns) names.push_back("DNS:" + name);
  for (const std::string& address : ips) names.push_back("IP:" + address);
  return absl::StrJoin(names, ",");
}

absl::StatusOr<X509Ptr> ParseCertificate(std::string_view pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!cert) {
    ERR_clear_error();
    return absl::InvalidArgumentError("no PEM certificate found");
  }
  return cert;
}

absl::StatusOr<PkeyPtr> ParseKey(std::string_view pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  // A null passphrase callback that refuses: an encrypted key fails instead of prompting.
  PkeyPtr key(bio ? PEM_read_bio_PrivateKey(
                        bio.get(), nullptr, [](char*, int, int, void*) { return 0; }, nullptr)
                  : nullptr);
  if (!key) {
    ERR_clear_error();
    return absl::InvalidArgumentError("no unencrypted PEM private key found");
  }
  return key;
}

}  // namespace

absl::StatusOr<ServingCertificate> GenerateSelfSigned(const SelfSignedRequest& request) {
  absl::StatusOr<PkeyPtr> ca_key = GenerateRsaKey();
  if (!ca_key.ok()) return ca_key.status();
  const int64_t unix_seconds = absl::ToUnixSeconds(request.now);
  CertificateSpec ca_spec{absl::StrCat(request.host, "-ca@", unix_seconds), true, ""};
  absl::StatusOr<X509Ptr> ca =
      MakeCertificate(ca_spec, request.now, ca_key->get(), nullptr, nullptr);
  if (!ca.ok()) return ca.status();
  absl::StatusOr<PkeyPtr> key = GenerateRsaKey();
  if (!key.ok()) return key.status();
  CertificateSpec spec{absl::StrCat(request.host, "@", unix_seconds), false,
                       SubjectAltNames(request)};
  absl::StatusOr<X509Ptr> cert =
      MakeCertificate(spec, request.now, key->get(), ca->get(), ca_key->get());
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> cert_pem = CertificatePem(cert->get());
  absl::StatusOr<std::string> ca_pem = CertificatePem(ca->get());
  absl::StatusOr<std::string> key_pem = KeyPem(key->get());
  if (!cert_pem.ok()) return cert_pem.status();
  if (!ca_pem.ok()) return ca_pem.status();
  if (!key_pem.ok()) return key_pem.status();
  return ServingCertificate{*cert_pem + *ca_pem, *std::move(key_pem)};
}

absl::Status CheckCertificateMatchesKey(std::string_view chain_pem, std::string_view key_pem) {
  absl::StatusOr<X509Ptr> cert = ParseCertificate(chain_pem);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<PkeyPtr> key = ParseKey(key_pem);
  if (!key.ok()) return key.status();
  if (X509_check_private_key(cert->get(), key->get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError("the private key does not match the certificate");
  }
  return absl::OkStatus();
}

absl::StatusOr<ServingCertificate> LoadCertificateFiles(const std::string& cert_file,
                                                        const std::string& key_file) {
  constexpr size_t kMaxPemBytes = 1 << 20;
  absl::StatusOr<std::string> chain = util::ReadFileAtMost(cert_file, kMaxPemBytes);
  if (!chain.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-cert-file ", cert_file, ": ", chain.status().message()));
  }
  absl::StatusOr<std::string> key = util::ReadFileAtMost(key_file, kMaxPemBytes);
  if (!key.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-private-key-file ", key_file, ": ", key.status().message()));
  }
  if (absl::StatusOr<X509Ptr> cert = ParseCertificate(*chain); !cert.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-cert-file ", cert_file, ": ", cert.status().message()));
  }
  if (absl::StatusOr<PkeyPtr> parsed = ParseKey(*key); !parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-private-key-file ", key_file, ": ", parsed.status().message()));
  }
  absl::Status match = CheckCertificateMatchesKey(*chain, *key);
  if (!match.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--tls-cert-file ", cert_file,
                                                   " and --tls-private-key-file ", key_file, ": ",
                                                   match.message()));
  }
  return ServingCertificate{*std::move(chain), *std::move(key)};
}

}  // namespace kubesched::serving

#include "tests/testing/test_certs.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kubesched::testing {
namespace {

// RAII owners for the OpenSSL objects used here, so every early return frees what it built.
struct PkeyDeleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct PkeyCtxDeleter {
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
};
struct X509Deleter {
  void operator()(X509* p) const { X509_free(p); }
};
struct X509ExtensionDeleter {
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
struct BioDeleter {
  void operator()(BIO* p) const { BIO_free(p); }
};
struct BignumDeleter {
  void operator()(BIGNUM* p) const { BN_free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxDeleter>;
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
using X509ExtensionPtr = std::unique_ptr<X509_EXTENSION, X509ExtensionDeleter>;
using BioPtr = std::unique_ptr<BIO, BioDeleter>;
using BignumPtr = std::unique_ptr<BIGNUM, BignumDeleter>;

// An error carrying OpenSSL's own queued reason (and clearing the queue, so it doesn't leak into
// unrelated later calls on this thread).
absl::Status OpenSslError(std::string_view what) {
  std::string detail;
  while (unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof(buffer));
    if (!detail.empty()) detail += "; ";
    detail += buffer;
  }
  if (detail.empty()) detail = "unknown OpenSSL error";
  return absl::InternalError(absl::StrCat("test certificates: ", std::string(what), ": ", detail));
}

absl::StatusOr<PkeyPtr> GenerateP256Key() {
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
  if (!ctx) return OpenSslError("EVP_PKEY_CTX_new_from_name");
  if (EVP_PKEY_keygen_init(ctx.get()) <= 0) return OpenSslError("EVP_PKEY_keygen_init");
  if (EVP_PKEY_CTX_set_group_name(ctx.get(), "P-256") <= 0) {
    return OpenSslError("EVP_PKEY_CTX_set_group_name");
  }
  EVP_PKEY* raw = nullptr;
  if (EVP_PKEY_keygen(ctx.get(), &raw) <= 0) return OpenSslError("EVP_PKEY_keygen");
  return PkeyPtr(raw);
}

absl::Status SetRandomSerial(X509* cert) {
  BignumPtr serial(BN_new());
  if (!serial) return OpenSslError("BN_new");
  // 63 random bits: unique enough, and well under the 20-octet limit of RFC 5280.
  if (BN_rand(serial.get(), 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1) {
    return OpenSslError("BN_rand");
  }
  ASN1_INTEGER* asn1 = X509_get_serialNumber(cert);  // owned by cert
  if (BN_to_ASN1_INTEGER(serial.get(), asn1) == nullptr) return OpenSslError("BN_to_ASN1_INTEGER");
  return absl::OkStatus();
}

absl::Status SetSubjectCommonName(X509* cert, const std::string& common_name) {
  X509_NAME* name = X509_get_subject_name(cert);  // owned by cert
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                 -1, 0) != 1) {
    return OpenSslError("X509_NAME_add_entry_by_txt");
  }
  return absl::OkStatus();
}

// Adds one X509v3 extension given in openssl.cnf syntax ("CA:TRUE", "IP:127.0.0.1,...").
absl::Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509ExtensionPtr extension(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!extension) return OpenSslError(absl::StrCat("X509V3_EXT_conf_nid ", value));
  if (X509_add_ext(cert, extension.get(), -1) != 1) return OpenSslError("X509_add_ext");
  return absl::OkStatus();
}

struct CertificateSpec {
  std::string common_name{};
  bool is_ca = false;
  std::string subject_alt_names{};   // openssl.cnf syntax; empty = none
  std::string extended_key_usage{};  // empty = none
};

// Builds a certificate for `key`. `issuer`/`issuer_key` null means self-signed.
absl::StatusOr<X509Ptr> MakeCertificate(const CertificateSpec& spec, EVP_PKEY* key, X509* issuer,
                                        EVP_PKEY* issuer_key) {
  X509Ptr cert(X509_new());
  if (!cert) return OpenSslError("X509_new");
  if (X509_set_version(cert.get(), 2) != 1) return OpenSslError("X509_set_version");  // v3
  if (absl::Status status = SetRandomSerial(cert.get()); !status.ok()) return status;
  constexpr long kOneHour = 60 * 60;
  if (X509_gmtime_adj(X509_getm_notBefore(cert.get()), -kOneHour) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * kOneHour) == nullptr) {
    return OpenSslError("X509_gmtime_adj");
  }
  if (X509_set_pubkey(cert.get(), key) != 1) return OpenSslError("X509_set_pubkey");
  if (absl::Status status = SetSubjectCommonName(cert.get(), spec.common_name); !status.ok()) {
    return status;
  }
  X509* signer = issuer != nullptr ? issuer : cert.get();
  EVP_PKEY* signer_key = issuer_key != nullptr ? issuer_key : key;
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(signer)) != 1) {
    return OpenSslError("X509_set_issuer_name");
  }

  std::vector<std::pair<int, std::string>> extensions;
  if (spec.is_ca) {
    extensions = {{NID_basic_constraints, "critical,CA:TRUE"},
                  {NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature"},
                  {NID_subject_key_identifier, "hash"}};
  } else {
    extensions = {{NID_basic_constraints, "critical,CA:FALSE"},
                  {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                  {NID_authority_key_identifier, "keyid:always"}};
  }
  if (!spec.extended_key_usage.empty()) {
    extensions.emplace_back(NID_ext_key_usage, spec.extended_key_usage);
  }
  if (!spec.subject_alt_names.empty()) {
    extensions.emplace_back(NID_subject_alt_name, spec.subject_alt_names);
  }
  for (const auto& [nid, value] : extensions) {
    if (absl::Status status = AddExtension(cert.get(), signer, nid, value); !status.ok()) {
      return status;
    }
  }
  if (X509_sign(cert.get(), signer_key, EVP_sha256()) <= 0) return OpenSslError("X509_sign");
  return cert;
}

absl::StatusOr<std::string> BioContents(BIO* bio) {
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  if (size < 0 || (size > 0 && data == nullptr)) return OpenSslError("BIO_get_mem_data");
  return std::string(data, static_cast<size_t>(size));
}

absl::StatusOr<std::string> CertificateToPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio) return OpenSslError("BIO_new");
  if (PEM_write_bio_X509(bio.get(), cert) != 1) return OpenSslError("PEM_write_bio_X509");
  return BioContents(bio.get());
}

absl::StatusOr<std::string> KeyToPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio) return OpenSslError("BIO_new");
  // PKCS#8 ("BEGIN PRIVATE KEY"), which every TLS library reads.
  if (PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return OpenSslError("PEM_write_bio_PrivateKey");
  }
  return BioContents(bio.get());
}

// A key and its certificate, kept together until they are turned into PEM.
struct KeyAndCertificate {
  PkeyPtr key;
  X509Ptr cert;
};

absl::StatusOr<KeyAndCertificate> MakeKeyAndCertificate(const CertificateSpec& spec,
                                                        const KeyAndCertificate* issuer) {
  absl::StatusOr<PkeyPtr> key = GenerateP256Key();
  if (!key.ok()) return key.status();
  absl::StatusOr<X509Ptr> cert =
      MakeCertificate(spec, key->get(), issuer != nullptr ? issuer->cert.get() : nullptr,
                      issuer != nullptr ? issuer->key.get() : nullptr);
  if (!cert.ok()) return cert.status();
  return KeyAndCertificate{std::move(*key), std::move(*cert)};
}

absl::Status WriteFile(const std::filesystem::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TestCertificates> GenerateTestCertificates() {
  absl::StatusOr<KeyAndCertificate> ca =
      MakeKeyAndCertificate({.common_name = "kubesched-test-ca", .is_ca = true}, nullptr);
  if (!ca.ok()) return ca.status();
  absl::StatusOr<KeyAndCertificate> server =
      MakeKeyAndCertificate({.common_name = "localhost",
                             .subject_alt_names = "IP:127.0.0.1,DNS:localhost",
                             .extended_key_usage = "serverAuth"},
                            &*ca);
  if (!server.ok()) return server.status();
  absl::StatusOr<KeyAndCertificate> client = MakeKeyAndCertificate(
      {.common_name = "kubesched-test-client", .extended_key_usage = "clientAuth"}, &*ca);
  if (!client.ok()) return client.status();
  absl::StatusOr<KeyAndCertificate> other_ca =
      MakeKeyAndCertificate({.common_name = "kubesched-other-test-ca", .is_ca = true}, nullptr);
  if (!other_ca.ok()) return other_ca.status();

  TestCertificates out;
  std::pair<std::string*, absl::StatusOr<std::string>> pems[] = {
      {&out.ca_cert_pem, CertificateToPem(ca->cert.get())},
      {&out.server_cert_pem, CertificateToPem(server->cert.get())},
      {&out.server_key_pem, KeyToPem(server->key.get())},
      {&out.client_cert_pem, CertificateToPem(client->cert.get())},
      {&out.client_key_pem, KeyToPem(client->key.get())},
      {&out.other_ca_cert_pem, CertificateToPem(other_ca->cert.get())},
  };
  for (auto& [field, pem] : pems) {
    if (!pem.ok()) return pem.status();
    *field = std::move(*pem);
  }
  return out;
}

absl::Status WriteTestCertificates(const TestCertificates& certs, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  const std::pair<const char*, const std::string*> files[] = {
      {"ca.crt", &certs.ca_cert_pem},        {"server.crt", &certs.server_cert_pem},
      {"server.key", &certs.server_key_pem}, {"client.crt", &certs.client_cert_pem},
      {"client.key", &certs.client_key_pem}, {"other-ca.crt", &certs.other_ca_cert_pem},
  };
  for (const auto& [name, contents] : files) {
    if (absl::Status status = WriteFile(std::filesystem::path(dir) / name, *contents);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace kubesched::testing

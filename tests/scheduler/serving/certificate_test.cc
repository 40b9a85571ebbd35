#include "scheduler/serving/certificate.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/testing/test_certs.h"

namespace kubesched::serving {
namespace {

using X509Ptr = std::unique_ptr<X509, decltype(&X509_free)>;

std::vector<X509Ptr> ParseChain(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  std::vector<X509Ptr> chain;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    chain.emplace_back(cert, X509_free);
  }
  return chain;
}

std::string CommonName(X509_NAME* name) {
  char buffer[256] = {};
  X509_NAME_get_text_by_NID(name, NID_commonName, buffer, sizeof(buffer));
  return buffer;
}

std::vector<std::string> SubjectAltNames(X509* cert) {
  std::vector<std::string> names;
  auto* sans =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; sans != nullptr && i < sk_GENERAL_NAME_num(sans); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans, i);
    if (name->type == GEN_DNS) {
      names.push_back(absl::StrCat(
          "DNS:", reinterpret_cast<const char*>(ASN1_STRING_get0_data(name->d.dNSName))));
    } else if (name->type == GEN_IPADD && ASN1_STRING_length(name->d.iPAddress) == 4) {
      const unsigned char* ip = ASN1_STRING_get0_data(name->d.iPAddress);
      names.push_back(absl::StrCat("IP:", ip[0], ".", ip[1], ".", ip[2], ".", ip[3]));
    }
  }
  GENERAL_NAMES_free(sans);
  return names;
}

// Seconds from `now` to an ASN1 time (negative: before).
int64_t SecondsFrom(absl::Time now, const ASN1_TIME* when) {
  int days = 0;
  int seconds = 0;
  std::unique_ptr<ASN1_TIME, decltype(&ASN1_TIME_free)> reference(
      ASN1_TIME_set(nullptr, absl::ToTimeT(now)), ASN1_TIME_free);
  REQUIRE(ASN1_TIME_diff(&days, &seconds, reference.get(), when) == 1);
  return int64_t{days} * 86400 + seconds;
}

TEST_CASE("the self-signed certificate is kube-scheduler's: a localhost CA signing localhost",
          "[serving][certificate]") {
  const absl::Time now = absl::FromUnixSeconds(1790000000);
  SelfSignedRequest request;
  request.now = now;
  auto made = GenerateSelfSigned(request);
  REQUIRE(made.ok());
  std::vector<X509Ptr> chain = ParseChain(made->chain_pem);
  REQUIRE(chain.size() == 2);
  X509* leaf = chain[0].get();
  X509* ca = chain[1].get();
  CHECK(CommonName(X509_get_subject_name(leaf)) == "localhost@1790000000");
  CHECK(CommonName(X509_get_subject_name(ca)) == "localhost-ca@1790000000");
  CHECK(CommonName(X509_get_issuer_name(leaf)) == "localhost-ca@1790000000");
  CHECK(SubjectAltNames(leaf) == std::vector<std::string>{"DNS:localhost", "IP:127.0.0.1"});
  CHECK(X509_check_ca(ca) == 1);
  CHECK(X509_check_ca(leaf) == 0);
  CHECK(X509_check_purpose(leaf, X509_PURPOSE_SSL_SERVER, 0) == 1);
  // Signed by the CA, valid from an hour before `now` for a year.
  CHECK(X509_verify(leaf, X509_get0_pubkey(ca)) == 1);
  CHECK(SecondsFrom(now, X509_get0_notBefore(leaf)) == -3600);
  CHECK(SecondsFrom(now, X509_get0_notAfter(leaf)) == 365 * 86400 - 3600);
  CHECK(EVP_PKEY_get_bits(X509_get0_pubkey(leaf)) == 2048);
  CHECK(CheckCertificateMatchesKey(made->chain_pem, made->key_pem).ok());
}

TEST_CASE("a self-signed certificate for an IP host names it as an IP address",
          "[serving][certificate]") {
  SelfSignedRequest request;
  request.host = "10.0.0.7";
  request.ip_addresses = {};
  request.dns_names = {"kubesched.kube-system.svc"};
  auto made = GenerateSelfSigned(request);
  REQUIRE(made.ok());
  std::vector<X509Ptr> chain = ParseChain(made->chain_pem);
  REQUIRE(!chain.empty());
  CHECK(SubjectAltNames(chain[0].get()) ==
        std::vector<std::string>{"DNS:kubesched.kube-system.svc", "IP:10.0.0.7"});
}

class CertificateFiles {
 public:
  CertificateFiles() {
    dir_ = std::filesystem::temp_directory_path() / absl::StrCat("serving-certs-", getpid());
    auto certs = testing::GenerateTestCertificates();
    REQUIRE(certs.ok());
    REQUIRE(testing::WriteTestCertificates(*certs, dir_.string()).ok());
    server_cert_pem_ = certs->server_cert_pem;
  }
  ~CertificateFiles() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  const std::string& server_cert_pem() const { return server_cert_pem_; }

 private:
  std::filesystem::path dir_;
  std::string server_cert_pem_;
};

TEST_CASE("a certificate file and its key are loaded as given", "[serving][certificate]") {
  CertificateFiles files;
  auto loaded = LoadCertificateFiles(files.Path("server.crt"), files.Path("server.key"));
  REQUIRE(loaded.ok());
  CHECK(loaded->chain_pem == files.server_cert_pem());
}

TEST_CASE("unreadable, empty or mismatched certificate files are refused, naming the flag",
          "[serving][certificate]") {
  CertificateFiles files;
  std::ofstream(files.Path("garbage.pem")) << "not a certificate\n";
  struct Case {
    std::string cert;
    std::string key;
    std::string message;
  };
  const std::vector<Case> cases = {
      {files.Path("missing.crt"), files.Path("server.key"),
       absl::StrCat("--tls-cert-file ", files.Path("missing.crt"), ": ")},
      {files.Path("server.crt"), files.Path("missing.key"),
       absl::StrCat("--tls-private-key-file ", files.Path("missing.key"), ": ")},
      {files.Path("garbage.pem"), files.Path("server.key"), "no PEM certificate found"},
      {files.Path("server.crt"), files.Path("garbage.pem"), "no unencrypted PEM private key found"},
      {files.Path("server.crt"), files.Path("client.key"),
       "the private key does not match the certificate"},
  };
  for (const Case& c : cases) {
    auto loaded = LoadCertificateFiles(c.cert, c.key);
    INFO(c.cert << " " << c.key << ": " << loaded.status());
    REQUIRE_FALSE(loaded.ok());
    CHECK(absl::IsInvalidArgument(loaded.status()));
    CHECK(absl::StrContains(loaded.status().message(), c.message));
  }
}

}  // namespace
}  // namespace kubesched::serving

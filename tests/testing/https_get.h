#pragma once

// Requests to a secure port, for the tests of kubesched's HTTPS serving: a GET with an optional
// bearer token (verifying the server against a CA, or not at all), and the certificate a server
// presents.

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "scheduler/client/rest_client.h"
#include "scheduler/client/token_source.h"

namespace kubesched::testing {

// GET https://127.0.0.1:`port``path`; `token` "" sends none, `ca_pem` "" skips verification.
// The request must get an answer.
inline client::HttpResponse HttpsGet(int port, const std::string& path,
                                     const std::string& token = "",
                                     const std::string& ca_pem = "") {
  client::RestConfig config;
  config.server = absl::StrCat("https://127.0.0.1:", port);
  config.ca_pem = ca_pem;
  config.insecure_skip_tls_verify = ca_pem.empty();
  if (!token.empty()) config.token = std::make_shared<client::StaticToken>(token);
  auto rest = client::RestClient::Create(config);
  REQUIRE(rest.ok());
  client::HttpRequest request;
  request.target = path;
  request.max_retries = 0;
  auto response = (*rest)->Do(request);
  INFO(path << ": " << response.status());
  REQUIRE(response.ok());
  return *response;
}

// The PEM of the leaf certificate 127.0.0.1:`port` presents in a TLS handshake; "" on failure.
inline std::string PeerCertificatePem(int port) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        SSL_CTX_free);
  if (!ctx) return "";
  std::unique_ptr<BIO, decltype(&BIO_free_all)> bio(BIO_new_ssl_connect(ctx.get()), BIO_free_all);
  if (!bio) return "";
  const std::string address = absl::StrCat("127.0.0.1:", port);
  BIO_set_conn_hostname(bio.get(), address.c_str());
  if (BIO_do_handshake(bio.get()) != 1) return "";
  SSL* ssl = nullptr;
  BIO_get_ssl(bio.get(), &ssl);
  std::unique_ptr<X509, decltype(&X509_free)> cert(SSL_get1_peer_certificate(ssl), X509_free);
  if (!cert) return "";
  std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), BIO_free);
  if (!out || PEM_write_bio_X509(out.get(), cert.get()) != 1) return "";
  char* data = nullptr;
  const long size = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

}  // namespace kubesched::testing

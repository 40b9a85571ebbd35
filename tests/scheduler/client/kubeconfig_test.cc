#include "scheduler/client/kubeconfig.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "scheduler/client/token_source.h"
#include "scheduler/util/clock.h"

namespace kubesched::client {
namespace {

namespace fs = std::filesystem;

// A fresh temporary directory, removed on destruction.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            absl::StrCat("kubesched-kubeconfig-test-", getpid(), "-", counter++);
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string Write(const std::string& name, const std::string& contents) const {
    const fs::path file = path_ / name;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary | std::ios::trunc) << contents;
    return file.string();
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

// Environment lookups from a fixed map.
std::function<std::optional<std::string>(std::string_view)> FakeEnv(
    std::map<std::string, std::string> values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

std::string TokenOf(const RestConfig& rest) {
  REQUIRE(rest.token != nullptr);
  absl::StatusOr<std::string> token = rest.token->Token();
  INFO(token.status().ToString());
  REQUIRE(token.ok());
  return *token;
}

constexpr char kTwoContexts[] = R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod-cluster
  cluster:
    server: https://10.1.2.3:6443
    certificate-authority: certs/ca.crt
- name: dev-cluster
  cluster:
    server: https://dev.example:443
    insecure-skip-tls-verify: true
contexts:
- name: prod
  context: {cluster: prod-cluster, user: cert-user, namespace: team-a}
- name: dev
  context: {cluster: dev-cluster, user: token-user}
users:
- name: cert-user
  user:
    client-certificate-data: CLIENT_CERT_B64
    client-key-data: CLIENT_KEY_B64
- name: token-user
  user:
    token: s3cret
)";

std::string TwoContexts() {
  std::string text = kTwoContexts;
  text.replace(text.find("CLIENT_CERT_B64"), 15, absl::Base64Escape("CERT PEM"));
  text.replace(text.find("CLIENT_KEY_B64"), 14, absl::Base64Escape("KEY PEM"));
  return text;
}

TEST_CASE("Kubeconfig: current context with a relative CA file and client cert data", "[client]") {
  TempDir dir;
  dir.Write("certs/ca.crt", "CA PEM");
  const std::string path = dir.Write("config", TwoContexts());
  absl::StatusOr<ResolvedConnection> connection = LoadKubeconfig(path, "");
  INFO(connection.status().ToString());
  REQUIRE(connection.ok());
  CHECK(connection->rest.server == "https://10.1.2.3:6443");
  CHECK(connection->rest.ca_pem == "CA PEM");
  CHECK(connection->rest.client_cert_pem == "CERT PEM");
  CHECK(connection->rest.client_key_pem == "KEY PEM");
  CHECK_FALSE(connection->rest.insecure_skip_tls_verify);
  CHECK(connection->rest.token == nullptr);
  CHECK(connection->namespace_name == "team-a");
  CHECK(connection->description == absl::StrCat("kubeconfig ", path, " (context prod)"));
  CHECK(connection->warnings.empty());
}

TEST_CASE("Kubeconfig: a context override, a static token and insecure-skip-tls-verify",
          "[client]") {
  TempDir dir;
  const std::string path = dir.Write("config", TwoContexts());
  absl::StatusOr<ResolvedConnection> connection = LoadKubeconfig(path, "dev");
  REQUIRE(connection.ok());
  CHECK(connection->rest.server == "https://dev.example:443");
  CHECK(connection->rest.insecure_skip_tls_verify);
  CHECK(TokenOf(connection->rest) == "s3cret");
  CHECK(connection->namespace_name == "default");
  REQUIRE(connection->warnings.size() == 1);
  CHECK(absl::StrContains(connection->warnings[0], "insecure-skip-tls-verify"));

  absl::StatusOr<ResolvedConnection> missing = LoadKubeconfig(path, "staging");
  REQUIRE_FALSE(missing.ok());
  CHECK(absl::StrContains(missing.status().message(), "contexts: no entry named \"staging\""));
}

TEST_CASE("Kubeconfig: errors name the file and the field", "[client]") {
  TempDir dir;
  SECTION("missing client key file") {
    const std::string path = dir.Write("config", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://h:1"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users:
- name: u
  user: {client-certificate-data: Zm9v, client-key: keys/missing.key}
)");
    absl::StatusOr<ResolvedConnection> connection = LoadKubeconfig(path, "");
    REQUIRE_FALSE(connection.ok());
    CHECK(absl::StartsWith(
        connection.status().message(),
        absl::StrCat("kubeconfig ", path, ": users[0].user.client-key: file not found")));
  }
  SECTION("missing CA file") {
    const std::string path = dir.Write("config", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://h:1", certificate-authority: /nope/ca.crt}}]
contexts: [{name: c, context: {cluster: k}}]
)");
    absl::StatusOr<ResolvedConnection> connection = LoadKubeconfig(path, "");
    REQUIRE_FALSE(connection.ok());
    CHECK(absl::StrContains(connection.status().message(),
                            "clusters[0].cluster.certificate-authority: file not found"));
  }
  SECTION("bad base64") {
    const std::string path = dir.Write("config", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://h:1", certificate-authority-data: "!!!"}}]
contexts: [{name: c, context: {cluster: k}}]
)");
    absl::StatusOr<ResolvedConnection> connection = LoadKubeconfig(path, "");
    REQUIRE_FALSE(connection.ok());
    CHECK(absl::StrContains(connection.status().message(),
                            "clusters[0].cluster.certificate-authority-data: not valid base64"));
  }
  SECTION("no server") {
    const std::string path = dir.Write("config", R"(current-context: c
clusters: [{name: k, cluster: {}}]
contexts: [{name: c, context: {cluster: k}}]
)");
    absl::StatusOr<ResolvedConnection> connection = LoadKubeconfig(path, "");
    REQUIRE_FALSE(connection.ok());
    CHECK(absl::StrContains(connection.status().message(), "clusters[0].cluster.server: missing"));
  }
  SECTION("not YAML, and not there") {
    const std::string path = dir.Write("config", "clusters: [unclosed\n");
    absl::StatusOr<ResolvedConnection> connection = LoadKubeconfig(path, "");
    REQUIRE_FALSE(connection.ok());
    CHECK(absl::StrContains(connection.status().message(), path));
    absl::StatusOr<ResolvedConnection> absent = LoadKubeconfig(dir.path() + "/absent", "");
    CHECK(absent.status().code() == absl::StatusCode::kNotFound);
  }
  SECTION("a stray comma, and an endless file") {
    const std::string path = dir.Write("config", ",");
    absl::StatusOr<ResolvedConnection> connection = LoadKubeconfig(path, "");
    REQUIRE_FALSE(connection.ok());
    CHECK(
        absl::StartsWith(connection.status().message(),
                         absl::StrCat("kubeconfig ", path, ": invalid YAML: line 1, column 1: ")));
    absl::StatusOr<ResolvedConnection> endless = LoadKubeconfig("/dev/zero", "");
    REQUIRE_FALSE(endless.ok());
    CHECK(endless.status().message() ==
          "kubeconfig /dev/zero: larger than the limit of 4194304 bytes");
  }
  SECTION("no current context") {
    const std::string path = dir.Write("config", "clusters: []\n");
    CHECK(absl::StrContains(LoadKubeconfig(path, "").status().message(), "current-context"));
  }
}

TEST_CASE("Kubeconfig: tokenFile is relative to the file and re-read", "[client]") {
  TempDir dir;
  dir.Write("secrets/token", "first\n");
  const std::string path = dir.Write("config", R"(current-context: c
clusters: [{name: k, cluster: {server: "http://127.0.0.1:8080"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {tokenFile: secrets/token, token: ignored}}]
)");
  absl::StatusOr<ResolvedConnection> connection = LoadKubeconfig(path, "");
  REQUIRE(connection.ok());
  CHECK(TokenOf(connection->rest) == "first");
  dir.Write("secrets/token", "second-token");
  connection->rest.token->Invalidate();
  CHECK(TokenOf(connection->rest) == "second-token");
}

TEST_CASE("FileToken notices rotation by mtime/size at most every recheck interval", "[client]") {
  TempDir dir;
  const std::string path = dir.Write("token", "aaa");
  util::FakeClock clock(absl::FromUnixSeconds(1000));
  FileToken token(path, absl::Seconds(10), &clock);
  CHECK(*token.Token() == "aaa");
  dir.Write("token", "bbbbbb");
  CHECK(*token.Token() == "aaa");  // within the recheck interval: served from the cache
  clock.Advance(absl::Seconds(11));
  CHECK(*token.Token() == "bbbbbb");
  // A vanished file keeps the last good token (rotation writes a new file and renames it).
  std::filesystem::remove(path);
  clock.Advance(absl::Seconds(11));
  CHECK(*token.Token() == "bbbbbb");

  FileToken absent(dir.path() + "/absent");
  CHECK_FALSE(absent.Token().ok());
}

std::string WriteExecPlugin(const TempDir& dir, const std::string& name, const std::string& body) {
  const std::string path = dir.Write(name, "#!/bin/sh\n" + body);
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST_CASE("Kubeconfig: exec credential plugin", "[client]") {
  TempDir dir;
  // Proves the args, the env list and KUBERNETES_EXEC_INFO all reach the plugin.
  WriteExecPlugin(dir, "bin/get-token", R"(
case "$KUBERNETES_EXEC_INFO" in
  *'"interactive":false'*) info=info ;;
  *) info=noinfo ;;
esac
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s-%s-%s"}}' "$1" "$PLUGIN_REGION" "$info"
)");
  const std::string path = dir.Write("config", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://h:1"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/get-token
      args: [cluster-7]
      env:
      - {name: PLUGIN_REGION, value: eu-west}
      installHint: install get-token
)");
  absl::StatusOr<ResolvedConnection> connection = LoadKubeconfig(path, "");
  INFO(connection.status().ToString());
  REQUIRE(connection.ok());
  CHECK(TokenOf(connection->rest) == "cluster-7-eu-west-info");

  auto* exec = dynamic_cast<ExecToken*>(connection->rest.token.get());
  REQUIRE(exec != nullptr);
  CHECK(TokenOf(connection->rest) == "cluster-7-eu-west-info");
  CHECK(exec->runs() == 1);  // no expiry: cached
  exec->Invalidate();
  CHECK(TokenOf(connection->rest) == "cluster-7-eu-west-info");
  CHECK(exec->runs() == 2);
}

TEST_CASE("ExecToken refreshes before the credential expires and reports plugin failures",
          "[client]") {
  TempDir dir;
  const std::string plugin = WriteExecPlugin(dir, "plugin", R"(
printf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t","expirationTimestamp":"2030-01-01T00:00:00Z"}}'
)");
  util::FakeClock clock(absl::FromUnixSeconds(1893455000));  // 2029-12-31T23:43:20Z
  ExecToken token({.api_version = "client.authentication.k8s.io/v1beta1", .command = plugin},
                  &clock, absl::Seconds(30));
  CHECK(*token.Token() == "t");
  CHECK(*token.Token() == "t");
  CHECK(token.runs() == 1);
  clock.Set(absl::FromUnixSeconds(1893456000 - 20));  // inside the 30 s refresh margin
  CHECK(*token.Token() == "t");
  CHECK(token.runs() == 2);

  ExecToken wrong_version({.api_version = "client.authentication.k8s.io/v1", .command = plugin});
  CHECK(absl::StrContains(wrong_version.Token().status().message(), "apiVersion"));

  const std::string failing = WriteExecPlugin(dir, "failing", "exit 3\n");
  ExecToken fails({.api_version = "client.authentication.k8s.io/v1", .command = failing});
  CHECK(absl::StrContains(fails.Token().status().message(), "exit status 3"));

  ExecToken missing({.api_version = "client.authentication.k8s.io/v1",
                     .command = "kubesched-no-such-plugin",
                     .install_hint = "brew install it"});
  absl::Status status = missing.Token().status();
  CHECK(absl::StrContains(status.message(), "cannot run"));
  CHECK(absl::StrContains(status.message(), "brew install it"));
}

TEST_CASE("ParseExecCredential validates its input", "[client]") {
  const std::string v1 = "client.authentication.k8s.io/v1";
  CHECK_FALSE(ParseExecCredential("not json", v1).ok());
  CHECK_FALSE(ParseExecCredential(R"({"apiVersion":"client.authentication.k8s.io/v1"})", v1).ok());
  CHECK(absl::StrContains(
      ParseExecCredential(
          R"({"apiVersion":"client.authentication.k8s.io/v1","status":{"clientCertificateData":"x"}})",
          v1)
          .status()
          .message(),
      "not supported"));
  absl::StatusOr<ExecCredential> parsed = ParseExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","status":{"token":"abc","expirationTimestamp":"2030-01-01T00:00:00Z"}})",
      v1);
  REQUIRE(parsed.ok());
  CHECK(parsed->token == "abc");
  CHECK(parsed->expiration == absl::FromUnixSeconds(1893456000));
}

TEST_CASE("Kubeconfig: unsupported exec versions are rejected", "[client]") {
  TempDir dir;
  const std::string path = dir.Write("config", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://h:1"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}}}]
)");
  absl::StatusOr<ResolvedConnection> connection = LoadKubeconfig(path, "");
  REQUIRE_FALSE(connection.ok());
  CHECK(absl::StrContains(connection.status().message(), "users[0].user.exec.apiVersion"));
}

// ---- resolution order ----

struct Fixture {
  TempDir dir;
  std::string flag = Config("flag");
  std::string from_config = Config("config-file");
  std::string from_env = Config("env");
  std::string home_config = Config("home/.kube/config", "home");
  std::string service_account = dir.path() + "/sa";

  Fixture() {
    dir.Write("sa/token", "sa-token\n");
    dir.Write("sa/ca.crt", "SA CA");
    dir.Write("sa/namespace", "kube-system\n");
  }

  std::string Config(const std::string& name, std::string host = "") {
    if (host.empty()) host = name;
    return dir.Write(name,
                     absl::StrCat("current-context: c\nclusters: [{name: k, cluster: {server: "
                                  "\"https://",
                                  host,
                                  ":443\"}}]\ncontexts: [{name: c, context: {cluster: "
                                  "k}}]\n"));
  }

  ConnectionOptions Options(std::map<std::string, std::string> env) {
    ConnectionOptions options;
    options.getenv = FakeEnv(std::move(env));
    options.service_account_dir = service_account;
    options.home = dir.path() + "/home";
    options.qps = 7;
    options.burst = 9;
    options.content_type = "application/vnd.kubernetes.protobuf";
    return options;
  }
};

std::string ServerOf(const absl::StatusOr<ResolvedConnection>& connection) {
  INFO(connection.status().ToString());
  REQUIRE(connection.ok());
  return connection->rest.server;
}

TEST_CASE("ResolveConnection: flag, config, $KUBECONFIG, in-cluster, then ~/.kube/config",
          "[client]") {
  Fixture f;
  const std::map<std::string, std::string> in_cluster_env = {
      {"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}};
  std::map<std::string, std::string> all_env = in_cluster_env;
  all_env["KUBECONFIG"] = f.dir.path() + "/absent:" + f.from_env;

  ConnectionOptions options = f.Options(all_env);
  options.kubeconfig_path = f.flag;
  options.config_kubeconfig = f.from_config;
  absl::StatusOr<ResolvedConnection> resolved = ResolveConnection(options);
  CHECK(ServerOf(resolved) == "https://flag:443");
  CHECK(resolved->rest.qps == 7);
  CHECK(resolved->rest.burst == 9);
  CHECK(resolved->rest.content_type == "application/vnd.kubernetes.protobuf");

  options.kubeconfig_path.clear();
  CHECK(ServerOf(ResolveConnection(options)) == "https://config-file:443");

  options.config_kubeconfig.clear();
  CHECK(ServerOf(ResolveConnection(options)) == "https://env:443");  // first existing entry

  options = f.Options(in_cluster_env);
  resolved = ResolveConnection(options);
  CHECK(ServerOf(resolved) == "https://10.96.0.1:443");
  CHECK(resolved->description == "in-cluster");
  CHECK(resolved->namespace_name == "kube-system");
  CHECK(resolved->rest.ca_pem == "SA CA");
  CHECK(TokenOf(resolved->rest) == "sa-token");
  CHECK(dynamic_cast<FileToken*>(resolved->rest.token.get()) != nullptr);  // rotates

  options =
      f.Options({{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "6443"}});
  CHECK(ServerOf(ResolveConnection(options)) == "https://[fd00::1]:6443");

  options = f.Options({});
  CHECK(ServerOf(ResolveConnection(options)) == "https://home:443");
}

TEST_CASE("ResolveConnection: explicit files must exist, nothing found lists what was tried",
          "[client]") {
  Fixture f;
  ConnectionOptions options = f.Options({});
  options.kubeconfig_path = f.dir.path() + "/typo";
  absl::StatusOr<ResolvedConnection> resolved = ResolveConnection(options);
  REQUIRE_FALSE(resolved.ok());
  CHECK(absl::StrContains(resolved.status().message(), "--kubeconfig"));
  CHECK(absl::StrContains(resolved.status().message(), "typo"));

  options = f.Options({{"KUBECONFIG", f.dir.path() + "/nope"}});
  options.home = f.dir.path() + "/nobody";
  resolved = ResolveConnection(options);
  REQUIRE_FALSE(resolved.ok());
  CHECK(resolved.status().code() == absl::StatusCode::kNotFound);
  CHECK(absl::StrContains(resolved.status().message(), "$KUBECONFIG"));
  CHECK(absl::StrContains(resolved.status().message(), "in-cluster"));
  CHECK(absl::StrContains(resolved.status().message(), "nobody/.kube/config"));

  // In a pod without a mounted token, say so rather than falling through.
  options =
      f.Options({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}});
  options.service_account_dir = f.dir.path() + "/no-sa";
  resolved = ResolveConnection(options);
  REQUIRE_FALSE(resolved.ok());
  CHECK(absl::StrContains(resolved.status().message(), "service-account token"));
}

TEST_CASE("ResolveConnection: --master replaces a kubeconfig's server, or stands alone",
          "[client]") {
  Fixture f;
  const std::map<std::string, std::string> in_cluster_env = {
      {"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}};
  ConnectionOptions options = f.Options(in_cluster_env);
  options.kubeconfig_path = f.flag;
  options.master = "https://lb.example:6443";
  absl::StatusOr<ResolvedConnection> resolved = ResolveConnection(options);
  CHECK(ServerOf(resolved) == "https://lb.example:6443");
  CHECK(absl::StrContains(resolved->description, "server from --master"));

  options.kubeconfig_path.clear();
  options.config_kubeconfig = f.from_config;
  CHECK(ServerOf(ResolveConnection(options)) == "https://lb.example:6443");

  // No kubeconfig given: the URL alone, without the in-cluster token (as kube-scheduler).
  options.config_kubeconfig.clear();
  options.master = "http://127.0.0.1:8080";
  resolved = ResolveConnection(options);
  CHECK(ServerOf(resolved) == "http://127.0.0.1:8080");
  CHECK(resolved->rest.token == nullptr);
  CHECK(resolved->rest.qps == 7);

  options.master = "ftp://nowhere";
  resolved = ResolveConnection(options);
  REQUIRE_FALSE(resolved.ok());
  CHECK(absl::IsInvalidArgument(resolved.status()));
  CHECK(absl::StartsWith(resolved.status().message(), "--master: "));
}

}  // namespace
}  // namespace kubesched::client

#include "tests/testapi/server.h"

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace kubesched::testapi {

const char kServerUsage[] = R"(kubesched-testapi: an in-memory Kubernetes API server for tests.

  --listen HOST:PORT            address to serve on (default 127.0.0.1:0, a free port); the
                                first stdout line is "listening on http[s]://HOST:PORT"
  --port-file PATH              also write that URL to PATH
  --tls-cert-file PATH          serve HTTPS with this certificate (PEM)...
  --tls-key-file PATH           ...and key
  --client-ca-file PATH         accept client certificates signed by this CA as authenticated
  --token TOKEN                 require "Authorization: Bearer TOKEN" (repeatable)
  --token-file PATH             tokens, one per line (a CSV line "token,user,uid" is accepted)
  --token-user TOKEN:USER[:GROUP,...]
                                a token (as --token) that TokenReviews authenticate as USER
  --allow-path SUBJECT:PATH     SubjectAccessReviews allow the user or group SUBJECT to get
                                the non-resource PATH ("*": any, "/x/*": a prefix; repeatable)
  --state-file PATH             keep objects across restarts (an append-only journal, flushed
                                on every write, rewritten at start and on SIGTERM/SIGINT)
  --history N                   watch history window in events (default 1000)
  --bookmark-interval DURATION  BOOKMARK period for allowWatchBookmarks watches (default 1s)
  --watch-timeout DURATION      watch length when timeoutSeconds is absent (default 30m)
  --expired-watch-response status|event
                                too-old watch resourceVersion: HTTP 410 Status (default) or a
                                200 response with one ERROR event (what the real API's watch
                                cache sends)
  --load FILE                   create the objects of a YAML/JSON file at start (repeatable)
  --runtime-config GROUP/VERSION=false
                                do not serve that group version (404, left out of discovery),
                                as an API server without it (repeatable): resource.k8s.io/v1=false
                                is a cluster before Kubernetes 1.34
  --threads N                   server threads (default 2)
  --faults JSON|@FILE           initial fault configuration (format: POST /testapi/faults)
  --fault-watch-close-after N   end every watch after N events
  --fault-watch-gone K[:event]  answer the next K watches with 410 Expired
  --fault-error VERB:RESOURCE:CODE[:COUNT[:PROBABILITY]]
  --fault-latency VERB:RESOURCE:MS
  --fault-drop VERB:RESOURCE[:COUNT[:PROBABILITY]]
                                ("*" for any verb or resource)
  --volume-controller true|false
                                play the PV controller and a provisioner (default false; also
                                POST /testapi/volume-controller {"enabled": true}): a PV whose
                                claimRef names a claim is bound to it, a claim annotated
                                volume.kubernetes.io/selected-node gets a PV on that node when
                                its class has a provisioner, free PVs become Available
)";

namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

absl::Status BadFlag(const std::string& flag, const std::string& value) {
  return absl::InvalidArgumentError(absl::StrCat("invalid value for ", flag, ": \"", value, "\""));
}

// VERB:RESOURCE[:a[:b[:c]]] into a rule; `numbers` names the optional numeric fields in order.
absl::StatusOr<FaultRule> ParseRuleFlag(const std::string& flag, const std::string& value,
                                        const std::vector<std::string>& numbers) {
  std::vector<std::string> parts = absl::StrSplit(value, ':');
  if (parts.size() < 2 || parts.size() > 2 + numbers.size()) return BadFlag(flag, value);
  FaultRule rule;
  rule.verb = parts[0] == "*" ? "" : parts[0];
  rule.resource = parts[1] == "*" ? "" : parts[1];
  for (size_t i = 2; i < parts.size(); ++i) {
    const std::string& field = numbers[i - 2];
    double number = 0;
    if (!absl::SimpleAtod(parts[i], &number)) return BadFlag(flag, value);
    if (field == "code") rule.code = static_cast<int>(number);
    if (field == "count") rule.count = static_cast<int64_t>(number);
    if (field == "probability") rule.probability = number;
    if (field == "ms") rule.latency = absl::Milliseconds(number);
  }
  return rule;
}

// The fault injection flags (--faults, --fault-*).
absl::Status ApplyFaultFlag(const std::string& flag, const std::string& value,
                            FaultConfig* faults) {
  if (flag == "--faults") {
    std::string json = value;
    if (absl::StartsWith(value, "@")) {
      auto text = ReadFile(value.substr(1));
      if (!text.ok()) return text.status();
      json = *text;
    }
    auto config = ParseFaultConfig(json);
    if (!config.ok()) return config.status();
    faults->watch_close_after_events = config->watch_close_after_events;
    faults->watch_gone_count = config->watch_gone_count;
    faults->watch_gone_as_event = config->watch_gone_as_event;
    faults->errors.insert(faults->errors.end(), config->errors.begin(), config->errors.end());
    faults->latency.insert(faults->latency.end(), config->latency.begin(), config->latency.end());
    faults->drops.insert(faults->drops.end(), config->drops.begin(), config->drops.end());
  } else if (flag == "--fault-watch-close-after") {
    if (!absl::SimpleAtoi(value, &faults->watch_close_after_events)) {
      return BadFlag(flag, value);
    }
  } else if (flag == "--fault-watch-gone") {
    std::vector<std::string> parts = absl::StrSplit(value, ':');
    if (!absl::SimpleAtoi(parts[0], &faults->watch_gone_count) || parts.size() > 2 ||
        (parts.size() == 2 && parts[1] != "event" && parts[1] != "http")) {
      return BadFlag(flag, value);
    }
    faults->watch_gone_as_event = parts.size() == 2 && parts[1] == "event";
  } else if (flag == "--fault-error") {
    auto rule = ParseRuleFlag(flag, value, {"code", "count", "probability"});
    if (!rule.ok()) return rule.status();
    if (rule->code == 0) return BadFlag(flag, value);
    faults->errors.push_back(*rule);
  } else if (flag == "--fault-latency") {
    auto rule = ParseRuleFlag(flag, value, {"ms"});
    if (!rule.ok()) return rule.status();
    faults->latency.push_back(*rule);
  } else if (flag == "--fault-drop") {
    auto rule = ParseRuleFlag(flag, value, {"count", "probability"});
    if (!rule.ok()) return rule.status();
    faults->drops.push_back(*rule);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown flag ", flag, " (see --help)"));
  }
  return absl::OkStatus();
}

absl::Status ApplyFlag(const std::string& flag, const std::string& value, ServerOptions* options) {
  if (absl::StartsWith(flag, "--fault")) return ApplyFaultFlag(flag, value, &options->faults);
  if (IsReviewFlag(flag))
    return ApplyReviewFlag(flag, value, &options->api.reviews, &options->api.tokens);
  if (flag == "--listen") {
    size_t colon = value.rfind(':');
    if (colon == std::string::npos ||
        !absl::SimpleAtoi(value.substr(colon + 1), &options->http.port)) {
      return BadFlag(flag, value);
    }
    options->http.listen_address = value.substr(0, colon);
  } else if (flag == "--port-file") {
    options->port_file = value;
  } else if (flag == "--tls-cert-file") {
    options->http.tls_cert_file = value;
  } else if (flag == "--tls-key-file") {
    options->http.tls_key_file = value;
  } else if (flag == "--client-ca-file") {
    options->http.client_ca_file = value;
    options->api.client_certificates_authenticate = true;
  } else if (flag == "--token") {
    options->api.tokens.push_back(value);
  } else if (flag == "--token-file") {
    auto text = ReadFile(value);
    if (!text.ok()) return text.status();
    for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipWhitespace())) {
      std::string token(absl::StripAsciiWhitespace(line.substr(0, line.find(','))));
      if (!token.empty()) options->api.tokens.push_back(token);
    }
  } else if (flag == "--state-file") {
    options->store.journal_path = value;
  } else if (flag == "--history") {
    if (!absl::SimpleAtoi(value, &options->store.history_size) ||
        options->store.history_size == 0) {
      return BadFlag(flag, value);
    }
  } else if (flag == "--bookmark-interval") {
    if (!absl::ParseDuration(value, &options->api.bookmark_interval) ||
        options->api.bookmark_interval <= absl::ZeroDuration()) {
      return BadFlag(flag, value);
    }
  } else if (flag == "--watch-timeout") {
    if (!absl::ParseDuration(value, &options->api.default_watch_timeout))
      return BadFlag(flag, value);
  } else if (flag == "--expired-watch-response") {
    if (value != "status" && value != "event") return BadFlag(flag, value);
    options->api.expired_watch_as_event = value == "event";
  } else if (flag == "--runtime-config") {
    // <group>/<version>=false, as the real API server takes it; only turning off is supported.
    const size_t equals = value.rfind('=');
    if (equals == std::string::npos || value.substr(equals + 1) != "false" ||
        value.find('/') == std::string::npos) {
      return BadFlag(flag, value);
    }
    options->api.disabled_api_versions.push_back(value.substr(0, equals));
  } else if (flag == "--load") {
    options->load_files.push_back(value);
  } else if (flag == "--threads") {
    if (!absl::SimpleAtoi(value, &options->http.threads) || options->http.threads < 1) {
      return BadFlag(flag, value);
    }
  } else if (flag == "--volume-controller") {
    if (value != "true" && value != "false") return BadFlag(flag, value);
    options->volume_controller = value == "true";
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown flag ", flag, " (see --help)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ServerOptions> ParseServerFlags(const std::vector<std::string>& args, bool* help) {
  ServerOptions options;
  *help = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    if (flag == "--help" || flag == "-h") {
      *help = true;
      return options;
    }
    std::string value;
    if (size_t eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(absl::StrCat(flag, " needs a value"));
    }
    absl::Status status = ApplyFlag(flag, value, &options);
    if (!status.ok()) return status;
  }
  if (options.http.tls_cert_file.empty() != options.http.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert-file and --tls-key-file go together");
  }
  if (!options.http.client_ca_file.empty() && options.http.tls_cert_file.empty()) {
    return absl::InvalidArgumentError("--client-ca-file needs --tls-cert-file");
  }
  return options;
}

absl::StatusOr<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  std::unique_ptr<Server> server(new Server());
  server->store_ = std::make_unique<Store>(options.store);
  absl::Status status = server->store_->Open();
  if (!status.ok()) return status;
  server->faults_ = std::make_unique<Faults>();
  server->faults_->Set(options.faults);
  server->volumes_ = std::make_unique<VolumeController>(server->store_.get());
  server->api_ =
      std::make_unique<ApiServer>(server->store_.get(), server->faults_.get(), options.api);
  server->api_->set_volume_controller(server->volumes_.get());
  status = server->api_->Bootstrap();
  if (!status.ok()) return status;
  for (const std::string& path : options.load_files) {
    auto text = ReadFile(path);
    if (!text.ok()) return text.status();
    status = server->api_->LoadObjects(*text, path);
    if (!status.ok()) return status;
  }
  server->volumes_->SetEnabled(options.volume_controller);
  ApiServer* api = server->api_.get();
  auto http = HttpServer::Start(options.http,
                                [api](const HttpRequest& request) { return api->Handle(request); });
  if (!http.ok()) return http.status();
  server->http_ = *std::move(http);
  if (!options.port_file.empty()) {
    std::string temp = options.port_file + ".tmp";
    std::ofstream(temp) << server->url() << "\n";
    if (std::rename(temp.c_str(), options.port_file.c_str()) != 0) {
      return absl::UnavailableError(absl::StrCat("cannot write ", options.port_file));
    }
  }
  return server;
}

Server::~Server() { (void)Stop(); }

absl::Status Server::Stop() {
  if (stopped_) return absl::OkStatus();
  stopped_ = true;
  if (http_ != nullptr) http_->Stop();
  if (volumes_ != nullptr) volumes_->SetEnabled(false);
  return store_ != nullptr ? store_->Checkpoint() : absl::OkStatus();
}

}  // namespace kubesched::testapi

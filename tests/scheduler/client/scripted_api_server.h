#pragma once

// A scripted list/watch API server for the reflector and informer tests, on top of
// testing::FakeTransport: per collection path, queues of list responses and watch streams. A path
// whose list queue is empty answers an empty list; one whose watch queue is empty holds the watch
// open until the reflector stops, as a quiet server would.

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "scheduler/client/http_transport.h"
#include "tests/testing/fake_transport.h"

namespace kubesched::client::test {

inline std::string PodJson(const std::string& name, const std::string& resource_version,
                           const std::string& cpu = "100m") {
  return absl::StrCat(R"({"metadata":{"name":")", name, R"(","namespace":"default","uid":"uid-)",
                      name, R"(","resourceVersion":")", resource_version,
                      R"("},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":")",
                      cpu, R"("}}}]},"status":{"phase":"Pending"}})");
}

// A pod the decoder rejects (its cpu request is no quantity), but whose metadata is readable.
inline std::string BadPodJson(const std::string& name, const std::string& resource_version) {
  return PodJson(name, resource_version, "lots");
}

// A cluster-scoped object with only metadata (Node, Namespace).
inline std::string ClusterObjectJson(const std::string& name, const std::string& resource_version) {
  return absl::StrCat(R"({"metadata":{"name":")", name, R"(","resourceVersion":")",
                      resource_version, R"("}})");
}

inline std::string PriorityClassJson(const std::string& name, const std::string& resource_version) {
  return absl::StrCat(R"({"metadata":{"name":")", name, R"(","resourceVersion":")",
                      resource_version, R"("},"value":1000})");
}

inline std::string NamespacedObjectJson(const std::string& name,
                                        const std::string& resource_version) {
  return absl::StrCat(R"({"metadata":{"name":")", name,
                      R"(","namespace":"kube-system","resourceVersion":")", resource_version,
                      R"("}})");
}

inline std::string ListBody(const std::string& resource_version,
                            const std::vector<std::string>& items,
                            const std::string& continue_token = "") {
  return absl::StrCat(R"({"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":")",
                      resource_version, R"(","continue":")", continue_token, R"("},"items":[)",
                      absl::StrJoin(items, ","), "]}");
}

inline std::string WatchLine(const std::string& type, const std::string& object) {
  return absl::StrCat(R"({"type":")", type, R"(","object":)", object, "}");
}

inline std::string BookmarkLine(const std::string& resource_version) {
  return WatchLine("BOOKMARK", absl::StrCat(R"({"kind":"Pod","apiVersion":"v1","metadata":{)",
                                            R"("resourceVersion":")", resource_version, R"("}})"));
}

inline std::string StatusJson(int code, const std::string& reason, const std::string& message) {
  return absl::StrCat(R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":")",
                      message, R"(","reason":")", reason, R"(","code":)", code, "}");
}

inline client::HttpResponse Ok(std::string body) {
  return client::HttpResponse{200, std::move(body)};
}

inline client::HttpResponse Gone() {
  return client::HttpResponse{410,
                              StatusJson(410, "Expired", "too old resource version: 5 (1234)")};
}

struct WatchScript {
  std::vector<std::string> lines;
  // What Watch returns after the lines: by default the server's normal end of the stream.
  absl::StatusOr<client::HttpResponse> result = client::HttpResponse{200, ""};
  std::function<void()> on_start = nullptr;  // run when the watch request arrives
};

class ScriptedApiServer {
 public:
  using ListHandler = std::function<absl::StatusOr<client::HttpResponse>()>;

  ScriptedApiServer() {
    transport_.OnDo([this](const client::HttpRequest& request) { return ServeList(request); });
    transport_.OnWatch([this](const client::HttpRequest& request,
                              const testing::FakeTransport::LineSink& on_line,
                              std::stop_token stop) { return ServeWatch(request, on_line, stop); });
  }

  client::HttpTransport* transport() { return &transport_; }

  void QueueList(const std::string& path, absl::StatusOr<client::HttpResponse> response) {
    QueueListHandler(path, [response] { return response; });
  }
  void QueueListHandler(const std::string& path, ListHandler handler) {
    std::lock_guard<std::mutex> lock(mu_);
    lists_[path].push_back(std::move(handler));
  }
  void QueueWatch(const std::string& path, WatchScript script) {
    std::lock_guard<std::mutex> lock(mu_);
    watches_[path].push_back(std::move(script));
  }

  // Targets of the list (or watch) requests to `path`, in order.
  std::vector<std::string> ListTargets(std::string_view path) const {
    return Targets(path, /*watch=*/false);
  }
  std::vector<std::string> WatchTargets(std::string_view path) const {
    return Targets(path, /*watch=*/true);
  }

 private:
  static std::string_view PathOf(std::string_view target) {
    return target.substr(0, target.find('?'));
  }

  std::vector<std::string> Targets(std::string_view path, bool watch) const {
    std::vector<std::string> targets;
    for (const client::HttpRequest& request : transport_.requests()) {
      const bool is_watch = request.target.find("watch=true") != std::string::npos;
      if (PathOf(request.target) == path && is_watch == watch) targets.push_back(request.target);
    }
    return targets;
  }

  absl::StatusOr<client::HttpResponse> ServeList(const client::HttpRequest& request) {
    ListHandler handler;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& queue = lists_[std::string(PathOf(request.target))];
      if (!queue.empty()) {
        handler = std::move(queue.front());
        queue.pop_front();
      }
    }
    if (!handler) return Ok(ListBody("1", {}));
    return handler();
  }

  absl::StatusOr<client::HttpResponse> ServeWatch(const client::HttpRequest& request,
                                                  const testing::FakeTransport::LineSink& on_line,
                                                  std::stop_token stop) {
    WatchScript script;
    bool scripted = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& queue = watches_[std::string(PathOf(request.target))];
      if (!queue.empty()) {
        script = std::move(queue.front());
        queue.pop_front();
        scripted = true;
      }
    }
    if (!scripted) {
      std::mutex mu;
      std::condition_variable_any never_notified;
      std::unique_lock<std::mutex> lock(mu);
      never_notified.wait(lock, stop, [] { return false; });
      return Ok("");
    }
    if (script.on_start) script.on_start();
    for (const std::string& line : script.lines) {
      if (stop.stop_requested()) return Ok("");  // as a real transport: no lines after stop
      on_line(line);
    }
    return script.result;
  }

  testing::FakeTransport transport_;
  mutable std::mutex mu_;
  std::map<std::string, std::deque<ListHandler>> lists_;
  std::map<std::string, std::deque<WatchScript>> watches_;
};

}  // namespace kubesched::client::test

// The log: levelled lines (util::LogV writes only up to the configured verbosity), and the JSON
// format: kube-scheduler's keys, the calls' key/values, valid JSON whatever the text.

#include "scheduler/util/log.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "rapidjson/document.h"

namespace kubesched::client {
namespace {

TEST_CASE("util::LogV writes a line only when the verbosity reaches its level", "[client][log]") {
  std::vector<std::string> lines;
  util::SetLogSinkForTesting([&lines](std::string_view level, std::string_view message) {
    lines.push_back(std::string(level) + " " + std::string(message));
  });
  const int before = util::Verbosity();
  util::SetVerbosity(0);
  util::LogV(1, "preemption detail");
  util::LogInfo("always");
  util::SetVerbosity(2);
  util::LogV(1, "level one");
  util::LogV(2, "level two");
  util::LogV(3, "level three");
  util::SetVerbosity(before);
  util::SetLogSinkForTesting({});
  CHECK(lines == std::vector<std::string>{"I always", "I level one", "I level two"});
}

}  // namespace
}  // namespace kubesched::client

namespace kubesched::util {
namespace {

// Every line logged while `body` runs, in the JSON format.
std::vector<std::string> JsonLines(const std::function<void()>& body) {
  std::vector<std::string> lines;
  SetLogLineSinkForTesting([&lines](std::string_view line) { lines.emplace_back(line); });
  SetLogFormat(LogFormat::kJson);
  body();
  SetLogFormat(LogFormat::kText);
  SetLogLineSinkForTesting({});
  return lines;
}

rapidjson::Document Parse(const std::string& line) {
  INFO(line);
  REQUIRE(!line.empty());
  CHECK(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);  // one line, whatever the message holds
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(line.data(), line.size());
  REQUIRE_FALSE(doc.HasParseError());
  REQUIRE(doc.IsObject());
  return doc;
}

std::string Str(const rapidjson::Value& value) {
  REQUIRE(value.IsString());
  return std::string(value.GetString(), value.GetStringLength());
}

TEST_CASE("JSON log lines have kube-scheduler's keys and the call's key/values", "[log]") {
  const int before = Verbosity();
  SetVerbosity(2);
  const std::vector<std::string> lines = JsonLines([] {
    LogInfo("started");
    LogV(2, "pod default/p bound to node n1",
         {KObjFromKey("pod", "default/p"), KV("node", "n1"), KV("attempts", 3)});
    LogWarning(absl::string_view("lease lost"), {KObj("lease", "kube-system", "kubesched")});
    LogError("stopping on an error", "cannot connect");
    LogV(3, "too detailed");
  });
  SetVerbosity(before);
  REQUIRE(lines.size() == 4);

  const rapidjson::Document info = Parse(lines[0]);
  CHECK(info["ts"].IsDouble());
  CHECK(std::abs(info["ts"].GetDouble() - absl::ToUnixMicros(absl::Now()) / 1e6) < 60);
  CHECK_THAT(Str(info["caller"]), Catch::StartsWith("util/log_test.cc:"));
  CHECK(Str(info["msg"]) == "started");
  CHECK(info["v"].GetInt() == 0);
  CHECK(Str(info["level"]) == "info");
  CHECK_FALSE(info.HasMember("err"));

  const rapidjson::Document bound = Parse(lines[1]);
  CHECK(bound["v"].GetInt() == 2);
  CHECK(Str(bound["pod"]["name"]) == "p");
  CHECK(Str(bound["pod"]["namespace"]) == "default");
  CHECK(Str(bound["node"]) == "n1");
  CHECK(bound["attempts"].GetInt64() == 3);

  const rapidjson::Document warning = Parse(lines[2]);
  CHECK(Str(warning["level"]) == "warning");
  CHECK(Str(warning["lease"]["namespace"]) == "kube-system");

  const rapidjson::Document error = Parse(lines[3]);
  CHECK(Str(error["msg"]) == "stopping on an error");
  CHECK(Str(error["err"]) == "cannot connect");
  CHECK(Str(error["level"]) == "error");
  CHECK_FALSE(error.HasMember("v"));  // as kube-scheduler's error lines
}

TEST_CASE("JSON log lines escape control characters and replace bytes that are not UTF-8",
          "[log]") {
  const std::string nasty = std::string("a\"b\\c\nd\te\x01 f\xff g\xc3") + "\xe2\x82\xac";
  const std::vector<std::string> lines = JsonLines([&] {
    LogInfo(nasty, {KV(nasty, nasty), KObj("pod", "ns\x80", "p\n")});
  });
  REQUIRE(lines.size() == 1);
  const rapidjson::Document doc = Parse(lines[0]);
  const std::string expected = "a\"b\\c\nd\te\x01 f\xEF\xBF\xBD g\xEF\xBF\xBD\xe2\x82\xac";
  CHECK(Str(doc["msg"]) == expected);
  CHECK(Str(doc[expected.c_str()]) == expected);
  CHECK(Str(doc["pod"]["namespace"]) == "ns\xEF\xBF\xBD");
  CHECK(Str(doc["pod"]["name"]) == "p\n");
}

TEST_CASE("the text format is unchanged by key/values", "[log]") {
  std::vector<std::string> lines;
  SetLogLineSinkForTesting([&lines](std::string_view line) { lines.emplace_back(line); });
  LogInfo("pod default/p bound", {KObjFromKey("pod", "default/p")});
  LogError("stopping on an error", "boom");
  SetLogLineSinkForTesting({});
  REQUIRE(lines.size() == 2);
  CHECK_THAT(lines[0],
             Catch::Matches(R"(I \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z pod default/p bound\n)"));
  CHECK_THAT(lines[1], Catch::EndsWith("Z stopping on an error: boom\n"));
  CHECK(lines[1].rfind("E ", 0) == 0);
}

TEST_CASE("an ErrorLogStream turns each line into one JSON error line", "[log]") {
  const std::vector<std::string> lines = JsonLines([] {
    ErrorLogStream stream("stopping on an error");
    stream << "error: first\nsecond";
    stream.flush();
    stream << "error: third";
  });
  REQUIRE(lines.size() == 3);
  CHECK(Str(Parse(lines[0])["err"]) == "first");
  CHECK(Str(Parse(lines[1])["err"]) == "second");
  CHECK(Str(Parse(lines[2])["err"]) == "third");
  CHECK(Str(Parse(lines[2])["msg"]) == "stopping on an error");
}

TEST_CASE("a V line whose level is off formats nothing", "[log]") {
  const int before = Verbosity();
  SetVerbosity(1);
  CHECK(V(1));
  CHECK_FALSE(V(2));
  SetVerbosity(before);
}

}  // namespace
}  // namespace kubesched::util

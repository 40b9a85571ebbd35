#include "scheduler/util/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/util/utf8.h"

namespace kubesched::util {
namespace {

std::mutex& LogMutex() {
  static std::mutex mu;
  return mu;
}

// Guarded by LogMutex().
LogSink& Sink() {
  static LogSink* sink = new LogSink();
  return *sink;
}
LogLineSink& LineSink() {
  static LogLineSink* sink = new LogLineSink();
  return *sink;
}

std::atomic<LogFormat>& Format() {
  static std::atomic<LogFormat> format{LogFormat::kText};
  return format;
}

enum class Severity { kInfo, kWarning, kError };

std::string_view Letter(Severity severity) {
  switch (severity) {
    case Severity::kWarning:
      return "W";
    case Severity::kError:
      return "E";
    case Severity::kInfo:
      break;
  }
  return "I";
}

std::string_view LevelName(Severity severity) {
  switch (severity) {
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
    case Severity::kInfo:
      break;
  }
  return "info";
}

// What one call logs.
struct Record {
  Severity severity = Severity::kInfo;
  int verbosity = 0;
  std::string_view message{};
  std::string_view error{};  // kError only
  LogFields fields{};
  SourceLocation where{};
};

// "run/api_reporter.cc:31": the file's folder and name, as kube-scheduler's "caller" (the build
// directory before them says nothing to whoever reads the log).
std::string Caller(const SourceLocation& where) {
  std::string_view file = where.file_name();
  size_t cut = file.rfind('/');
  if (cut != std::string_view::npos && cut > 0) cut = file.rfind('/', cut - 1);
  if (cut != std::string_view::npos) file.remove_prefix(cut + 1);
  return absl::StrCat(std::string(file), ":", where.line());
}

using JsonOut = rapidjson::Writer<rapidjson::StringBuffer>;

// A string as JSON: escaped by the writer, and with every byte that is not UTF-8 replaced.
void JsonString(JsonOut& out, std::string_view text) {
  if (IsValidUtf8(text)) {
    out.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
    return;
  }
  const std::string valid = ToValidUtf8(text);
  out.String(valid.data(), static_cast<rapidjson::SizeType>(valid.size()));
}

void JsonField(JsonOut& out, const LogField& field) {
  JsonString(out, field.key);
  switch (field.kind) {
    case LogField::Kind::kString:
      JsonString(out, field.text);
      return;
    case LogField::Kind::kInt:
      out.Int64(field.number);
      return;
    case LogField::Kind::kObject:
      out.StartObject();
      out.Key("name");
      JsonString(out, field.text);
      if (!field.namespace_name.empty()) {
        out.Key("namespace");
        JsonString(out, field.namespace_name);
      }
      out.EndObject();
      return;
  }
}

std::string JsonLine(const Record& record, absl::Time now) {
  rapidjson::StringBuffer buffer;
  JsonOut out(buffer);
  out.StartObject();
  out.Key("ts");
  out.Double(static_cast<double>(absl::ToUnixMicros(now)) / 1e6);
  out.Key("caller");
  JsonString(out, Caller(record.where));
  out.Key("msg");
  JsonString(out, record.message);
  if (record.severity != Severity::kError) {
    out.Key("v");
    out.Int(record.verbosity);
  }
  out.Key("level");
  JsonString(out, LevelName(record.severity));
  for (const LogField& field : record.fields) JsonField(out, field);
  if (record.severity == Severity::kError) {
    out.Key("err");
    JsonString(out, record.error);
  }
  out.EndObject();
  std::string line(buffer.GetString(), buffer.GetSize());
  line.push_back('\n');
  return line;
}

std::string TextLine(const Record& record, absl::Time now) {
  const std::string timestamp = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", now, absl::UTCTimeZone());
  std::string line;
  line.reserve(timestamp.size() + record.message.size() + record.error.size() + 8);
  line.append(Letter(record.severity)).append(" ").append(timestamp).append(" ");
  line.append(record.message);
  if (record.severity == Severity::kError) line.append(": ").append(record.error);
  line.append("\n");
  return line;
}

void Log(const Record& record) {
  // Formatted before taking the lock so the critical section is one write.
  const absl::Time now = absl::Now();
  const std::string line = Format().load(std::memory_order_relaxed) == LogFormat::kJson
                               ? JsonLine(record, now)
                               : TextLine(record, now);
  std::lock_guard<std::mutex> lock(LogMutex());
  if (Sink()) {
    if (record.severity == Severity::kError) {
      Sink()(Letter(record.severity),
             absl::StrCat(std::string(record.message), ": ", std::string(record.error)));
    } else {
      Sink()(Letter(record.severity), record.message);
    }
    return;
  }
  if (LineSink()) {
    LineSink()(line);
    return;
  }
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

void SetLogFormat(LogFormat format) { Format().store(format, std::memory_order_relaxed); }
LogFormat CurrentLogFormat() { return Format().load(std::memory_order_relaxed); }

LogField KObjFromKey(std::string_view key, std::string_view namespaced_name) {
  const size_t slash = namespaced_name.find('/');
  if (slash == std::string_view::npos) return KObj(key, "", namespaced_name);
  return KObj(key, namespaced_name.substr(0, slash), namespaced_name.substr(slash + 1));
}

void LogWarning(std::string_view message, LogFields fields, SourceLocation where) {
  Log({.severity = Severity::kWarning, .message = message, .fields = fields, .where = where});
}

void LogInfo(std::string_view message, LogFields fields, SourceLocation where) {
  Log({.severity = Severity::kInfo, .message = message, .fields = fields, .where = where});
}

void LogError(std::string_view message, std::string_view error, LogFields fields,
              SourceLocation where) {
  Log({.severity = Severity::kError,
       .message = message,
       .error = error,
       .fields = fields,
       .where = where});
}

void SetVerbosity(int level) { verbosity_level.store(level, std::memory_order_relaxed); }
int Verbosity() { return verbosity_level.load(std::memory_order_relaxed); }

void LogV(int level, std::string_view message, LogFields fields, SourceLocation where) {
  if (!V(level)) return;
  Log({.severity = Severity::kInfo,
       .verbosity = level,
       .message = message,
       .fields = fields,
       .where = where});
}

ErrorLogStream::ErrorLogStream(std::string message, SourceLocation where)
    : std::ostream(nullptr), buffer_(std::move(message), where) {
  rdbuf(&buffer_);
}

ErrorLogStream::~ErrorLogStream() { buffer_.Emit(); }

void ErrorLogStream::Buffer::Emit() {
  if (line_.empty()) return;
  std::string_view error = line_;
  constexpr std::string_view kPrefix = "error: ";
  if (error.starts_with(kPrefix)) error.remove_prefix(kPrefix.size());
  LogError(message_, error, {}, where_);
  line_.clear();
}

ErrorLogStream::Buffer::int_type ErrorLogStream::Buffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  if (traits_type::to_char_type(c) == '\n') {
    Emit();
  } else {
    line_.push_back(traits_type::to_char_type(c));
  }
  return c;
}

int ErrorLogStream::Buffer::sync() {
  Emit();
  return 0;
}

void SetLogSinkForTesting(LogSink sink) {
  std::lock_guard<std::mutex> lock(LogMutex());
  Sink() = std::move(sink);
}

void SetLogLineSinkForTesting(LogLineSink sink) {
  std::lock_guard<std::mutex> lock(LogMutex());
  LineSink() = std::move(sink);
}

}  // namespace kubesched::util

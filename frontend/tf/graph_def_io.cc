#include "frontend/tf/graph_def_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>

#include "ir/file_util.h"

namespace dlc::tf::detail {

namespace {

/// Collects the text parser's messages instead of letting protobuf log them.
class TextErrors : public google::protobuf::io::ErrorCollector {
public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string &message) override {
    if (first_.empty())
      first_ = fmt::format("line {}, column {}: {}", line + 1, column + 1, message);
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string &) override {}
  const std::string &first() const { return first_; }

private:
  std::string first_;
};

/// While alive, protobuf's log messages (it logs a string field that is not UTF-8 to stderr
/// before failing the parse) are kept for the error instead of printed.
class CaptureProtobufLog {
public:
  CaptureProtobufLog() : previous_(google::protobuf::SetLogHandler(&handle)) { first().clear(); }
  ~CaptureProtobufLog() { google::protobuf::SetLogHandler(previous_); }
  static std::string &first() {
    static std::string message;
    return message;
  }

private:
  static void handle(google::protobuf::LogLevel, const char *, int, const std::string &message) {
    if (first().empty())
      first() = message;
  }
  google::protobuf::LogHandler *previous_;
};

} // namespace

Expected<tfproto::GraphDef> parseGraphDef(std::string_view bytes, bool text,
                                          const std::string &displayName) {
  tfproto::GraphDef graph;
  if (text) {
    google::protobuf::TextFormat::Parser parser;
    TextErrors errors;
    parser.RecordErrorsTo(&errors);
    if (!parser.ParseFromString(std::string(bytes), &graph))
      return invalidArgument("{}: not a valid text GraphDef: {}", displayName, errors.first());
    return graph;
  }
  if (bytes.size() > static_cast<size_t>(INT32_MAX))
    return invalidArgument("{}: {} bytes is more than a protobuf message can hold (2 GiB); "
                           "TensorFlow cannot write such a GraphDef either",
                           displayName, bytes.size());
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t *>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT32_MAX);
  CaptureProtobufLog log;
  if (!graph.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    std::string why = CaptureProtobufLog::first();
    return invalidArgument("{}: not a valid GraphDef: the protobuf data is truncated or corrupt "
                           "({} bytes){}",
                           displayName, bytes.size(), why.empty() ? "" : ": " + why);
  }
  return graph;
}

Expected<std::string> readFileBytes(const std::string &path) {
  if (Status regular = checkRegularFile(path); !regular.isOk())
    return regular.withContext(path);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return notFound("{}: cannot open file: {}", path, std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    return unavailable("{}: read error", path);
  return std::move(ss).str();
}

} // namespace dlc::tf::detail

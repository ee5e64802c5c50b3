#include "tools/dlc/run_util.h"

#include <cmath>

#include "frontend/onnx/tensor_file.h"
#include "runtime/tensor_io.h"

namespace dlc::tool {

namespace {

bool endsWith(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string valueStr(const Tensor &t, int64_t i) {
  if (t.dtype() == DType::kBool)
    return t.elementAsInt64(i) ? "true" : "false";
  if (isFloat(t.dtype()))
    return fmt::format("{:.6g}", t.elementAsDouble(i));
  if (t.dtype() == DType::kU64)
    return fmt::format("{}", static_cast<uint64_t>(t.elementAsInt64(i)));
  return fmt::format("{}", t.elementAsInt64(i));
}

} // namespace

Expected<Tensor> readTensorFile(const std::string &path) {
  if (endsWith(path, ".npy"))
    return readNpy(path);
  if (endsWith(path, ".pb"))
    return onnx::readTensorProtoFile(path);
  return invalidArgument("{}: unknown tensor file type (expected .npy or .pb)", path);
}

std::string outputFileName(const std::string &outputName, std::set<std::string> &taken) {
  std::string base;
  for (char c : outputName)
    base +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  if (base.find_first_not_of('.') == std::string::npos)
    base = "_" + base;
  std::string name = base;
  for (int i = 1; taken.count(name); ++i)
    name = fmt::format("{}_{}", base, i);
  taken.insert(name);
  return name;
}

std::string summarizeTensor(const Tensor &t, int maxValues) {
  std::string s = t.type().str();
  int64_t n = t.numElements();
  if (n == 0)
    return s + " (no elements)";
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t nans = 0, counted = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = t.elementAsDouble(i);
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    ++counted;
  }
  if (counted > 0)
    s += fmt::format(" min {:.6g} max {:.6g} mean {:.6g}", lo, hi, sum / counted);
  if (nans > 0)
    s += fmt::format(" ({} NaN)", nans);
  s += " [";
  for (int64_t i = 0; i < n && i < maxValues; ++i)
    s += (i ? ", " : "") + valueStr(t, i);
  return s + (n > maxValues ? ", ...]" : "]");
}

Expected<std::pair<std::string, std::string>>
splitAssignment(const std::string &text, const std::string &flag, const std::string &valueWord) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return invalidArgument("{} '{}': expected NAME={}", flag, text, valueWord);
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

} // namespace dlc::tool

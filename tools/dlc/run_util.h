// Helpers of `dlc run`: tensor files by extension, output file names, one-line summaries.
#pragma once

#include <map>
#include <set>
#include <string>

#include "ir/tensor.h"

namespace dlc::tool {

/// Reads `.npy` (runtime/tensor_io.h) or `.pb` (an ONNX TensorProto) by the file's extension.
Expected<Tensor> readTensorFile(const std::string &path);

/// A file name for an output name: characters outside [A-Za-z0-9._-] become `_`, an empty
/// or dot-only name gets a leading `_`; a name already in `taken` gets `_1`, `_2`, ...
/// appended. The result (without `.npy`) is added to `taken`.
std::string outputFileName(const std::string &outputName, std::set<std::string> &taken);

/// `f32[2,3] min -0.5 max 0.9 mean 0.1 [0.1, 0.2, 0.3, ...]`: type, statistics (NaNs counted
/// apart) and up to `maxValues` leading values.
std::string summarizeTensor(const Tensor &t, int maxValues = 6);

/// Splits `NAME=VALUE` (at the first `=`); an error names the flag.
Expected<std::pair<std::string, std::string>>
splitAssignment(const std::string &text, const std::string &flag, const std::string &valueWord);

} // namespace dlc::tool

// `dlc inspect` of a model library (`dlc compile -o model.so`) or a raw package.
#pragma once

#include <string>

#include "ir/status.h"

namespace dlc::tool {

/// Whether `path` starts like an ELF file or a dlc package (not an ONNX model).
bool looksLikeModelLibrary(const std::string &path);

/// Prints what the library holds: interface, writer, dim ranges, graph and GPU programs.
Status inspectModelLibrary(const std::string &path, bool json);

} // namespace dlc::tool

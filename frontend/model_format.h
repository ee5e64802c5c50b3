// Which frontend reads a model file: decided by content, with the user's override.
//
// `.pb` is ambiguous (ONNX models and TensorFlow GraphDefs both use it), so the bytes decide:
// an ONNX ModelProto starts with field 1 (ir_version) as a varint, a GraphDef with field 1
// (node) as a length-delimited NodeDef. Text is dlc's IR when it starts with `graph` or a `//`
// comment, a text GraphDef when it starts with `node`, `versions` or `library` (after
// comments). The extension is a tie-breaker only for files too short to judge.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ir/status.h"

namespace dlc {

enum class ModelFormat { kOnnx, kTfGraphDef, kTfText, kDlcText };

/// "onnx", "tf" (binary or text GraphDef), "dlc".
std::string_view modelFormatName(ModelFormat f);

/// Parses `--format`: onnx, tf (binary GraphDef, or text when the file is text), dlc; ""
/// means detect.
Expected<std::optional<ModelFormat>> parseModelFormatFlag(std::string_view flag);

/// The format of `path`: `forced` when given (tf on a text file means a text GraphDef), else
/// from the content. A file that is none of them gets an error saying what it looked like.
Expected<ModelFormat> detectModelFormat(const std::string &path,
                                        std::optional<ModelFormat> forced = std::nullopt);

} // namespace dlc

// Einsum equations: parsing ("ij,jk->ik", "...ij,...jk", implicit outputs) and the output
// shape they give.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/shape.h"
#include "ir/status.h"

namespace dlc::ops {

/// One subscript term: its letters in order and where "..." sits among them.
struct EinsumTerm {
  std::string labels;
  int ellipsis = -1; // index into labels before which "..." stands; -1 if none
};

struct EinsumEquation {
  std::vector<EinsumTerm> inputs;
  std::optional<EinsumTerm> output; // nullopt: implicit ("ij,jk" without "->")
};

/// Parses an equation; spaces are ignored. Error on characters other than letters, ',', "->"
/// and "...", and on more than one ellipsis in a term.
Expected<EinsumEquation> parseEinsum(std::string_view equation);

/// Output shape of `equation` applied to operands of the given shapes. Labels must agree in
/// size across operands (a size of 1 broadcasts, as does the ellipsis part); the implicit
/// output is the ellipsis followed by the labels used once, in alphabetical order.
Expected<Shape> einsumShape(std::string_view equation, const std::vector<Shape> &inputs);

} // namespace dlc::ops

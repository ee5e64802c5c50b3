#include "ir/ops/einsum.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

Expected<EinsumTerm> parseTerm(std::string_view t, std::string_view equation) {
  EinsumTerm term;
  for (size_t i = 0; i < t.size();) {
    char c = t[i];
    if (std::isalpha(static_cast<unsigned char>(c))) {
      term.labels += c;
      ++i;
    } else if (c == '.') {
      if (t.substr(i, 3) != "...")
        return invalidArgument("malformed ellipsis in einsum equation '{}'", equation);
      if (term.ellipsis >= 0)
        return invalidArgument("term '{}' of einsum equation '{}' has more than one ellipsis", t,
                               equation);
      term.ellipsis = static_cast<int>(term.labels.size());
      i += 3;
    } else {
      return invalidArgument("invalid character '{}' in einsum equation '{}'", c, equation);
    }
  }
  return term;
}

/// Records size `d` for label `c`; sizes must agree, except that 1 broadcasts.
Status mergeLabel(std::map<char, Dim> &dims, char c, const Dim &d) {
  auto [it, inserted] = dims.emplace(c, d);
  Dim &cur = it->second;
  if (inserted || cur == d || (d.isKnown() && d.value() == 1))
    return Status::ok();
  if (cur.isKnown() && cur.value() == 1) {
    cur = d;
    return Status::ok();
  }
  if (cur.isKnown() && d.isKnown())
    return invalidArgument("einsum label '{}' has sizes {} and {}", c, cur.value(), d.value());
  if (!cur.isKnown() && d.isKnown())
    cur = d;
  return Status::ok();
}

} // namespace

Expected<EinsumEquation> parseEinsum(std::string_view equation) {
  std::string s;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c)))
      s += c;
  EinsumEquation eq;
  size_t arrow = s.find("->");
  std::string_view lhs(s), rhs;
  if (arrow != std::string::npos) {
    lhs = std::string_view(s).substr(0, arrow);
    rhs = std::string_view(s).substr(arrow + 2);
  }
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    std::string_view t = lhs.substr(start, comma == std::string::npos ? lhs.npos : comma - start);
    DLC_ASSIGN_OR_RETURN(EinsumTerm term, parseTerm(t, equation));
    eq.inputs.push_back(std::move(term));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    DLC_ASSIGN_OR_RETURN(EinsumTerm out, parseTerm(rhs, equation));
    eq.output = std::move(out);
  }
  return eq;
}

Expected<Shape> einsumShape(std::string_view equation, const std::vector<Shape> &inputs) {
  DLC_ASSIGN_OR_RETURN(EinsumEquation eq, parseEinsum(equation));
  if (eq.inputs.size() != inputs.size())
    return invalidArgument("einsum equation '{}' has {} input terms for {} inputs", equation,
                           eq.inputs.size(), inputs.size());
  std::map<char, Dim> labelDims;
  std::map<char, int> counts;
  Shape ellipsisShape; // broadcast of every operand's ellipsis part
  bool anyEllipsis = false, ellipsisUnknown = false;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const EinsumTerm &term = eq.inputs[k];
    int64_t n = static_cast<int64_t>(term.labels.size());
    for (char c : term.labels)
      ++counts[c];
    anyEllipsis |= term.ellipsis >= 0;
    const Shape &s = inputs[k];
    if (!s.isRanked()) {
      ellipsisUnknown |= term.ellipsis >= 0;
      continue;
    }
    if (term.ellipsis < 0 && s.rank() != n)
      return invalidArgument("einsum input {} has rank {} but its term '{}' has {} labels", k,
                             s.rank(), term.labels, n);
    if (term.ellipsis >= 0 && s.rank() < n)
      return invalidArgument("einsum input {} has rank {} but its term needs at least {}", k,
                             s.rank(), n);
    int64_t e = s.rank() - n; // dims covered by the ellipsis
    int64_t pos = term.ellipsis >= 0 ? term.ellipsis : n;
    for (int64_t j = 0; j < n; ++j)
      DLC_RETURN_IF_ERROR(
          mergeLabel(labelDims, term.labels[static_cast<size_t>(j)], s[j < pos ? j : j + e]));
    if (term.ellipsis >= 0) {
      Shape part(std::vector<Dim>(s.dims().begin() + pos, s.dims().begin() + pos + e));
      auto b = broadcastShapes(ellipsisShape, part);
      if (!b)
        return invalidArgument("einsum input {}: ellipsis dims {} do not broadcast with {}", k,
                               part.str(), ellipsisShape.str());
      ellipsisShape = std::move(*b);
    }
  }

  EinsumTerm out;
  if (eq.output) {
    out = *eq.output;
    for (size_t j = 0; j < out.labels.size(); ++j) {
      char c = out.labels[j];
      if (!counts.count(c))
        return invalidArgument("einsum output label '{}' does not appear in any input", c);
      if (out.labels.find(c) != j)
        return invalidArgument("einsum label '{}' appears more than once in the output", c);
    }
  } else {
    for (const auto &[c, count] : counts) // std::map: alphabetical (ASCII) order
      if (count == 1)
        out.labels += c;
    out.ellipsis = anyEllipsis ? 0 : -1;
  }

  if (out.ellipsis < 0 && ellipsisShape.rank() > 0)
    return invalidArgument("einsum output has no '...' but the inputs' ellipsis covers {} dims",
                           ellipsisShape.rank());
  if (out.ellipsis >= 0 && ellipsisUnknown)
    return Shape::unranked();
  std::vector<Dim> dims;
  for (size_t j = 0; j <= out.labels.size(); ++j) {
    if (static_cast<int>(j) == out.ellipsis)
      dims.insert(dims.end(), ellipsisShape.dims().begin(), ellipsisShape.dims().end());
    if (j == out.labels.size())
      break;
    auto it = labelDims.find(out.labels[j]);
    dims.push_back(it == labelDims.end() ? Dim::unknown() : it->second);
  }
  return Shape(std::move(dims));
}

} // namespace dlc::ops

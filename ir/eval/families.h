// The rows of the reference-kernel table, one list per family (the families of
// ir/ops/families.h). Each returns the (op, kernel) pairs of its family; eval.cc gathers them
// into the table and checks that no op has two rows.
#pragma once

#include <vector>

#include "ir/eval/eval.h"

namespace dlc::eval {

struct EvalRow {
  Op op;
  EvalFn fn;
};

std::vector<EvalRow> elementwiseEvals(); // elementwise_eval.cc
std::vector<EvalRow> reductionEvals();   // reduce_eval.cc
std::vector<EvalRow> nnEvals();          // nn_eval_util.cc
std::vector<EvalRow> linalgEvals();      // matmul_eval.cc
std::vector<EvalRow> tensorEvals();      // tensor_eval.cc
std::vector<EvalRow> quantEvals();       // quant_eval.cc
std::vector<EvalRow> miscEvals();        // misc_eval.cc
std::vector<EvalRow> controlFlowEvals(); // control_flow_eval.cc

/// Every row of every family, in family order (for the table and its tests).
std::vector<EvalRow> allEvalRows();

} // namespace dlc::eval
